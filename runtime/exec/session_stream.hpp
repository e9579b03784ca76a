#pragma once
// One stream of a model on its devices, as infini::Session offers it (the public class is a facade
// over this): feeding with progress, generating (chains of tokens on the device where the runner
// offers them, whole rows on the host for penalties and log-probabilities), and the state saved
// and restored with the logits generation continues from.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "exec/llama_runner.hpp"
#include "exec/step_batcher.hpp"
#include "formats/session_state.hpp"
#include "infini/session.hpp"
#include "sampling/sampler.hpp"
#include "text/tokenizer.hpp"

namespace infini::model {

class SessionStream {
 public:
  // `tokens` gives the model's tokenizer (or throws the one-line reason it has none); `digest`
  // identifies the weights in saved states; the weights on the devices are `cache`'s shared copies.
  // With `batchers`, the stream decodes in batched steps with the model's other sessions on its
  // devices while they generate too (exec/step_batcher.hpp; RunnerOptions::max_batch above 1).
  SessionStream(std::span<vk::Device* const> devices, const LlamaWeights& weights, const RunnerOptions& options,
                const std::vector<int64_t>& layers_per_device, std::function<const Tokenizer&()> tokens,
                uint64_t digest, DeviceWeightCache* cache = nullptr, StepBatcherCache* batchers = nullptr);

  std::vector<float> feed(std::span<const int32_t> tokens, bool all_logits);
  // In pieces (segments; a sliding context's at least 4096 tokens), `on_piece` after each; it may stop.
  std::vector<float> feed(std::span<const int32_t> tokens, const FeedCallback& on_piece);
  std::vector<int32_t> generate(int64_t max_tokens, const SamplingOptions& options, const TokenCallback& on_token);
  std::vector<int32_t> generate_with_logprobs(int64_t max_tokens, const SamplingOptions& options, int top_logprobs,
                                              const GeneratedTokenCallback& on_token);
  void reset();
  // The last fed token's logits (Session::logits).
  std::vector<float> logits();

  // The whole stream state, with the weights it belongs to and the logits generate() needs.
  stream::SessionState save_state();
  // Throws, changing nothing, when the state is from other weights or another shape.
  void restore_state(const stream::SessionState& state);

  const LlamaRunner& runner() const noexcept { return runner_; }

 private:
  void forward_ranked(int32_t token, uint32_t k);
  void took_ranking(std::vector<ops::RankedLogit> ranked, uint32_t k);
  bool chain(int32_t first, uint32_t steps, Sampler& sampler, const TokenCallback& on_token, std::vector<int32_t>& out);
  int32_t sample(Sampler& sampler);
  const std::vector<float>& whole_row();
  std::vector<int32_t> generate_on_host(int64_t max_tokens, const SamplingOptions& options, int top_logprobs,
                                        const GeneratedTokenCallback& report);
  void forget_output();
  size_t next_piece(size_t remaining) const;
  int64_t progress_span() const;
  // What generate() and generate_with_logprobs() (with its top_logprobs) refuse, in that order.
  void check_can_generate(int64_t max_tokens, const SamplingOptions& options,
                          std::optional<int> top_logprobs = std::nullopt) const;

  LlamaRunner runner_;
  std::shared_ptr<StepBatcher> batcher_;  // null: this stream never decodes batched
  std::function<const Tokenizer&()> tokens_;
  uint64_t digest_;
  size_t vocab_;
  // What generate() samples from: the last token's logits, or only its best ones as ranked on
  // the device (decode reads back no more). Saved states carry the whole row, so a restored
  // stream generates as the original would have.
  bool fed_ = false;
  std::vector<float> last_logits_;             // empty when only a ranking was read back
  std::vector<ops::RankedLogit> last_ranked_;  // best first
  uint32_t ranked_k_ = 0;                      // how many were asked for
};

}  // namespace infini::model
