#pragma once
// A Llama-family model on the device, its attention layers Infini-attention layers: the forward
// pass of docs/design.md §3.1 (embedding, RMSNorm, Q/K/V projections, InfiniAttentionLayer, output
// projection, SwiGLU feed-forward, final norm, logits). Weights are uploaded once. Tokens are fed
// in pieces that never cross a segment boundary, so prefill of T tokens and any split of the same
// tokens (down to one at a time) give the same logits. Device memory depends on the model, the
// segment length and the piece size, never on how many tokens have been fed.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "infini/attention_options.hpp"
#include "infini/model.hpp"
#include "graph/graph_options.hpp"
#include "graph/kernel_tuning.hpp"
#include "model/llama_weights.hpp"
#include "sampling/sampler.hpp"
#include "ops/infini_attention_layer.hpp"
#include "ops/matmul.hpp"
#include "exec/handoff.hpp"
#include "exec/layer_stage.hpp"
#include "exec/stage_pipeline.hpp"
#include "vk/command_stream.hpp"
#include "formats/session_state.hpp"
#include "vk/buffer.hpp"

namespace infini::vk {
class Device;
class SharedSignal;
}

namespace infini::model {

// How a model runs: its graph's kernels and stream (GraphOptions), and how pieces are executed.
struct RunnerOptions : GraphOptions {
  uint32_t max_piece = kDefaultMaxPiece;  // most tokens recorded in one submission (bounds scratch memory)
  // Times every kernel of every piece (dispatch_profile()): serialises the kernels, so a profile's
  // run is not one to take throughput from.
  bool time_kernels = false;
  // Most tokens greedy decoding feeds per submission (LlamaRunner::forward_greedy), 1 to
  // LayerStage::kMaxChain; 0: the device's choice (auto_decode_chain).
  uint32_t decode_chain = 0;
  Handoff handoff = Handoff::Auto;  // between the devices of a pipeline (exec/handoff.hpp)
  HandoffWait handoff_wait = HandoffWait::Auto;  // who orders each hand-off: the host or the GPU
  // Most sessions of a model on one device that decode together in one batched step
  // (exec/step_batcher.hpp); 1: none do.
  uint32_t max_batch = kDefaultMaxBatch;
  // How the prefill pieces' matmul kernels are chosen (graph/kernel_tuning.hpp): Off keeps the
  // rules; a Model takes INFINI_TUNE (default auto).
  TuneMode tune = TuneMode::Off;
};

// The stream options a file asks for, with the caller's overrides: a file with Infini keys runs
// with its own conventions and segment length (`segment` > 0 overrides it); a plain file (no
// Infini keys, memory off) as a sliding context (InfiniOptions::sliding) of `context` tokens, else
// `segment`, else the file's context_length, keeping `sinks` sinks; an Infini file with memory off
// and a `context` too (its local attention alone, windowed). (runner_options.cpp)
RunnerOptions resolve_runner_options(const LlamaConfig& config, MemoryMode memory, int64_t segment,
                                     uint32_t max_piece, int64_t context = 0, int64_t sinks = kDefaultSinks);

// The device memory one token of a sliding context takes over all of a model's layers (its
// cache rows: raw K, rotated K and V, f32).
uint64_t context_token_bytes(const LlamaConfig& config);
// The device memory of a whole stream's state over all layers (the caches, M and z), the same at
// any stream length.
uint64_t stream_state_bytes(const LlamaConfig& config, const InfiniOptions& options);

// The device's choice of decode chain: 1 on CPU drivers (a submission and the host's wake-up
// cost nothing next to a token there); on GPUs, where they cost a good part of a small model's
// token, the longest chain (a power of two up to LayerStage::kMaxChain) whose tokens take at most
// kChainBurst at `token_seconds` a token, the last decode step's, so that streamed text never
// waits long for a burst (on a phone decoding 10 tokens a second, no chain); 1 before any.
inline constexpr double kChainBurst = 0.05;
uint32_t auto_decode_chain(bool cpu_driver, double token_seconds) noexcept;

class LlamaRunner {
 public:
  // Checks the weights (check_llama_weights) and uploads them. The host views may be released
  // afterwards. Throws infini::Error on a bad model or a device limit.
  LlamaRunner(vk::Device& device, const LlamaWeights& weights, const RunnerOptions& options);
  // The layers split over several devices in pipeline order, `layers_per_device[i]` on
  // devices[i] (empty: in proportion to each device's free device-local memory). Devices given no
  // layers are left out. Each device holds only its own layers' weights and memory state. With a
  // `cache` (the Model's), the weights are those copies every runner of the model shares, and an
  // empty split is the one the cache took first for these devices.
  LlamaRunner(std::span<vk::Device* const> devices, const LlamaWeights& weights, const RunnerOptions& options,
              std::span<const int64_t> layers_per_device = {}, DeviceWeightCache* cache = nullptr);
  ~LlamaRunner();

