#include "exec/session_stream.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "infini/error.hpp"
#include "infini/model.hpp"
#include "sampling/token_logprobs.hpp"

namespace infini::model {

SessionStream::SessionStream(std::span<vk::Device* const> devices, const LlamaWeights& weights,
                             const RunnerOptions& options, const std::vector<int64_t>& layers_per_device,
                             std::function<const Tokenizer&()> tokens, uint64_t digest, DeviceWeightCache* cache,
                             StepBatcherCache* batchers)
    : runner_(devices, weights, options, layers_per_device, cache),
      tokens_(std::move(tokens)),
      digest_(digest),
      vocab_(size_t(weights.config.vocab)) {
  if (batchers && options.max_batch > 1)
    batcher_ = batchers->get(stage_weights(runner_), weights.config, options, options.max_batch);
}

std::vector<float> SessionStream::feed(std::span<const int32_t> tokens, bool all_logits) {
  std::vector<float> logits = runner_.forward(tokens, all_logits);
  last_logits_.assign(logits.end() - std::ptrdiff_t(vocab_), logits.end());
  ranked_k_ = 0;
  fed_ = true;
  return logits;
}

std::vector<float> SessionStream::feed(std::span<const int32_t> tokens, const FeedCallback& on_piece) {
  if (tokens.empty()) throw Error("session: nothing to feed");
  const int64_t span = progress_span();
  std::vector<float> logits;
  for (size_t done = 0; done < tokens.size();) {
    const size_t piece = next_piece(tokens.size() - done);
    logits = feed(tokens.subspan(done, piece), false);
    done += piece;
    const int64_t seen = runner_.tokens_seen();
    if (on_piece && !on_piece({int64_t(done), int64_t(tokens.size()), seen, seen % span == 0})) break;
  }
  return logits;
}

void SessionStream::check_can_generate(int64_t max_tokens, const SamplingOptions& options,
                                       std::optional<int> top_logprobs) const {
  if (max_tokens < 0) throw Error("session: cannot generate " + std::to_string(max_tokens) + " tokens");
  if (top_logprobs && (*top_logprobs < 0 || *top_logprobs > 20))
    throw Error("session: top_logprobs is " + std::to_string(*top_logprobs) + "; it must be in 0..20");
  if (!std::isfinite(options.frequency_penalty) || !std::isfinite(options.presence_penalty))
    throw Error("session: the frequency and presence penalties must be finite");
  if (!fed_)
    throw Error("session: nothing to generate from; feed at least one token first (after reset or restore too)");
}

std::vector<int32_t> SessionStream::generate(int64_t max_tokens, const SamplingOptions& options,
                                             const TokenCallback& on_token) {
  check_can_generate(max_tokens, options);
  if (options.frequency_penalty != 0 || options.presence_penalty != 0)
    return generate_on_host(max_tokens, options, -1, [&](const GeneratedToken& g) {
      return !on_token || on_token(g.token, g.text);
    });
  Sampler sampler({options.temperature, options.top_k, options.top_p, options.seed});
  const Tokenizer& tokenizer = tokens_();
  std::optional<StepBatcher::Generating> generating;
  if (batcher_) generating.emplace(*batcher_);
  std::vector<int32_t> out;
  while (int64_t(out.size()) < max_tokens) {
    const int32_t next = sample(sampler);
    if (next == tokenizer.eos()) break;
    // Hand the text over before the next forward pass, so streamed output does not wait for it.
    const bool more = !on_token || on_token(next, tokenizer.piece(next));
    // With other sessions of the model generating on this device, one batched step with theirs.
    // It ranks the best logits the sampler needs; one that draws from the whole row reads the
    // row the step left where this stream keeps its last logits.
    if (more && batcher_ && batcher_->generating() > 1) {
      const uint32_t ranked = sampler.ranked_needed();
      took_ranking(batcher_->step(runner_, next, std::max(ranked, 1u)), ranked);
      out.push_back(next);
      continue;
    }
    // Decoding goes on with a chain of tokens on the device where the runner offers one.
    const uint32_t steps = more ? runner_.chain_steps(max_tokens - int64_t(out.size()), sampler) : 0;
    if (steps > 1) {
      out.push_back(next);
      if (!chain(next, steps, sampler, on_token, out)) break;
      continue;
    }
    // Sampling that needs only the best logits gets only them back from the device.
    if (const uint32_t k = sampler.ranked_needed()) forward_ranked(next, k);
    else feed(std::span<const int32_t>(&next, 1), false);
    out.push_back(next);
    if (!more) break;
  }
  return out;
}

std::vector<int32_t> SessionStream::generate_with_logprobs(int64_t max_tokens, const SamplingOptions& options,
                                                          int top_logprobs, const GeneratedTokenCallback& on_token) {
  check_can_generate(max_tokens, options, top_logprobs);
  return generate_on_host(max_tokens, options, top_logprobs, on_token);
}

void SessionStream::reset() {
  runner_.reset();
  forget_output();
}

std::vector<float> SessionStream::logits() {
  if (!fed_) throw Error("session: no logits yet; feed at least one token first (after reset or restore too)");
  return whole_row();
}

void SessionStream::forward_ranked(int32_t token, uint32_t k) {
  took_ranking(runner_.forward_ranked(std::span<const int32_t>(&token, 1), k), k);
}

void SessionStream::took_ranking(std::vector<ops::RankedLogit> ranked, uint32_t k) {
  last_ranked_ = std::move(ranked);
  last_logits_.clear();
  ranked_k_ = k;
  fed_ = true;
}

// Decoding ahead on the device: feeds `first` (already handed to on_token and in `out`) and the
// steps - 1 tokens a chain picks after it (the best, or drawn on the device as `sampler` draws),
// then hands those on and appends them up to the first stop (the end-of-sequence token,
// on_token's false, or an error), taking back what the chain fed past it, so the stream and the
// sampler's random stream are what token-by-token decoding leaves. False at a stop.
bool SessionStream::chain(int32_t first, uint32_t steps, Sampler& sampler, const TokenCallback& on_token,
                          std::vector<int32_t>& out) {
  const bool greedy = sampler.draws_per_token() == 0;
  const uint32_t k = sampler.device_ranking().value();  // generate() chains only where it has one
  LlamaRunner::ChainPicks drawn = runner_.forward_sampled(first, steps, sampler.device_draws(steps - 1), k);
  const std::vector<ops::RankedLogit>& picks = drawn.picks;
  last_logits_.clear();
  fed_ = true;
  uint32_t kept = 0;  // the last step whose token stays fed
  // What the chain's last step left for the next draw: its ranking, or its whole row.
  const auto keep_last = [&] {
    last_ranked_ = std::move(drawn.last);
    ranked_k_ = last_ranked_.empty() ? 0 : k;
    last_logits_ = std::move(drawn.last_row);
  };
  const auto stop = [&] {
    runner_.take_back(steps - 1 - kept);
    // The last logits are now step kept's: what the chain read back of them (a greedy pick is
    // its step's best), else the row is read from the device when next needed.
    if (kept + 1 == steps) return keep_last();
    last_ranked_.clear();
    if (greedy) last_ranked_ = {picks[kept]};
    ranked_k_ = last_ranked_.empty() ? 0 : 1;
  };
  try {
    const Tokenizer& tokenizer = tokens_();
    for (uint32_t i = 0; i + 1 < steps; ++i) {
      const int32_t token = sampler.take_drawn(picks[i]);  // step i + 1 was fed it
      if (token == tokenizer.eos()) {
        stop();
        return false;
      }
      const bool more = !on_token || on_token(token, tokenizer.piece(token));
      out.push_back(token);
      kept = i + 1;
      if (!more) {
        stop();
        return false;
      }
    }
  } catch (...) {
    stop();
    throw;
  }
  keep_last();
  return true;
}

// The next token drawn from what the last forward pass gave back.
int32_t SessionStream::sample(Sampler& sampler) {
  const uint32_t need = sampler.ranked_needed();
  if (last_logits_.empty() && (need == 0 || need > ranked_k_)) last_logits_ = runner_.last_logits();
  return last_logits_.empty() ? sampler.sample_ranked(last_ranked_) : sampler.sample(last_logits_);
}

// The last fed token's whole row of logits (read from the device when only a ranking came back).
const std::vector<float>& SessionStream::whole_row() {
  if (last_logits_.empty()) last_logits_ = runner_.last_logits();
  return last_logits_;
}

// Decoding where the host sees every whole row: for penalties and log-probabilities. Draws as
// the sampler draws from the row the penalties leave; `report` gets each token.
std::vector<int32_t> SessionStream::generate_on_host(int64_t max_tokens, const SamplingOptions& options,
                                                     int top_logprobs, const GeneratedTokenCallback& report) {
  Sampler sampler({options.temperature, options.top_k, options.top_p, options.seed});
  const Tokenizer& tokenizer = tokens_();
  std::vector<int32_t> out;
  std::vector<int32_t> counts(vocab_, 0);
  std::vector<float> adjusted;
  const bool penalised = options.frequency_penalty != 0 || options.presence_penalty != 0;
  while (int64_t(out.size()) < max_tokens) {
    const std::vector<float>& row = whole_row();
    int32_t next;
    if (penalised) {
      adjusted = row;
      for (size_t t = 0; t < adjusted.size(); ++t)
        if (counts[t] > 0)
          adjusted[t] -= float(options.frequency_penalty * counts[t] + options.presence_penalty);
      next = sampler.sample(adjusted);
    } else {
      next = sampler.sample(row);
    }
    if (next == tokenizer.eos()) break;
    GeneratedToken g{next, tokenizer.piece(next), 0, {}};
    if (top_logprobs >= 0) {
      const TokenLogprobs lp = token_logprobs(row, next, size_t(top_logprobs));
      g.logprob = lp.chosen;
      for (const auto& [id, logprob] : lp.top) g.top.push_back({id, logprob});
    }
    const bool more = !report || report(g);
    feed(std::span<const int32_t>(&next, 1), false);
    out.push_back(next);
    ++counts[size_t(next)];
    if (!more) break;
  }
  return out;
}

stream::SessionState SessionStream::save_state() {
  stream::SessionState state = runner_.save_state();
  state.model_digest = digest_;
  if (fed_) state.last_logits = last_logits_.empty() ? runner_.last_logits() : last_logits_;
  return state;
}

void SessionStream::restore_state(const stream::SessionState& state) {
  // A state of another shape gets the runner's message, which names the difference.
  const bool same_shape = state.fingerprint == runner_.fingerprint();
  if (same_shape && state.model_digest != 0 && state.model_digest != digest_)
    throw Error("model: the saved state is from another model (weights digest " + digest_hex(state.model_digest) +
                "; this model is " + digest_hex(digest_) + ")");
  runner_.restore_state(state);
  forget_output();
  if (!state.last_logits.empty()) {
    last_logits_ = state.last_logits;
    fed_ = true;
  }
}

void SessionStream::forget_output() {
  fed_ = false;
  last_logits_.clear();
  last_ranked_.clear();
  ranked_k_ = 0;
}

// The next piece of a feed with progress: the rest of the open segment, plus seven more
// segments on a pipeline of devices so that its stages overlap them.
size_t SessionStream::next_piece(size_t remaining) const {
  const int64_t span = progress_span();
  const int64_t spans = runner_.stages().size() > 1 ? 8 : 1;
  return std::min(remaining, size_t(span * spans - runner_.tokens_seen() % span));
}

// The boundaries a feed with progress stops at: segments; a sliding context's pieces are not
// cut by its C but by at least 4096 tokens (the progress a user sees, and a checkpoint's place).
int64_t SessionStream::progress_span() const {
  const InfiniOptions& o = runner_.options().infini;
  return o.sliding ? std::max<int64_t>(o.segment, 4096) : o.segment;
}

}  // namespace infini::model
