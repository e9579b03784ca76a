// The public Session: a facade over model::SessionStream (exec/session_stream.hpp).
#include "infini/session.hpp"

#include <algorithm>
#include <string>

#include "api/context_access.hpp"
#include "api/model_impl.hpp"
#include "exec/session_stream.hpp"
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
  std::shared_ptr<const Model::Impl> model;  // keeps the weights, tokenizer and options alive
  model::SessionStream stream;

  explicit Impl(std::shared_ptr<const Model::Impl> m)
      : model(std::move(m)),
        stream(ContextAccess::devices(model->context), model->weights, model->runner, model->layers_per_device,
               [m = model.get()]() -> const model::Tokenizer& { return m->tokens(); }, model->info.digest,
               &model->weight_cache, &model->batchers) {}
};

Session::Session(const Model& model) : impl_(std::make_unique<Impl>(ModelAccess::impl(model))) {}

Session::~Session() = default;
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;

std::vector<float> Session::feed(std::span<const int32_t> tokens) { return impl_->stream.feed(tokens, false); }

std::vector<float> Session::feed_all(std::span<const int32_t> tokens) { return impl_->stream.feed(tokens, true); }

std::vector<float> Session::feed(std::span<const int32_t> tokens, const FeedCallback& on_piece) {
  return impl_->stream.feed(tokens, on_piece);
}

std::vector<int32_t> Session::generate(int64_t max_tokens, const SamplingOptions& options,
                                       const TokenCallback& on_token) {
  return impl_->stream.generate(max_tokens, options, on_token);
}

std::vector<int32_t> Session::generate_with_logprobs(int64_t max_tokens, const SamplingOptions& options,
                                                    int top_logprobs, const GeneratedTokenCallback& on_token) {
  return impl_->stream.generate_with_logprobs(max_tokens, options, top_logprobs, on_token);
}

std::vector<float> Session::logits() { return impl_->stream.logits(); }

void Session::reset() { impl_->stream.reset(); }

void Session::save(const std::filesystem::path& path) const { stream::write_session_state(path, impl_->stream.save_state()); }

std::vector<std::byte> Session::save() const { return stream::encode_session_state(impl_->stream.save_state()); }

void Session::restore(const std::filesystem::path& path) { impl_->stream.restore_state(stream::read_session_state(path)); }

void Session::restore(std::span<const std::byte> state, const std::string& name) {
  impl_->stream.restore_state(stream::decode_session_state(state, name));
}

SessionSnapshot Session::snapshot() const {
  SessionSnapshot s;
  s.impl_ = std::make_shared<const SessionSnapshot::Impl>(SessionSnapshot::Impl{impl_->stream.save_state()});
  return s;
}

void Session::restore(const SessionSnapshot& snapshot) {
  if (!snapshot.impl_) throw Error("session: the snapshot is empty");
  impl_->stream.restore_state(snapshot.impl_->state);
}

int64_t Session::tokens_seen() const noexcept { return impl_->stream.runner().tokens_seen(); }

int64_t Session::segment() const noexcept { return impl_->stream.runner().options().infini.segment; }

std::vector<SessionStage> Session::stages() const {
  const Context& context = impl_->model->context;
  const std::vector<vk::Device*> devices = ContextAccess::devices(context);
  const std::vector<DeviceDescription> described = context.devices();
  std::vector<SessionStage> out;
  for (const model::LlamaRunner::StageInfo& s : impl_->stream.runner().stages()) {
    const size_t i = size_t(std::find(devices.begin(), devices.end(), s.device) - devices.begin());
    out.push_back({described.at(i), s.layers.first, s.layers.count()});
  }
  return out;
}

}  // namespace infini
