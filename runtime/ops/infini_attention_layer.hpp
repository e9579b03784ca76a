#pragma once
// One Infini-attention layer on the device (docs/design.md §1, §4.3): RoPE, causal attention inside
// the segment, the memory read fused with the gate, and the per-segment memory write. The layer
// owns the stream state (M, z and the open segment's K/V cache, all sized by the segment length,
// never by the stream length) and records its work into a caller's command stream.
//
// A sliding context (InfiniOptions::sliding, memory off; docs/design.md §1.4) is a segment that
// never ends. Its cache holds C + min(C, 256) rows: the sinks at rows 0..S-1 and the rest of the
// stream in order after them, each key rotated at its row. A query at row p scores the window's
// keys (rows p-C+S+1..p) rotated at p and the sinks with a second copy of itself rotated at
// min(p, C-1): exactly the distances of StreamingLLM's positions within the context, which only
// differences enter. When the cache fills, its last C-S-1 rows move back behind the sinks (raw K
// and V copied, K rotated again from the raw rows, so no rounding accumulates): once every
// min(C, 256) + 1 tokens, not once per token.
#include <array>
#include <optional>
#include <string_view>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "infini/attention_options.hpp"
#include "ops/layer_snapshot.hpp"
#include "ops/memory_kernels.hpp"
#include "infini/element_type.hpp"
#include "vk/buffer.hpp"
#include "vk/command_stream.hpp"

namespace infini::vk {
class Device;
struct Pipeline;
}  // namespace infini::vk

namespace infini::ops {

// Rows `token0 ..` of a [tokens][heads][dim] tensor in a device buffer.
struct TokenRows {
  const vk::Buffer* buffer = nullptr;
  uint32_t token0 = 0;
};

// Which causal-attention kernel runs. Tiled (attention_segment.comp) shares tiles through shared
// memory, as GPUs like; Rows (attention_rows.comp) keeps whole rows in registers and touches no
// shared memory, as CPU drivers like. Auto picks Rows on CPU devices when D and Dv are multiples
// of 4, else Tiled. Pieces of 1-2 tokens (decode) split the keys instead of the rows: with Rows
// over the lanes of a workgroup (attention_split.comp), with Tiled over many workgroups whose
// partial results are then merged (attention_decode.comp), so that all of a GPU's cores read the
// cache. All give the same result up to summation order.
// Matrix (attention_coopmat.comp) is Tiled on matrix units (cooperative matrices): Q K^T and P V on
// 16 x 16 f16 fragments, the softmax in f32, for D a multiple of 16 and Dv of 32 whose tiles fit
// shared memory; decode pieces still split the keys as Tiled does. Auto picks it on GPUs with
// matrix units (ops/matrix_units.hpp) where the shape allows. MatrixEmulated is the same kernel
// with emulated fragments, slow, for tests on devices without them. Q, K, P and V are rounded to
// f16, so these two match the others to f16 accuracy, not summation order.
enum class AttentionKernel { Auto, Tiled, Rows, Matrix, MatrixEmulated };
const char* attention_kernel_name(AttentionKernel kernel);  // "auto", "tiled", "rows", "coopmat", ...
std::optional<AttentionKernel> attention_kernel_named(std::string_view name);

// The rows of a layer's cache for these options: the segment, or a sliding context's C + min(C, 256).
uint32_t cache_rows(const InfiniOptions& options);
// segment_room() just after a piece fills the cache: a whole segment, or a slid context's room.
uint32_t room_after_fill(const InfiniOptions& options);

class InfiniAttentionLayer {
 public:
  // `input` is the storage type of Q, K and V. Throws infini::Error on shapes or options that
  // do not fit (Hq % Hkv, head dims, RoPE settings, device limits).
  // `max_tokens`: the most tokens one record() takes (sizes the query scratch; 0: the whole cache).
  InfiniAttentionLayer(vk::Device& device, const AttentionShape& shape, const InfiniOptions& options, ElementType input,
                       std::span<const float> beta, AttentionKernel kernel = AttentionKernel::Auto,
                       uint32_t max_tokens = 0);
  ~InfiniAttentionLayer();

