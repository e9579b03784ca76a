#pragma once
// infini::Model: a Llama-family GGUF file opened for streaming (docs/design.md §3). It maps the
// file, checks every key and tensor, resolves the stream options against the file's
// Infini-attention keys and holds the tokenizer. Sessions (infini/session.hpp) run it.
//
//   infini::Context ctx;
//   infini::Model model(ctx, "model.gguf");   // memory on iff the file has Infini keys
//   infini::Session session(model);           // uploads the weights to ctx's device
//
// Where the weights live: the model keeps the read-only file mapping; the first Session on a
// device uploads the weights there, and every later session of the model on that device shares
// that copy (ModelInfo::weight_bytes once, then ModelInfo::state_bytes and activations per
// session); the copy goes with the last session. Sessions that generate at the same time on one
// device decode together: one batched step runs the next token of each (ModelOptions::max_batch),
// reading the weights once for all of them.
//
// The model is immutable after construction; copies share it, and sessions keep it alive. The
// Context must outlive the model and its sessions. This header needs no Vulkan headers.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "infini/attention_options.hpp"
#include "infini/context.hpp"

namespace infini {

// Compressive memory: Auto turns it on when the file has the infini.* keys (an Infini-attention
// model) and off for a plain Llama file, which then runs with a sliding context (ModelOptions::context).
enum class MemoryMode { Auto, On, Off };
// "auto", "on", "off"; memory_mode_from_name returns nullopt for anything else.
std::string_view memory_mode_name(MemoryMode mode) noexcept;
std::optional<MemoryMode> memory_mode_from_name(std::string_view name) noexcept;

// Most tokens recorded in one device submission unless ModelOptions says otherwise.
inline constexpr uint32_t kDefaultMaxPiece = 256;
// Most sessions decoding together in one batched step unless ModelOptions says otherwise.
inline constexpr uint32_t kDefaultMaxBatch = 64;
inline constexpr uint32_t kMostMaxBatch = 256;

struct ModelOptions {
  // An Infini-attention file's segment length N; 0: its infini.segment_length. On a plain file
  // (memory off) the same as `context` when that is 0.
  int64_t segment = 0;
  // A plain file (no Infini keys, memory off) attends over a context of C tokens, in full up to C
  // tokens of stream and past that sliding: each token attends the stream's first `sinks` tokens
  // and its most recent C - sinks, at positions within the context (StreamingLLM), so the stream
  // goes on at constant memory. 0: the file's context_length, cut to what the device holds
  // (Model::warnings says so, with the figure). ModelInfo::context says which C it got. A model
  // whose memory is on has no such context and leaves both aside (ModelInfo::context is 0). An
  // Infini-attention file with `memory` Off and a `context` runs its local attention alone as
  // such a sliding window (its memory and gates unused).
  int64_t context = 0;
  int64_t sinks = kDefaultSinks;  // 0 <= sinks < C
  MemoryMode memory = MemoryMode::Auto;
  uint32_t max_piece = kDefaultMaxPiece;  // bounds scratch memory
  // Generation decodes up to this many tokens per device submission, each picked on the device
  // from the logits before it and fed to the next step there: greedy, sampled with top_k 1..64,
  // and sampled with top_k 0 and top_p 1 (the draw is the host sampler's, with its random
  // numbers). The same tokens as one per submission, no host round trip in between, callbacks in
  // bursts. 1: a submission per token; at most 16; 0: the device's choice (on GPUs as many as
  // decode in about 50 ms, up to 16; 1 on CPU drivers). They also run over several devices that
  // pass tokens back on the device.
  uint32_t decode_chain = 0;
  // Sessions of this model on one device generating at the same time (each on its own thread)
  // decode together: whenever the device is free, the next token of every session waiting runs
  // as one step of up to max_batch rows, so the weights are read once for all of them. A session
  // generating alone keeps its own steps (and chains). 1: never batch; at most kMostMaxBatch.
  // Session::generate batches (any sampling without penalties), also on a model split over
  // several devices; generate_with_logprobs decodes alone.
  uint32_t max_batch = kDefaultMaxBatch;
  // On a context with several devices, each device's share of the layers, in order ({3, 1}: three
  // quarters on the first); empty: in proportion to each device's free memory. A device whose share
  // rounds to no layers is left out.
  std::vector<double> split;
};

// What was loaded, with the options resolved.
struct ModelInfo {
  std::string name;  // the file name as given
  int64_t vocab = 0, embd = 0, layers = 0, heads = 0, heads_kv = 0, head_dim = 0, ffn = 0;
  int64_t context_length = 0;    // llama.context_length (informational: the stream is unbounded)
  int64_t segment = 0;           // the segment length sessions run with (a plain file: its context)
  int64_t context = 0;           // a plain file's context C (0: an Infini-attention model, unbounded)
  int64_t sinks = 0;             // ... and the sinks it keeps past C
  uint64_t state_bytes = 0;      // device memory of a session's stream state, the same at any length
  // Device memory of the weights (matrices as stored, vectors as f32, before the driver's
  // alignment), taken once per device by the first session there and shared by the model's later
  // sessions: N sessions on one device cost weight_bytes + N * (state_bytes + activations).
  uint64_t weight_bytes = 0;
  bool memory = false;           // whether sessions use the compressive memory
  bool has_infini_keys = false;  // the file carries infini.* keys
  int32_t bos = -1, eos = -1;    // special tokens, -1 when the vocabulary has none
  bool add_bos = true;           // the file asks for BOS at the start of a text
  std::string chat_template;     // tokenizer.chat_template, empty when absent (infini/chat_template.hpp)
  // Identifies the file's weights and metadata (a 64-bit hash of the header and of samples of
  // every tensor's data): saved session states carry it, and another model refuses them.
  uint64_t digest = 0;
};
// The decode steps batched across a model's sessions so far (Model::decode_batches).
struct DecodeBatchStats {
  uint64_t steps = 0;        // batched steps run
  uint64_t tokens = 0;       // tokens they decoded: tokens / steps is the mean batch
  uint32_t largest = 0;      // most tokens in one step
  uint32_t last = 0;         // tokens in the last step
  double seconds = 0;        // wall time of the steps
  double last_seconds = 0;   // of the last step
  uint32_t waiting = 0;      // sessions waiting for a step now
  uint32_t generating = 0;   // sessions generating now
};

// ModelInfo::digest as 16 hex digits.
std::string digest_hex(uint64_t digest);

class Model {
 public:
  // Throws infini::Error with one line naming the file and what is wrong (missing file, not GGUF,
  // damaged, not a llama model, bad options).
  Model(Context& context, const std::filesystem::path& gguf, const ModelOptions& options = {});
  ~Model();
  Model(const Model&);
  Model& operator=(const Model&);
  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;

