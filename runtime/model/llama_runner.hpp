#pragma once
// A Llama-family model on the device, its attention layers Infini-attention layers: the forward
// pass of DESIGN.md section 2 (embedding, RMSNorm, Q/K/V projections, InfiniAttentionLayer, output
// projection, SwiGLU feed-forward, final norm, logits). Weights are uploaded once. Tokens are fed
// in pieces that never cross a segment boundary, so prefill of T tokens and any split of the same
// tokens (down to one at a time) give the same logits. Device memory depends on the model, the
// segment length and the piece size, never on how many tokens have been fed.
#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <span>
#include <vector>

#include "infini/attention_options.hpp"
#include "model/llama_weights.hpp"
#include "ops/infini_attention_layer.hpp"
#include "ops/matmul.hpp"
#include "ops/row_chunks.hpp"
#include "vk/command_stream.hpp"
#include "stream/session_state.hpp"
#include "vk/buffer.hpp"

namespace infini::vk {
class Device;
}

namespace infini::model {

struct RunnerOptions {
  InfiniOptions infini;          // segment, update rule, conventions, memory on/off (rope: the model's)
  uint32_t max_piece = 256;      // most tokens recorded in one submission (bounds scratch memory)
  ops::AttentionKernel kernel = ops::AttentionKernel::Auto;
};

// What the memory does for a file: Auto = on iff the file has the Infini keys.
enum class MemoryChoice { Auto, On, Off };

// The stream options a file asks for, with the caller's overrides: a file with Infini keys runs
// with its own conventions and segment length; a plain Llama file with memory off and segments of
// kPlainSegment unless `segment` (> 0) says otherwise.
inline constexpr int64_t kPlainSegment = 2048;
RunnerOptions resolve_runner_options(const LlamaConfig& config, MemoryChoice memory, int64_t segment,
                                     uint32_t max_piece);

class LlamaRunner {
 public:
  // Checks the weights (check_llama_weights) and uploads them. The host views may be released
  // afterwards. Throws infini::Error on a bad model or a device limit.
  LlamaRunner(vk::Device& device, const LlamaWeights& weights, const RunnerOptions& options);
  ~LlamaRunner();

  // Feeds the next tokens of the stream. Returns logits [tokens.size()][vocab] when all_logits,
  // else those of the last token only ([vocab]). A token id outside the vocabulary throws before
  // anything is fed.
  std::vector<float> forward(std::span<const int32_t> tokens, bool all_logits);
  // Back to the start of a stream (memory, open segments, token count).
  void reset();
  // The whole stream state, and back. restore_state throws infini::Error, changing nothing, when
  // the state belongs to another model, segment length or convention.
  stream::SessionState save_state() const;
  void restore_state(const stream::SessionState& state);
  stream::StateFingerprint fingerprint() const;

  int64_t tokens_seen() const noexcept { return tokens_seen_; }
  // Command buffers recorded so far, one per distinct piece shape; replayed when the shape recurs.
  size_t recorded_pieces() const noexcept { return recorded_.size(); }
  const LlamaConfig& config() const noexcept { return config_; }
  const RunnerOptions& options() const noexcept { return options_; }

 private:
  struct Layer;
  struct Kernels;
  struct Scratch;
  void run_piece(std::span<const int32_t> tokens, bool all_logits, float* logits);

  vk::Device& device_;
  LlamaConfig config_;
  RunnerOptions options_;
  std::unique_ptr<Kernels> kernels_;
  std::vector<Layer> layers_;
  ops::RowChunks token_embd_;
  vk::Buffer output_norm_;
  std::unique_ptr<ops::RowChunks> output_;  // null when tied to token_embd
  DType embd_type_, output_type_;
  std::unique_ptr<Scratch> scratch_;  // activations of one piece of at most max_piece tokens
  std::unique_ptr<vk::CommandStream> stream_;  // for reset() and for shapes past the cache's capacity
  // A piece's commands depend only on (open tokens, piece tokens, first segment?, logits rows):
  // recorded once per such shape and replayed for every segment where it recurs, so a steady
  // stream creates no pipelines, descriptor sets or buffers.
  using PieceShape = std::tuple<uint32_t, uint32_t, bool, uint32_t>;
  std::map<PieceShape, std::unique_ptr<vk::CommandStream>> recorded_;
  std::unique_ptr<ops::Matmul> logits_matmul_;
  int64_t tokens_seen_ = 0;
};

}  // namespace infini::model