  // Feeds the next tokens of the stream. Returns logits [tokens.size()][vocab] when all_logits,
  // else those of the last token only ([vocab]). A token id outside the vocabulary throws before
  // anything is fed. On several devices the pieces of a long input run as a wavefront.
  std::vector<float> forward(std::span<const int32_t> tokens, bool all_logits);
  // The same, giving back only the k (1..ops::TopK::kMaxK) best logits of the last token with
  // their ids, ranked on the device (best first, ties to the lower id): what greedy and top-k
  // sampling need, without reading the whole row back.
  std::vector<ops::RankedLogit> forward_ranked(std::span<const int32_t> tokens, uint32_t k);
  // Greedy decoding ahead on the device, with no host round trip between tokens: feeds `first`,
  // then steps - 1 more tokens, each the best-ranked token of the logits before it (ties to the
  // lower id, as forward_ranked ranks), in one submission. Returns each step's best logit and
  // id, in order (the last id is not fed). The logits are those forward_ranked gives token by
  // token. steps: 1..chain_room() (several devices: with the token ring).
  std::vector<ops::RankedLogit> forward_greedy(int32_t first, uint32_t steps);
  // Sampled decoding ahead on the device: feeds `first`, then steps - 1 more
  // tokens, step i + 1's token drawn from step i's k best logits with `draws` (the host sampler's
  // settings and its uniforms[i]; ops::PickToken). Gives back those steps - 1 picks (a NaN logit
  // among them: that step's logits held one) and the last step's k best, from which the caller
  // draws the next token. steps: 1..chain_room() (several devices: with the token ring). k: 1..64,
  // or 0: each step draws from its whole row of logits (top-k off, top-p 1; ops::row_draw), and
  // the last step's row comes back instead of its k best.
  struct ChainPicks {
    std::vector<ops::RankedLogit> picks;  // picks[i]: the token step i + 1 was fed
    std::vector<ops::RankedLogit> last;   // the last step's k best, best first
    std::vector<float> last_row;          // k = 0: the last step's logits
  };
  ChainPicks forward_sampled(int32_t first, uint32_t steps, const ops::PickToken::Draws& draws, uint32_t k);
  // Whether chains can draw from this model's whole rows (k = 0): at most PickToken::kMaxRow logits.
  bool draws_rows_ahead() const noexcept;
  // Most steps a chain (forward_greedy, forward_sampled) takes now: decode_chain(), fewer near the
  // end of the open segment (a chain never fills it).
  uint32_t chain_room() const noexcept;
  // options().decode_chain, or where 0 auto_decode_chain for the device and the last decode
  // step's time; 0 on several devices without the token ring.
  uint32_t decode_chain() const noexcept;
  // Steps for the next chain of a decode wanting `wanted` more tokens: the largest power of
  // two within chain_room() and `wanted` (so that a stream replays a few recordings); 1: token
  // by token (forward_ranked) for now; 0 when `wanted` is.
  uint32_t chain_steps(int64_t wanted) const noexcept;
  // The same for a decode drawing with `sampler`, 1 where the device cannot make its draws
  // (Sampler::device_ranking, and whole rows only where they fit, draws_rows_ahead).
  uint32_t chain_steps(int64_t wanted, const Sampler& sampler) const noexcept;
  // Takes back the last `tokens` tokens of the last chain (fewer than its steps, and nothing fed
  // since): for a decode that stopped inside a chain. The last logits become those of the token
  // before them. Throws beyond that, changing nothing.
  void take_back(uint32_t tokens);
  // The last token's whole logits row after forward_ranked (read from the device). Throws when
  // nothing was fed since the start, reset() or restore_state().
  std::vector<float> last_logits() const;
  // Back to the start of a stream (memory, open segments, token count).
  void reset();
  // The whole stream state, and back; independent of how the layers are split over devices.
  // restore_state throws infini::Error, changing nothing, when the state belongs to another
  // model, segment length or convention.
  stream::SessionState save_state() const;
  void restore_state(const stream::SessionState& state);
  stream::StateFingerprint fingerprint() const;
  int64_t tokens_seen() const noexcept { return tokens_seen_; }
  // The stages in pipeline order, which batched steps (exec/batch_decoder.hpp) feed with other
  // streams' tokens, and the note that such a step fed one token to every stage.
  size_t stage_count() const noexcept { return stages_.size(); }
  LayerStage& stage(size_t i) const { return *stages_.at(i); }
  void took_batched_token() noexcept;
  // Command buffers recorded so far, one per distinct piece shape; replayed when the shape recurs.
  size_t recorded_pieces() const noexcept;
  // Where the time of the pieces run so far went, summed over the stages (see StageProfile).
  StageProfile profile() const noexcept;
  // The same per stage, in pipeline order, with the waits of the pieces handed to each (all zero
  // on one device, where nothing is handed over).
  std::vector<StageProfile> stage_profiles() const;
  std::vector<HandoffProfile> handoff_profiles() const;
  // Device time per kernel so far, summed over the stages, with RunnerOptions::time_kernels.
  vk::DispatchProfile dispatch_profile() const;
  const LlamaConfig& config() const noexcept { return config_; }
  const RunnerOptions& options() const noexcept { return options_; }
  // The devices in use and the layers each holds, in pipeline order.
  struct StageInfo {
    vk::Device* device;
    LayerRange layers;
  };
  std::vector<StageInfo> stages() const;
  // How hidden states pass from each stage to the next (one fewer than the stages; never Auto).
  const std::vector<Handoff>& handoffs() const noexcept { return handoffs_; }
  // Who orders each of them: the host, or the devices through a shared signal (never Auto).
  const std::vector<HandoffWait>& handoff_waits() const noexcept { return handoff_waits_; }
  // Busy intervals of each stage's device (see BusyInterval), recorded from now on while `on`;
  // timeline() returns and clears them, one list per stage.
  void record_timeline(bool on);
  std::vector<std::vector<BusyInterval>> timeline();

 private:
  void run(std::span<const int32_t> tokens, bool all_logits, uint32_t top_k, float* logits, uint32_t* ranked);

  LlamaConfig config_;
  RunnerOptions options_;
  std::vector<Handoff> handoffs_;
  std::vector<HandoffWait> handoff_waits_;
  std::vector<std::unique_ptr<vk::SharedBuffer>> shared_;  // the stages' shared slots; outlive them
  std::vector<std::unique_ptr<vk::SharedSignal>> signals_;  // their signals (device waits); outlive them too
  std::vector<std::unique_ptr<LayerStage>> stages_;
  std::unique_ptr<StagePipeline> pipeline_;  // several stages only
  std::vector<std::vector<BusyInterval>> timeline_;
  int64_t tokens_seen_ = 0;
  double token_seconds_ = 0;  // the host's time per token of the last decode step (0: none yet)
};

}  // namespace infini::model
