#include "serve/session_service.hpp"

#include <algorithm>
#include <random>

#include "infini/error.hpp"
#include "serve/api_error.hpp"
#include "serve/stop_scanner.hpp"

namespace infini::serve {
namespace {

// The client went away: the request ends without committing anything.
struct Cancelled {};

bool valid_id(const std::string& id) {
  return id.size() == 32 && id.find_first_not_of("0123456789abcdef") == std::string::npos;
}

ApiError unknown_session(const std::string& id) { return not_found("unknown session '" + id + "'"); }

ApiError busy(int64_t queue) {
  return ApiError(429, "rate_limit_error", "the server is busy (" + std::to_string(queue) + " requests queued); retry later");
}

}  // namespace

// Holds one of the `queue` places for as long as a request waits or runs.
class SessionService::Slot {
 public:
  explicit Slot(SessionService& s) : s_(s) {
    if (s_.in_flight_.fetch_add(1) >= s_.limits_.queue) {
      s_.in_flight_.fetch_sub(1);
      throw busy(s_.limits_.queue);
    }
  }
  ~Slot() { s_.in_flight_.fetch_sub(1); }
  Slot(const Slot&) = delete;
  Slot& operator=(const Slot&) = delete;

 private:
  SessionService& s_;
};

SessionService::SessionService(std::vector<Worker> workers, std::unique_ptr<StateStore> store, ServeLimits limits,
                               Metrics& metrics)
    : workers_(std::move(workers)), store_(std::move(store)), limits_(limits), metrics_(metrics) {
  std::vector<Model> models;
  for (const Worker& w : workers_) models.push_back(*w.model);
  pool_ = std::make_unique<SessionPool>(models, size_t(limits_.parallel));
}

uint64_t SessionService::device_memory_bytes() const {
  uint64_t n = 0;
  for (const Worker& w : workers_) n += w.context->device_memory_bytes();
  return n;
}

DecodeBatchStats SessionService::decode_batches() const {
  DecodeBatchStats sum;
  for (const Worker& w : workers_) {
    const DecodeBatchStats s = w.model->decode_batches();
    sum.steps += s.steps;
    sum.tokens += s.tokens;
    sum.largest = std::max(sum.largest, s.largest);
    sum.last = std::max(sum.last, s.last);
    sum.seconds += s.seconds;
    sum.last_seconds = std::max(sum.last_seconds, s.last_seconds);
    sum.waiting += s.waiting;
    sum.generating += s.generating;
  }
  return sum;
}

std::vector<int32_t> SessionService::tokenize(const std::string& text, bool add_bos) const {
  try {
    return model().tokenize(text, add_bos && model().info().bos >= 0);
  } catch (const Error& e) {
    throw bad_request(e.what());
  }
}

void SessionService::check_tokens(const std::vector<int32_t>& tokens, const char* what) const {
  if (tokens.empty()) throw bad_request(std::string(what) + " is empty");
  if (int64_t(tokens.size()) > limits_.max_request_tokens)
    throw ApiError(413, "limit_error",
                   std::string(what) + " has " + std::to_string(tokens.size()) + " tokens; this server takes at most " +
                       std::to_string(limits_.max_request_tokens) + " per request");
  const int64_t vocab = model().info().vocab;
  for (int32_t t : tokens)
    if (t < 0 || t >= vocab)
      throw bad_request(std::string(what) + " holds token id " + std::to_string(t) + ", outside the vocabulary (0.." +
                        std::to_string(vocab - 1) + ")");
}

GenerateResult SessionService::run_generate(Session& session, const GenerateRequest& request,
                                            const TextCallback& on_text) const {
  // --ctx-full stop: generation ends at the context, as a request's max_tokens would end it.
  const int64_t max_tokens =
      limits_.stop_at_full_context ? std::min(request.max_tokens, model().info().context - session.tokens_seen())
                                   : request.max_tokens;
  StopScanner scanner(request.stop);
  bool cancelled = false, stop_token = false;
  GenerateResult r;
  std::vector<TokenReport> pending;  // reports of tokens whose text has not been sent yet
  const auto take = [&](int32_t token, std::string_view piece) {
    if (std::find(request.stop_tokens.begin(), request.stop_tokens.end(), token) != request.stop_tokens.end()) {
      stop_token = true;
      return false;
    }
    const std::string text = scanner.add(piece);
    if (!text.empty() && on_text) {
      cancelled = !on_text(text, pending);
      pending.clear();
    }
    return !cancelled && !scanner.stopped();
  };
  if (request.top_logprobs >= 0) {
    r.tokens = session.generate_with_logprobs(max_tokens, request.sampling, request.top_logprobs,
                                              [&](const GeneratedToken& g) {
                                                if (std::find(request.stop_tokens.begin(), request.stop_tokens.end(),
                                                              g.token) == request.stop_tokens.end()) {
                                                  pending.push_back({g.token, g.logprob, g.top});
                                                  r.logprobs.push_back(pending.back());
                                                }
                                                return take(g.token, g.text);
                                              });
  } else {
    r.tokens = session.generate(max_tokens, request.sampling, take);
  }
  if (cancelled) throw Cancelled{};
  if (!scanner.stopped()) {
    const std::string rest = scanner.finish();
    if ((!rest.empty() || !pending.empty()) && on_text && !on_text(rest, pending)) throw Cancelled{};
  }
  if (stop_token) r.tokens.pop_back();
  r.text = scanner.text();
  r.finish_reason =
      stop_token || scanner.stopped() || int64_t(r.tokens.size()) < max_tokens ? "stop" : "length";
  metrics_.tokens_generated(int64_t(r.tokens.size()));
  return r;
}

void SessionService::check_room(int64_t seen, int64_t adding, const char* what) const {
  const int64_t context = model().info().context;
  if (!limits_.stop_at_full_context || seen + adding <= context) return;
  throw ApiError(400, "invalid_request_error",
                 "this model's context is " + std::to_string(context) + " tokens (--ctx-full stop); " + what +
                     " makes a stream of " + std::to_string(seen + adding),
                 {}, "context_length_exceeded");
}

void SessionService::precheck_tokens(const std::vector<int32_t>& tokens, const char* what, int64_t seen) const {
  check_tokens(tokens, what);
  check_room(seen, int64_t(tokens.size()), what);
  if (in_flight_.load() >= limits_.queue) throw busy(limits_.queue);
}

int64_t SessionService::precheck_session(const std::string& id, std::optional<uint64_t> expected_version,
                                         bool needs_tokens) {
  if (in_flight_.load() >= limits_.queue) throw busy(limits_.queue);
  if (!valid_id(id)) throw unknown_session(id);
  const std::optional<SessionRecord> r = store_->load(id, false);
  if (!r) throw unknown_session(id);
  check_record(id, *r, expected_version);
  if (needs_tokens && r->tokens_seen == 0)
    throw bad_request("session '" + id + "' has read nothing yet; append text first");
  return r->tokens_seen;
}

std::vector<GenerateResult> SessionService::complete(const std::vector<int32_t>& prompt, const GenerateRequest& request,
                                                     const ChoiceTextCallback& on_text) {
  check_tokens(prompt, "the prompt");
  check_room(0, int64_t(prompt.size()), "the prompt");
  Slot slot(*this);
  try {
    return pool_->submit([&](Session& s) {
      s.feed(prompt);
      metrics_.tokens_fed(int64_t(prompt.size()));
      const SessionSnapshot fed = request.n > 1 ? s.snapshot() : SessionSnapshot{};
      std::vector<GenerateResult> results;
      for (int choice = 0; choice < request.n; ++choice) {
        if (choice > 0) s.restore(fed);
        GenerateRequest one = request;
        one.sampling.seed = request.sampling.seed + uint64_t(choice);
        const TextCallback text = [&](const std::string& t, std::span<const TokenReport> reports) {
          return on_text(choice, t, reports);
        };
        GenerateResult r = run_generate(s, one, on_text ? text : TextCallback{});
        r.prompt_tokens = int64_t(prompt.size());
        results.push_back(std::move(r));
      }
      return results;
    }).get();
  } catch (const Cancelled&) {
    throw ApiError(499, "cancelled", "the client closed the connection");
  }
}

SessionStatus SessionService::create() {
  if (store_->count() >= limits_.max_sessions)
    throw ApiError(429, "limit_error",
                   "the store holds " + std::to_string(limits_.max_sessions) + " sessions, this server's limit; delete some");
  SessionRecord record;
  record.model_digest = model().info().digest;
  for (;;) {
    const std::string id = new_session_id();
    if (store_->create(id, record)) return {id, 0, 0, 0, record.model_digest};
  }
}

SessionStatus SessionService::status(const std::string& id) {
  if (!valid_id(id)) throw unknown_session(id);
  const std::optional<SessionRecord> r = store_->load(id, false);
  if (!r) throw unknown_session(id);
  return {id, r->version, r->tokens_seen, r->state_bytes, r->model_digest};
}

std::vector<SessionStatus> SessionService::list() {
  std::vector<SessionStatus> out;
  for (const std::string& id : store_->list())
    if (const std::optional<SessionRecord> r = store_->load(id, false))  // gone since the listing: left out
      out.push_back({id, r->version, r->tokens_seen, r->state_bytes, r->model_digest});
  return out;
}

void SessionService::remove(const std::string& id) {
  if (!valid_id(id) || !store_->remove(id)) throw unknown_session(id);
}

SessionRecord SessionService::load_for_update(const std::string& id, std::optional<uint64_t> expected_version) {
  if (!valid_id(id)) throw unknown_session(id);
  std::optional<SessionRecord> r = store_->load(id, true);
  if (!r) throw unknown_session(id);
  check_record(id, *r, expected_version);
  return std::move(*r);
}

void SessionService::check_record(const std::string& id, const SessionRecord& r,
                                  std::optional<uint64_t> expected_version) const {
  if (expected_version && *expected_version != r.version)
    throw conflict("session '" + id + "' is at version " + std::to_string(r.version) + ", not " +
                   std::to_string(*expected_version));
  if (r.model_digest != model().info().digest)
    throw conflict("session '" + id + "' holds a state of model " + digest_hex(r.model_digest) +
                   "; this server runs model " + digest_hex(model().info().digest));
}

void SessionService::restore(Session& session, const SessionRecord& record, const std::string& id) const {
  if (record.state.empty()) return;  // nothing fed yet: the pool's session starts empty
  try {
    session.restore(record.state, "session '" + id + "'");
  } catch (const Error& e) {
    throw ApiError(422, "state_error", std::string("the stored state is refused: ") + e.what());
  }
}

SessionStatus SessionService::commit(const std::string& id, const SessionRecord& read, Session& session) {
  SessionRecord next{read.version + 1, model().info().digest, session.tokens_seen(), session.save()};
  switch (store_->commit(id, read.version, next)) {
    case CommitResult::Committed: break;
    case CommitResult::Stale:
      throw conflict("session '" + id + "' was changed by another request while this one ran (version " +
                     std::to_string(read.version) + " is no longer current); nothing was committed");
    case CommitResult::Missing: throw not_found("session '" + id + "' was deleted while this request ran");
  }
  return {id, next.version, next.tokens_seen, next.state.size(), next.model_digest};
}

SessionStatus SessionService::append(const std::string& id, const std::optional<std::string>& text,
                                     std::vector<int32_t> tokens, std::optional<uint64_t> expected_version,
                                     const ProgressCallback& on_progress, const std::function<bool()>& still_wanted) {
  Slot slot(*this);
  const SessionLocks::Held held = locks_.lock(id);
  const SessionRecord read = load_for_update(id, expected_version);
  if (text) tokens = append_tokens(*text, read.tokens_seen);
  check_tokens(tokens, "the input");
  check_room(read.tokens_seen, int64_t(tokens.size()), "the input");
  try {
    return pool_->submit([&](Session& s) {
      restore(s, read, id);
      bool cancelled = false;
      const int64_t before = s.tokens_seen();
      s.feed(tokens, [&](const FeedProgress& p) {
        cancelled = on_progress && !on_progress(p);
        return !cancelled;
      });
      metrics_.tokens_fed(s.tokens_seen() - before);
      if (cancelled || (still_wanted && !still_wanted())) throw Cancelled{};
      SessionStatus committed = commit(id, read, s);
      committed.fed = s.tokens_seen() - before;
      return committed;
    }).get();
  } catch (const Cancelled&) {
    throw ApiError(499, "cancelled", "the client closed the connection; nothing was committed");
  }
}

std::pair<GenerateResult, SessionStatus> SessionService::generate(const std::string& id, const GenerateRequest& request,
                                                                  std::optional<uint64_t> expected_version,
                                                                  const TextCallback& on_text,
                                                                  const std::function<bool()>& still_wanted) {
  Slot slot(*this);
  const SessionLocks::Held held = locks_.lock(id);
  const SessionRecord read = load_for_update(id, expected_version);
  if (read.tokens_seen == 0) throw bad_request("session '" + id + "' has read nothing yet; append text first");
  try {
    return pool_->submit([&](Session& s) {
      restore(s, read, id);
      GenerateResult r = run_generate(s, request, on_text);
      if (still_wanted && !still_wanted()) throw Cancelled{};
      return std::pair(std::move(r), commit(id, read, s));
    }).get();
  } catch (const Cancelled&) {
    throw ApiError(499, "cancelled", "the client closed the connection; nothing was committed");
  }
}

}  // namespace infini::serve
