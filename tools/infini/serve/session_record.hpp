#pragma once
// What a state store keeps per session: the committed version, the model it belongs to, the
// stream's length and its state bytes (infini::Session::save(); empty while nothing was fed).
// Versions start at 0 when a session is created and grow by one with every commit, so a writer
// that read version v can only replace version v: two replicas can never fork a session.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace infini::serve {

struct SessionRecord {
  uint64_t version = 0;
  uint64_t model_digest = 0;  // infini::ModelInfo::digest of the model that wrote it
  int64_t tokens_seen = 0;
  std::vector<std::byte> state;
  uint64_t state_bytes = 0;  // the state's length, also where a store loaded the record without it
};

// A fresh random session id: 32 lowercase hex digits (128 bits).
std::string new_session_id();

// The record as one byte string (the directory store's file format): magic "INFSREC1", u64
// version, u64 digest, i64 tokens, u64 state length, the state; little-endian.
std::vector<std::byte> encode_record(const SessionRecord& record);
// Throws infini::Error naming `name` when the bytes are not a whole record.
SessionRecord decode_record(std::span<const std::byte> bytes, const std::string& name);

}  // namespace infini::serve