  // Records `tokens` tokens (at most segment_room()) of Q [.][Hq][D], K [.][Hkv][D],
  // V [.][Hkv][Dv]; writes A [tokens][Hq][Dv] f32 to `out` from row 0. When the segment fills,
  // its memory write is recorded too. State bookkeeping advances at record time.
  //
  // The kernels read the open segment's length from the first 32-bit word of a buffer. Without
  // `position` the layer records a write of open_tokens() into a buffer of its own. With it, the
  // caller puts the length there before each submission, and the recording is valid from any
  // state with the same (tokens, whether the piece fills the segment, whether segments_written()
  // is 0): a model replays one recording for every position of a decode.
  void record(vk::CommandStream& stream, TokenRows q, TokenRows k, TokenRows v, const vk::Buffer& out,
              uint32_t tokens, const vk::Buffer* position = nullptr);
  // Advances the state exactly as record() of `tokens` tokens would, without recording: for a
  // caller that replays a command buffer recorded earlier from an equivalent state (see record()).
  void advance(uint32_t tokens);
  // Forgets the last `tokens` tokens of the open segment (at most open_tokens()), as if they had
  // never been fed: the open length goes back and the cache rows past it are overwritten by the
  // next tokens. Only the open segment can be taken back (a written memory cannot), so greedy
  // decoding ahead on the device (exec/layer_stage.hpp) never fills a segment. Throws beyond it,
  // and, in a context that has slid, below C-1 rows (the keys the window would need again are gone).
  void take_back(uint32_t tokens);
  // Records the memory write of a partly filled segment (the end of a stream).
  void record_finish(vk::CommandStream& stream);
  // Copies the state to the host / back. The device must be idle (no recorded work pending).
  // restore() throws infini::Error, changing nothing, when the sizes do not fit this layer.
  LayerSnapshot snapshot() const;
  void restore(const LayerSnapshot& state);
  // Whether restore() would accept `state` (open count and every size).
  bool fits(const LayerSnapshot& state) const;
  // Whether decode pieces (1-2 tokens) do their RoPE and cache append, and the merge of the split
  // keys, inside the attention's pass (the tiled family, which GPUs decode with; f16 inputs need
  // rows of K and V that fill whole words), saving two launches and barriers per piece. On by
  // default; off keeps them separate steps, to measure what that saves. The results are the same.
  // A memory of rotated q/k (MemoryPositions::Rotated) keeps them apart: the fused pass reads raw Q.
  bool fuses_decode_steps() const noexcept {
    return attention_decode_merged_ && fuse_decode_steps_ &&
           !(options_.memory && options_.memory_positions == MemoryPositions::Rotated);
  }
  void fuse_decode_steps(bool on) noexcept { fuse_decode_steps_ = on; }
  // Zeroes M and z and empties the open segment.
  void record_reset(vk::CommandStream& stream);

  uint32_t segment_room() const noexcept { return rows_ - open_; }
  bool sliding() const noexcept { return options_.sliding; }
  uint32_t open_tokens() const noexcept { return open_; }
  int64_t segments_written() const noexcept { return segments_written_; }
  const vk::Buffer& memory() const noexcept { return m_; }  // M [Hkv][D][Dv] f32
  const vk::Buffer& norm() const noexcept { return z_; }    // z [Hkv][D] f32
  const AttentionShape& shape() const noexcept { return shape_; }
  ElementType input_type() const noexcept { return input_; }
  AttentionKernel attention_kernel() const noexcept { return kernel_; }
  MemoryKernel memory_kernel() const noexcept;  // follows the attention kernel (ops/memory_kernels.hpp)

 private:
  void record_memory_write(vk::CommandStream& stream, uint32_t tokens);
  void record_slide(vk::CommandStream& stream);  // a full sliding context's window back behind its sinks

  vk::Device& device_;
  AttentionShape shape_;
  InfiniOptions options_;
  ElementType input_;
  uint32_t segment_;  // N, or a sliding context's C
  uint32_t rows_;     // of the cache: cache_rows(options_)
  uint32_t max_tokens_;  // per record()
  rope::RopeFrequencies freqs_;
  uint32_t rotary_dim_ = 0;
  uint32_t open_ = 0;
  int64_t segments_written_ = 0;

  vk::Buffer rope_table_, beta_, m_, z_;
  vk::Buffer cache_k_, cache_v_, cache_kr_;  // the open segment: raw K, V (input type), rotated K (f32)
  vk::Buffer qr_, w_;                        // scratch: rotated Q, delta-rule residual
  vk::Buffer qs_;                            // scratch of a sliding context: Q rotated for the sinks
  vk::Buffer position_;                      // open_ when record() is given no position buffer
  vk::Buffer sinks_position_;                // a sliding context's S: where the window moves back to

  const vk::Pipeline* rope_;
  const vk::Pipeline* append_;
  const vk::Pipeline* attention_;
  const vk::Pipeline* attention_split_ = nullptr;  // Rows kernel family: decode of 1-2 rows
  const vk::Pipeline* attention_decode_ = nullptr;  // Tiled kernel family: decode of 1-2 rows,
  const vk::Pipeline* attention_merge_ = nullptr;   // split over workgroups, then merged
  const vk::Pipeline* attention_merge_gate_ = nullptr;  // the same with the memory's read and gate
  // Decode with the piece's RoPE and append and the merge in the last workgroup of each head,
  const vk::Pipeline* attention_decode_merged_ = nullptr;
  const vk::Pipeline* attention_decode_merged_gate_ = nullptr;  // with the memory's read and gate
  std::unique_ptr<vk::Buffer> arrivals_;                        // their count of finished workgroups
  bool fuse_decode_steps_ = true;
  std::unique_ptr<vk::Buffer> decode_parts_;
  uint32_t decode_splits_ = 0, decode_keys_per_split_ = 0;
  std::unique_ptr<MemoryKernels> memory_;
  AttentionKernel kernel_ = AttentionKernel::Tiled;
  uint32_t attention_rows_ = 0;  // query rows per workgroup of the chosen kernel
};

}  // namespace infini::ops
