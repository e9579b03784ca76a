#pragma once
// infini::Session: one token stream through a Model. Feed text of any length in pieces of any
// size (the compressive memory and the open segments stay on the device between calls, so device
// memory never grows with the stream), generate, start over, and save the stream state to a file
// to continue it later, in this process or another.
//
//   infini::Session session(model);
//   session.feed(model.tokenize(prompt, true));
//   session.generate(64, {.temperature = 0.7}, [](int32_t, std::string_view text) {
//     std::cout << text << std::flush;
//     return true;                             // false stops generating
//   });
//
// Creating a session uploads the model's weights (see infini/model.hpp). Feeding the same tokens
// in any split gives the same logits up to float rounding (decode-sized pieces may use a kernel
// with another summation order), and bit-identical logits when the splits fall on segment
// boundaries, as a state saved and restored there does. This header needs no Vulkan headers.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "infini/model.hpp"

namespace infini {

struct SamplingOptions {
  double temperature = 0.8;  // 0: greedy (argmax)
  int top_k = 40;            // keep the k most likely tokens; 0: all
  double top_p = 0.95;       // then the smallest set reaching this probability; 1: no cut
  uint64_t seed = 0;         // the same seed gives the same tokens on every platform
  // OpenAI's penalties over the tokens this generate() call has produced: before each draw a
  // token's logit is lowered by frequency_penalty times its count so far, and by presence_penalty
  // once it has appeared (negative values favour repeats). Either one makes decoding go token by
  // token, the host adjusting each whole row.
  double frequency_penalty = 0;
  double presence_penalty = 0;
};

// A token's log-probability under the model: the log-softmax of its logits, before temperature,
// penalties and cuts.
struct TokenLogprob {
  int32_t token = 0;
  float logprob = 0;
};

// What generate_with_logprobs() reports for each token it generates.
struct GeneratedToken {
  int32_t token = 0;
  std::string_view text;
  float logprob = 0;
  std::vector<TokenLogprob> top;  // the most likely tokens of its position, best first (ties: lower id)
};
using GeneratedTokenCallback = std::function<bool(const GeneratedToken& token)>;

// Called once per generated token with the token and its text; return false to stop.
using TokenCallback = std::function<bool(int32_t token, std::string_view text)>;

// Where a feed with a progress callback has got to, after each piece.
struct FeedProgress {
  int64_t fed = 0;          // tokens of this call fed so far
  int64_t total = 0;        // tokens of this call
  int64_t tokens_seen = 0;  // the stream's length now
  // The stream ends on a segment boundary (a sliding context's: every max(C, 4096) tokens): a
  // state saved now resumes bit-identically.
  bool at_segment_boundary = false;
};
// Return false to stop feeding; the tokens fed so far stay fed.
using FeedCallback = std::function<bool(const FeedProgress& progress)>;

// One stage of a session's pipeline: a device and the layers it holds.
struct SessionStage {
  DeviceDescription device;
  int64_t first_layer = 0, layers = 0;
};

// A stream state held in host memory (Session::snapshot), for returning to a point of a stream
// without a file: copies are cheap and share the state.
class SessionSnapshot {
 public:
  int64_t tokens_seen() const noexcept;
  uint64_t bytes() const noexcept;  // host memory the state takes

 private:
  friend class Session;
  struct Impl;
  std::shared_ptr<const Impl> impl_;
};

class Session {
 public:
  // Uploads the weights to the model's context. Throws infini::Error on a device limit.
  explicit Session(const Model& model);
  ~Session();
  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;

  // Feeds the next tokens of the stream (at least one). feed returns the logits of the last token
  // ([vocab]); feed_all those of every token ([tokens][vocab], row-major). An id outside the
  // vocabulary throws before anything is fed.
  std::vector<float> feed(std::span<const int32_t> tokens);
  std::vector<float> feed_all(std::span<const int32_t> tokens);
  // feed() in pieces that end on segment boundaries (whole segments; several at a time on a
  // pipeline of devices, so that its stages overlap), calling `on_piece` after each: for progress,
  // for saving the state at boundaries, or for stopping early. Returns the logits of the last
  // token fed. The logits are those of feed() on the same tokens.
  std::vector<float> feed(std::span<const int32_t> tokens, const FeedCallback& on_piece);
  // The logits of the last token fed ([vocab]), after feed, generate or a restore (read from the
  // device where decoding brought back only a ranking). Throws when no token was fed since the
  // start or reset(), or the restored state had none.
  std::vector<float> logits();

  // Samples up to max_tokens tokens, each one from the logits of the token before it, and feeds
  // each one back; stops early at the end-of-sequence token (neither fed nor returned) or when
  // `on_token` returns false (that token is fed and returned). Each call starts the sampler's
  // random stream afresh from options.seed. Needs the logits of a fed token: after construction,
  // reset(), feed at least one token first, else this throws (a restored state has them when the
  // saved session had fed a token). Greedy generation, and sampling with top_k 1..64 or with top_k
  // 0 and top_p 1, decode chains of tokens on the device (ModelOptions::decode_chain):
  // `on_token` then sees them in bursts, and a stop inside a chain leaves the stream exactly as
  // token by token would.
  std::vector<int32_t> generate(int64_t max_tokens, const SamplingOptions& options = {},
                                const TokenCallback& on_token = {});

  // generate() that also reports each token's log-probability and the top_logprobs (0..20) most
  // likely tokens of its position. Reads each position's whole row of logits from the device, so
  // it decodes token by token (no chains); the tokens are those generate() gives.
  std::vector<int32_t> generate_with_logprobs(int64_t max_tokens, const SamplingOptions& options, int top_logprobs,
                                              const GeneratedTokenCallback& on_token);
  // Back to an empty stream (zero memory, no tokens seen).
  void reset();
  // Writes the whole stream state (memory, open segments, token count, the last token's logits,
  // the model's digest) to `path` atomically. A restored session continues exactly as this one
  // would: generate() needs no feed first when this one had fed a token.
  void save(const std::filesystem::path& path) const;
  // The same state as bytes (the file's contents), for a database or the network.
  std::vector<std::byte> save() const;
  // Replaces the stream state with one saved by a session of the same model (weights, shape and
  // options). A damaged file, or one from another model, throws with one line and changes nothing.
  void restore(const std::filesystem::path& path);
  // The same from bytes save() gave; `name` starts the error messages.
  void restore(std::span<const std::byte> state, const std::string& name = "session state");
  // The same in host memory: snapshot() copies the stream state off the device; restore() puts it
  // back (a snapshot of a session of the same model and options; else it throws, changing nothing).
  SessionSnapshot snapshot() const;
  void restore(const SessionSnapshot& snapshot);

  int64_t tokens_seen() const noexcept;
  int64_t segment() const noexcept;  // the segment length N this session streams with
  // The devices in use and the layers each holds, in pipeline order (one stage on one device).
  std::vector<SessionStage> stages() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace infini
