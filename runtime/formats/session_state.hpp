#pragma once
// The whole stream state of a model session as a file (docs/design.md §5.2): a versioned header,
// the model fingerprint it belongs to, the token count, every layer's memory and open segment,
// and a checksum over all of it. Files are written to a temporary file and renamed, so a crash
// leaves either the old state or the new one. Reading treats the file as hostile: any damage,
// truncation or mismatch is a one-line infini::Error, never a partly restored session.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "ops/layer_snapshot.hpp"

namespace infini::stream {

// Version 2 adds the model's weights digest and the last token's logits, version 3 the sliding
// context's sinks; files of versions 1 and 2 (segments only) are still read.
inline constexpr uint32_t kSessionStateVersion = 3;

// What must match for a state to be restored into a model: shapes and the output conventions.
struct StateFingerprint {
  int64_t vocab = 0, embd = 0, layers = 0, heads = 0, heads_kv = 0, head_dim = 0, ffn = 0, segment = 0;
  uint32_t update = 0, first_segment = 0, gate_sign = 0, memory = 0, input_type = 0;
  int64_t sinks = -1;  // a sliding context's sinks (then `segment` is its C); -1: segments
  bool operator==(const StateFingerprint&) const = default;
  std::string describe() const;  // one line, for error messages
};

struct SessionState {
  StateFingerprint fingerprint;
  // Which weights the state was computed with (infini::ModelInfo::digest); 0: not recorded.
  uint64_t model_digest = 0;
  int64_t tokens_seen = 0;
  std::vector<ops::LayerSnapshot> layers;
  // The last fed token's logits ([vocab]), so that a restored stream can generate at once; empty
  // when nothing was fed since the stream began or was restored from a state without them.
  std::vector<float> last_logits;
};

std::vector<std::byte> encode_session_state(const SessionState& state);
// The checksum stored in the last 8 bytes, over everything before them (FNV-1a, 64 bit). Public
// so that the fuzz target can repair it and reach the parser behind it.
uint64_t session_state_checksum(std::span<const std::byte> body);
// `name` prefixes error messages.
SessionState decode_session_state(std::span<const std::byte> bytes, const std::string& name);

void write_session_state(const std::filesystem::path& path, const SessionState& state);
SessionState read_session_state(const std::filesystem::path& path);

}  // namespace infini::stream
