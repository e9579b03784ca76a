#pragma once
// What `infini serve` does for a request, apart from HTTP: one-shot completions, and sessions whose
// state lives in a StateStore between requests. A request for a session loads the committed
// record, restores it on a free worker of the SessionPool, feeds or generates, and commits the new
// state as the next version; nothing is committed when it fails or is cancelled, so a request
// killed half-way leaves the session as it was and can be retried anywhere.
//
// Requests for one session wait for each other (in this process; across replicas, the version
// check refuses the later writer with 409). At most `queue` requests wait or run at once; more
// get 429.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "infini/context.hpp"
#include "infini/model.hpp"
#include "infini/session.hpp"
#include "infini/session_pool.hpp"
#include "serve/metrics.hpp"
#include "serve/session_locks.hpp"
#include "serve/state_store.hpp"

namespace infini::serve {

struct ServeLimits {
  int64_t max_sessions = 10000;          // sessions in the store
  int64_t max_request_tokens = 262144;   // tokens a prompt or an append may hold
  int64_t max_generate_tokens = 4096;    // max_tokens of one request
  int64_t queue = 64;                    // requests waiting or running at once
  int64_t parallel = 1;                  // requests running at once per worker, on one copy of the weights
  // --ctx-full stop: a plain file's stream may not pass its context (OpenAI's
  // context_length_exceeded for input past it; generation ends there with finish_reason length).
  bool stop_at_full_context = false;
};

struct GenerateRequest {
  int64_t max_tokens = 16;
  SamplingOptions sampling;
  std::vector<std::string> stop;
  std::vector<int32_t> stop_tokens;  // tokens that end generation (a chat's end of turn), not returned
  int n = 1;                         // continuations of one prompt (seeds seed, seed + 1, ...)
  int top_logprobs = -1;             // >= 0: each token's log-probability and this many alternatives
  bool echo = false;                 // completions: the prompt's text first
  bool include_usage = false;        // streams: a last chunk with the usage
};

// A generated token's log-probability and its position's most likely tokens (top_logprobs).
struct TokenReport {
  int32_t token = 0;
  float logprob = 0;
  std::vector<TokenLogprob> top;
};

struct GenerateResult {
  std::string text;
  std::vector<int32_t> tokens;
  std::string finish_reason;  // "stop" (end-of-sequence or a stop string) or "length"
  int64_t prompt_tokens = 0;
  std::vector<TokenReport> logprobs;  // one per token when asked for
};

// Where a session stands after a request: its committed record, without the state.
struct SessionStatus {
  std::string id;
  uint64_t version = 0;
  int64_t tokens_seen = 0;
  uint64_t state_bytes = 0;
  uint64_t model_digest = 0;
  int64_t fed = 0;  // tokens the request fed (appends)
};

// Receives text as it becomes safe to send, with the reports of the tokens generated since the
// last call (when log-probabilities were asked for); returns false when the client has gone
// (which cancels the request).
using TextCallback = std::function<bool(const std::string& text, std::span<const TokenReport> reports)>;
// The same for one of a completion's n choices.
using ChoiceTextCallback = std::function<bool(int choice, const std::string& text, std::span<const TokenReport> reports)>;
using ProgressCallback = std::function<bool(const FeedProgress& progress)>;

// One worker: a context on some devices and the model loaded on it.
struct Worker {
  std::unique_ptr<Context> context;
  std::unique_ptr<Model> model;
};

class SessionService {
 public:
  SessionService(std::vector<Worker> workers, std::unique_ptr<StateStore> store, ServeLimits limits, Metrics& metrics);

  const Model& model() const { return *workers_.front().model; }
  const ServeLimits& limits() const { return limits_; }
  StateStore& store() { return *store_; }

  std::vector<int32_t> tokenize(const std::string& text, bool add_bos) const;
  // An append's text as tokens: BOS first when the session has read nothing yet.
  std::vector<int32_t> append_tokens(const std::string& text, int64_t seen) const {
    return tokenize(text, seen == 0 && model().info().add_bos);
  }
  // request.n continuations of one prompt, fed once (its state snapshotted between choices).
  std::vector<GenerateResult> complete(const std::vector<int32_t>& prompt, const GenerateRequest& request,
                                       const ChoiceTextCallback& on_text);

  SessionStatus create();
  SessionStatus status(const std::string& id);
  std::vector<SessionStatus> list();
  void remove(const std::string& id);
  // `text` is tokenized after the session's record is read (BOS only when it is empty); `tokens`
  // are fed as they are. expected_version, when given, must be the committed one.
  // `still_wanted`, when given, is asked just before the commit: false (the client has gone)
  // ends the request with nothing committed.
  SessionStatus append(const std::string& id, const std::optional<std::string>& text, std::vector<int32_t> tokens,
                       std::optional<uint64_t> expected_version, const ProgressCallback& on_progress,
                       const std::function<bool()>& still_wanted = {});
  std::pair<GenerateResult, SessionStatus> generate(const std::string& id, const GenerateRequest& request,
                                                    std::optional<uint64_t> expected_version,
                                                    const TextCallback& on_text,
                                                    const std::function<bool()>& still_wanted = {});

  // What a streamed request checks before its response starts (its status is then sent): a full
  // queue, an unknown session, a stale version, a state of another model, nothing to generate
  // from, a bad prompt. The request itself checks again, and reports what changed meanwhile as an
  // error event.
  // precheck_session gives the session's length; precheck_tokens checks tokens that follow `seen`
  // (0: a prompt, a new stream).
  int64_t precheck_session(const std::string& id, std::optional<uint64_t> expected_version, bool needs_tokens);
  void precheck_tokens(const std::vector<int32_t>& tokens, const char* what, int64_t seen = 0) const;

  int64_t in_flight() const { return in_flight_.load(); }
  // Requests that run at once: --parallel per --devices entry.
  size_t workers() const { return pool_->workers(); }
  uint64_t device_memory_bytes() const;
  // Decode steps batched across the sessions of each device entry, summed.
  DecodeBatchStats decode_batches() const;

 private:
  class Slot;  // a place in the bounded queue
  SessionRecord load_for_update(const std::string& id, std::optional<uint64_t> expected_version);
  // 409 for a stale expected version or a state of another model.
  void check_record(const std::string& id, const SessionRecord& r, std::optional<uint64_t> expected_version) const;
  void restore(Session& session, const SessionRecord& record, const std::string& id) const;
  SessionStatus commit(const std::string& id, const SessionRecord& read, Session& session);
  GenerateResult run_generate(Session& session, const GenerateRequest& request, const TextCallback& on_text) const;
  void check_tokens(const std::vector<int32_t>& tokens, const char* what) const;
  // With --ctx-full stop: 400 context_length_exceeded where `adding` tokens after `seen` would pass
  // a plain file's context.
  void check_room(int64_t seen, int64_t adding, const char* what) const;

  std::vector<Worker> workers_;
  std::unique_ptr<StateStore> store_;
  ServeLimits limits_;
  Metrics& metrics_;
  std::unique_ptr<SessionPool> pool_;
  SessionLocks locks_;
  std::atomic<int64_t> in_flight_{0};
};

}  // namespace infini::serve