  const ModelInfo& info() const noexcept;
  // Things that do not stop the model from running (NaN weights, unused tensors, ...), one line
  // each; the library never prints them.
  const std::vector<std::string>& warnings() const noexcept;

  // Batched decoding so far, over the devices of the model's live sessions.
  DecodeBatchStats decode_batches() const;
  // The file's tokenization (SentencePiece or byte-level BPE) as llama.cpp applies it.
  // Control-token texts such as "<s>" or "<|im_end|>" in `text` are plain text unless
  // parse_special (for text made by a chat template, not for untrusted text). add_bos throws
  // when the vocabulary has no BOS.
  std::vector<int32_t> tokenize(std::string_view text, bool add_bos, bool parse_special = false) const;
  // Text of `tokens` (a leading BOS and the first piece's dummy-prefix space dropped), so
  // detokenize(tokenize(s, b)) == s for plain text. Out-of-range ids throw.
  std::string detokenize(std::span<const int32_t> tokens) const;
  // The bytes one token stands for, for streaming generated text (control tokens give "").
  std::string piece(int32_t token) const;

 private:
  friend class Session;
  friend struct ModelAccess;  // the library's own code reaches the loaded file through it
  struct Impl;
  std::shared_ptr<const Impl> impl_;
};

}  // namespace infini
