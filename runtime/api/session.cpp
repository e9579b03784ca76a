#include "infini/session.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "api/context_access.hpp"
#include "api/model_impl.hpp"
#include "exec/llama_runner.hpp"
#include "sampling/sampler.hpp"
#include "sampling/token_logprobs.hpp"
#include "formats/session_state.hpp"

namespace infini {

struct SessionSnapshot::Impl {
  stream::SessionState state;
};

int64_t SessionSnapshot::tokens_seen() const noexcept { return impl_ ? impl_->state.tokens_seen : 0; }

uint64_t SessionSnapshot::bytes() const noexcept {
  if (!impl_) return 0;
  uint64_t n = 0;
  for (const ops::LayerSnapshot& l : impl_->state.layers) n += l.m.size() + l.z.size() + l.k.size() + l.v.size() + l.kr.size();
  return n;
}

struct Session::Impl {
  std::shared_ptr<const Model::Impl> model;  // keeps the tokenizer and options alive
  model::LlamaRunner runner;
  // What generate() samples from: the last token's logits, or only its best ones as ranked on
  // the device (decode reads back no more). Saved states carry the whole row, so a restored
  // stream generates as the original would have.
  bool fed = false;
  std::vector<float> last_logits;               // empty when only a ranking was read back
  std::vector<ops::RankedLogit> last_ranked;    // best first
  uint32_t ranked_k = 0;                        // how many were asked for

  explicit Impl(std::shared_ptr<const Model::Impl> m)
      : model(std::move(m)),
        runner(ContextAccess::devices(model->context), model->weights, model->runner, model->layers_per_device) {}

  std::vector<float> forward(std::span<const int32_t> tokens, bool all_logits) {
    std::vector<float> logits = runner.forward(tokens, all_logits);
    const size_t vocab = size_t(model->info.vocab);
    last_logits.assign(logits.end() - std::ptrdiff_t(vocab), logits.end());
    ranked_k = 0;
    fed = true;
    return logits;
  }

  void forward_ranked(int32_t token, uint32_t k) {
    last_ranked = runner.forward_ranked(std::span<const int32_t>(&token, 1), k);
    last_logits.clear();
    ranked_k = k;
    fed = true;
  }

  // Decoding ahead on the device: feeds `first` (already handed to on_token and in `out`) and the
  // steps - 1 tokens a chain picks after it (the best, or drawn on the device as `sampler` draws),
  // then hands those on and appends them up to the first stop (the end-of-sequence token,
  // on_token's false, or an error), taking back what the chain fed past it, so the stream and the
  // sampler's random stream are what token-by-token decoding leaves. False at a stop.
  bool chain(int32_t first, uint32_t steps, model::Sampler& sampler, const TokenCallback& on_token,
             std::vector<int32_t>& out) {
    const bool greedy = sampler.draws_per_token() == 0;
    const uint32_t k = sampler.device_ranking().value();  // generate() chains only where it has one
    model::LlamaRunner::ChainPicks drawn = runner.forward_sampled(first, steps, sampler.device_draws(steps - 1), k);
    const std::vector<ops::RankedLogit>& picks = drawn.picks;
    last_logits.clear();
    fed = true;
    uint32_t kept = 0;  // the last step whose token stays fed
    // What the chain's last step left for the next draw: its ranking, or its whole row.
    const auto keep_last = [&] {
      last_ranked = std::move(drawn.last);
      ranked_k = last_ranked.empty() ? 0 : k;
      last_logits = std::move(drawn.last_row);
    };
    const auto stop = [&] {
      runner.take_back(steps - 1 - kept);
      // The last logits are now step kept's: what the chain read back of them (a greedy pick is
      // its step's best), else the row is read from the device when next needed.
      if (kept + 1 == steps) return keep_last();
      last_ranked.clear();
      if (greedy) last_ranked = {picks[kept]};
      ranked_k = last_ranked.empty() ? 0 : 1;
    };
    try {
      const model::Tokenizer& tokenizer = model->tokens();
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
  int32_t sample(model::Sampler& sampler) {
    const uint32_t need = sampler.ranked_needed();
    if (last_logits.empty() && (need == 0 || need > ranked_k)) last_logits = runner.last_logits();
    return last_logits.empty() ? sampler.sample_ranked(last_ranked) : sampler.sample(last_logits);
  }

  // The last fed token's whole row of logits (read from the device when only a ranking came back).
  const std::vector<float>& whole_row() {
    if (last_logits.empty()) last_logits = runner.last_logits();
    return last_logits;
  }

  // Decoding where the host sees every whole row: for penalties and log-probabilities. Draws as
  // the sampler draws from the row the penalties leave; `report` gets each token.
  std::vector<int32_t> generate_on_host(int64_t max_tokens, const SamplingOptions& options, int top_logprobs,
                                        const GeneratedTokenCallback& report) {
    model::Sampler sampler({options.temperature, options.top_k, options.top_p, options.seed});
    const model::Tokenizer& tokenizer = model->tokens();
    std::vector<int32_t> out;
    std::vector<int32_t> counts(size_t(model->info.vocab), 0);
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
        const model::TokenLogprobs lp = model::token_logprobs(row, next, size_t(top_logprobs));
        g.logprob = lp.chosen;
        for (const auto& [id, logprob] : lp.top) g.top.push_back({id, logprob});
      }
      const bool more = !report || report(g);
      forward(std::span<const int32_t>(&next, 1), false);
      out.push_back(next);
      ++counts[size_t(next)];
      if (!more) break;
    }
    return out;
  }

