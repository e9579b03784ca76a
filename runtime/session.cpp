#include "infini/session.hpp"

#include <string>

#include "model/llama_runner.hpp"
#include "model/sampler.hpp"
#include "model_state.hpp"
#include "stream/session_state.hpp"

namespace infini {

struct Session::State {
  std::shared_ptr<const Model::State> model;  // keeps the tokenizer and options alive
  model::LlamaRunner runner;
  // The logits of the last token fed, which generate() samples from. The state file does not
  // hold them (they are an output, not stream state), so they are empty after reset or restore.
  std::vector<float> last_logits;

  explicit State(std::shared_ptr<const Model::State> m)
      : model(std::move(m)), runner(model->context.vulkan_devices(), model->weights, model->runner, model->layers_per_device) {}

  std::vector<float> forward(std::span<const int32_t> tokens, bool all_logits) {
    std::vector<float> logits = runner.forward(tokens, all_logits);
    const size_t vocab = size_t(model->info.vocab);
    last_logits.assign(logits.end() - std::ptrdiff_t(vocab), logits.end());
    return logits;
  }
};

Session::Session(const Model& model) : state_(std::make_unique<State>(model.state_)) {}

Session::~Session() = default;
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;

std::vector<float> Session::feed(std::span<const int32_t> tokens) { return state_->forward(tokens, false); }

std::vector<float> Session::feed_all(std::span<const int32_t> tokens) { return state_->forward(tokens, true); }

std::vector<int32_t> Session::generate(int64_t max_tokens, const SamplingOptions& options,
                                       const TokenCallback& on_token) {
  if (max_tokens < 0) throw Error("session: cannot generate " + std::to_string(max_tokens) + " tokens");
  if (state_->last_logits.empty())
    throw Error("session: nothing to generate from; feed at least one token first (after reset or restore too)");
  model::Sampler sampler({options.temperature, options.top_k, options.top_p, options.seed});
  const model::SpmTokenizer& tokenizer = state_->model->tokenizer;
  std::vector<int32_t> out;
  while (int64_t(out.size()) < max_tokens) {
    const int32_t next = sampler.sample(state_->last_logits);
    if (next == tokenizer.eos()) break;
    // Hand the text over before the next forward pass, so streamed output does not wait for it.
    const bool more = !on_token || on_token(next, tokenizer.piece(next));
    state_->forward(std::span<const int32_t>(&next, 1), false);
    out.push_back(next);
    if (!more) break;
  }
  return out;
}

void Session::reset() {
  state_->runner.reset();
  state_->last_logits.clear();
}

void Session::save(const std::filesystem::path& path) const {
  stream::write_session_state(path, state_->runner.save_state());
}

void Session::restore(const std::filesystem::path& path) {
  state_->runner.restore_state(stream::read_session_state(path));  // throws, changing nothing
  state_->last_logits.clear();
}

int64_t Session::tokens_seen() const noexcept { return state_->runner.tokens_seen(); }

}  // namespace infini