  // The whole stream state, with the weights it belongs to and the logits generate() needs.
  stream::SessionState save_state() {
    stream::SessionState state = runner.save_state();
    state.model_digest = model->info.digest;
    if (fed) state.last_logits = last_logits.empty() ? runner.last_logits() : last_logits;
    return state;
  }

  // Throws, changing nothing, when the state is from other weights or another shape.
  void restore_state(const stream::SessionState& state) {
    // A state of another shape gets the runner's message, which names the difference.
    const bool same_shape = state.fingerprint == runner.fingerprint();
    if (same_shape && state.model_digest != 0 && state.model_digest != model->info.digest)
      throw Error("model: the saved state is from another model (weights digest " + digest_hex(state.model_digest) +
                  "; this model is " + digest_hex(model->info.digest) + ")");
    runner.restore_state(state);
    forget_output();
    if (!state.last_logits.empty()) {
      last_logits = state.last_logits;
      fed = true;
    }
  }

  void forget_output() {
    fed = false;
    last_logits.clear();
    last_ranked.clear();
    ranked_k = 0;
  }

  // The next piece of a feed with progress: the rest of the open segment, plus seven more
  // segments on a pipeline of devices so that its stages overlap them.
  size_t next_piece(size_t remaining) const {
    const int64_t span = progress_span();
    const int64_t spans = runner.stages().size() > 1 ? 8 : 1;
    return std::min(remaining, size_t(span * spans - runner.tokens_seen() % span));
  }
  // The boundaries a feed with progress stops at: segments; a sliding context's pieces are not
  // cut by its C but by at least 4096 tokens (the progress a user sees, and a checkpoint's place).
  int64_t progress_span() const {
    const InfiniOptions& o = runner.options().infini;
    return o.sliding ? std::max<int64_t>(o.segment, 4096) : o.segment;
  }
};

Session::Session(const Model& model) : impl_(std::make_unique<Impl>(ModelAccess::impl(model))) {}

Session::~Session() = default;
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;

std::vector<float> Session::feed(std::span<const int32_t> tokens) { return impl_->forward(tokens, false); }

std::vector<float> Session::feed_all(std::span<const int32_t> tokens) { return impl_->forward(tokens, true); }

std::vector<float> Session::feed(std::span<const int32_t> tokens, const FeedCallback& on_piece) {
  if (tokens.empty()) throw Error("session: nothing to feed");
  const int64_t span = impl_->progress_span();
  std::vector<float> logits;
  for (size_t done = 0; done < tokens.size();) {
    const size_t piece = impl_->next_piece(tokens.size() - done);
    logits = impl_->forward(tokens.subspan(done, piece), false);
    done += piece;
    const int64_t seen = impl_->runner.tokens_seen();
    if (on_piece && !on_piece({int64_t(done), int64_t(tokens.size()), seen, seen % span == 0})) break;
  }
  return logits;
}

std::vector<int32_t> Session::generate(int64_t max_tokens, const SamplingOptions& options,
                                       const TokenCallback& on_token) {
  if (max_tokens < 0) throw Error("session: cannot generate " + std::to_string(max_tokens) + " tokens");
  if (!impl_->fed)
    throw Error("session: nothing to generate from; feed at least one token first (after reset or restore too)");
  if (!std::isfinite(options.frequency_penalty) || !std::isfinite(options.presence_penalty))
    throw Error("session: the frequency and presence penalties must be finite");
  if (options.frequency_penalty != 0 || options.presence_penalty != 0)
    return impl_->generate_on_host(max_tokens, options, -1, [&](const GeneratedToken& g) {
      return !on_token || on_token(g.token, g.text);
    });
  model::Sampler sampler({options.temperature, options.top_k, options.top_p, options.seed});
  const model::Tokenizer& tokenizer = impl_->model->tokens();
  std::vector<int32_t> out;
  while (int64_t(out.size()) < max_tokens) {
    const int32_t next = impl_->sample(sampler);
    if (next == tokenizer.eos()) break;
    // Hand the text over before the next forward pass, so streamed output does not wait for it.
    const bool more = !on_token || on_token(next, tokenizer.piece(next));
    // Decoding goes on with a chain of tokens on the device where the runner offers one.
    const uint32_t steps = more ? impl_->runner.chain_steps(max_tokens - int64_t(out.size()), sampler) : 0;
    if (steps > 1) {
      out.push_back(next);
      if (!impl_->chain(next, steps, sampler, on_token, out)) break;
      continue;
    }
    // Sampling that needs only the best logits gets only them back from the device.
    if (const uint32_t k = sampler.ranked_needed()) impl_->forward_ranked(next, k);
    else impl_->forward(std::span<const int32_t>(&next, 1), false);
    out.push_back(next);
    if (!more) break;
  }
  return out;
}

std::vector<int32_t> Session::generate_with_logprobs(int64_t max_tokens, const SamplingOptions& options,
                                                    int top_logprobs, const GeneratedTokenCallback& on_token) {
  if (max_tokens < 0) throw Error("session: cannot generate " + std::to_string(max_tokens) + " tokens");
  if (top_logprobs < 0 || top_logprobs > 20)
    throw Error("session: top_logprobs is " + std::to_string(top_logprobs) + "; it must be in 0..20");
  if (!std::isfinite(options.frequency_penalty) || !std::isfinite(options.presence_penalty))
    throw Error("session: the frequency and presence penalties must be finite");
  if (!impl_->fed)
    throw Error("session: nothing to generate from; feed at least one token first (after reset or restore too)");
  return impl_->generate_on_host(max_tokens, options, top_logprobs, on_token);
}

void Session::reset() {
  impl_->runner.reset();
  impl_->forget_output();
}

void Session::save(const std::filesystem::path& path) const { stream::write_session_state(path, impl_->save_state()); }

std::vector<std::byte> Session::save() const { return stream::encode_session_state(impl_->save_state()); }

void Session::restore(const std::filesystem::path& path) { impl_->restore_state(stream::read_session_state(path)); }

void Session::restore(std::span<const std::byte> state, const std::string& name) {
  impl_->restore_state(stream::decode_session_state(state, name));
}

SessionSnapshot Session::snapshot() const {
  SessionSnapshot s;
  s.impl_ = std::make_shared<const SessionSnapshot::Impl>(SessionSnapshot::Impl{impl_->save_state()});
  return s;
}

void Session::restore(const SessionSnapshot& snapshot) {
  if (!snapshot.impl_) throw Error("session: the snapshot is empty");
  impl_->restore_state(snapshot.impl_->state);
}

int64_t Session::tokens_seen() const noexcept { return impl_->runner.tokens_seen(); }

int64_t Session::segment() const noexcept { return impl_->runner.options().infini.segment; }

std::vector<SessionStage> Session::stages() const {
  const Context& context = impl_->model->context;
  const std::vector<vk::Device*> devices = ContextAccess::devices(context);
  const std::vector<DeviceDescription> described = context.devices();
  std::vector<SessionStage> out;
  for (const model::LlamaRunner::StageInfo& s : impl_->runner.stages()) {
    const size_t i = size_t(std::find(devices.begin(), devices.end(), s.device) - devices.begin());
    out.push_back({described.at(i), s.layers.first, s.layers.count()});
  }
  return out;
}

}  // namespace infini
