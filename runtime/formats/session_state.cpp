#include "formats/session_state.hpp"

#include <cstring>

#include "infini/error.hpp"
#include "io/atomic_file.hpp"
#include "io/mapped_file.hpp"

namespace infini::stream {
namespace {

constexpr char kMagic[8] = {'I', 'N', 'F', 'S', 'T', 'A', 'T', 'E'};

class Writer {
 public:
  template <typename T>
  void put(T v) {
    const size_t at = out.size();
    out.resize(at + sizeof(T));
    std::memcpy(out.data() + at, &v, sizeof(T));
  }
  void blob(const std::vector<std::byte>& b) {
    put<uint64_t>(b.size());
    out.insert(out.end(), b.begin(), b.end());
  }
  std::vector<std::byte> out;
};

class Reader {
 public:
  Reader(std::span<const std::byte> bytes, const std::string& name) : bytes_(bytes), name_(name) {}
  template <typename T>
  T get(const char* what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, bytes_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return v;
  }
  std::vector<std::byte> blob(const char* what) {
    const uint64_t n = get<uint64_t>(what);
    need(n, what);
    std::vector<std::byte> b(bytes_.begin() + std::ptrdiff_t(at_), bytes_.begin() + std::ptrdiff_t(at_ + n));
    at_ += n;
    return b;
  }
  size_t left() const { return bytes_.size() - at_; }

 private:
  void need(uint64_t n, const char* what) const {
    if (n > bytes_.size() - at_) throw Error(name_ + ": state file is truncated in " + what);
  }
  std::span<const std::byte> bytes_;
  const std::string& name_;
  size_t at_ = 0;
};

}  // namespace

// FNV-1a, 64 bit: catches truncation, bit flips and edits; not a defence against forgery.
uint64_t session_state_checksum(std::span<const std::byte> body) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (std::byte b : body) h = (h ^ uint64_t(b)) * 0x100000001b3ull;
  return h;
}

std::string StateFingerprint::describe() const {
  return "vocab " + std::to_string(vocab) + ", embd " + std::to_string(embd) + ", " + std::to_string(layers) +
         " layers, heads " + std::to_string(heads) + "/" + std::to_string(heads_kv) + ", head dim " +
         std::to_string(head_dim) + ", ffn " + std::to_string(ffn) + ", segment " + std::to_string(segment) +
         ", update " + std::to_string(update) + ", first segment " + std::to_string(first_segment) + ", gate sign " +
         std::to_string(gate_sign) + ", memory " + std::to_string(memory) + ", input type " + std::to_string(input_type) +
         (sinks >= 0 ? ", sliding with " + std::to_string(sinks) + " sinks" : std::string(", segments"));
}

std::vector<std::byte> encode_session_state(const SessionState& state) {
  Writer w;
  for (char c : kMagic) w.put<char>(c);
  w.put<uint32_t>(kSessionStateVersion);
  const StateFingerprint& f = state.fingerprint;
  for (int64_t v : {f.vocab, f.embd, f.layers, f.heads, f.heads_kv, f.head_dim, f.ffn, f.segment}) w.put<int64_t>(v);
  for (uint32_t v : {f.update, f.first_segment, f.gate_sign, f.memory, f.input_type}) w.put<uint32_t>(v);
  w.put<int64_t>(f.sinks);
  w.put<uint64_t>(state.model_digest);
  w.put<int64_t>(state.tokens_seen);
  w.put<uint64_t>(state.layers.size());
  for (const ops::LayerSnapshot& l : state.layers) {
    w.put<uint32_t>(l.open);
    w.put<int64_t>(l.segments_written);
    for (const auto* b : {&l.m, &l.z, &l.k, &l.v, &l.kr}) w.blob(*b);
  }
  w.put<uint64_t>(state.last_logits.size());
  for (float x : state.last_logits) w.put<float>(x);
  w.put<uint64_t>(session_state_checksum(w.out));
  return std::move(w.out);
}

SessionState decode_session_state(std::span<const std::byte> bytes, const std::string& name) {
  if (bytes.size() < sizeof(kMagic) + 4 + 8) throw Error(name + ": too short to be an infini state file");
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) throw Error(name + ": not an infini state file (bad magic)");
  uint64_t stored = 0;
  std::memcpy(&stored, bytes.data() + bytes.size() - 8, 8);
  const auto body = bytes.first(bytes.size() - 8);
  Reader r(body, name);
  for (size_t i = 0; i < sizeof(kMagic); ++i) r.get<char>("the magic");
  const uint32_t version = r.get<uint32_t>("the version");
  if (version < 1 || version > kSessionStateVersion)
    throw Error(name + ": state file version " + std::to_string(version) + " is not supported (this build reads " +
                std::to_string(kSessionStateVersion) + ")");
  if (session_state_checksum(body) != stored)
    throw Error(name + ": state file checksum mismatch (the file is damaged or truncated)");

  SessionState state;
  StateFingerprint& f = state.fingerprint;
  for (int64_t* v : {&f.vocab, &f.embd, &f.layers, &f.heads, &f.heads_kv, &f.head_dim, &f.ffn, &f.segment})
    *v = r.get<int64_t>("the model fingerprint");
  for (uint32_t* v : {&f.update, &f.first_segment, &f.gate_sign, &f.memory, &f.input_type})
    *v = r.get<uint32_t>("the model fingerprint");
  if (version >= 3) f.sinks = r.get<int64_t>("the model fingerprint");
  if (f.sinks < -1) throw Error(name + ": state file has " + std::to_string(f.sinks) + " sinks");
  if (version >= 2) state.model_digest = r.get<uint64_t>("the model digest");
  state.tokens_seen = r.get<int64_t>("the token count");
  const uint64_t layers = r.get<uint64_t>("the layer count");
  // Each layer needs at least its fixed fields, so a hostile count cannot make us allocate.
  constexpr uint64_t kLayerMinBytes = 4 + 8 + 5 * 8;
  if (layers > r.left() / kLayerMinBytes || int64_t(layers) != f.layers)
    throw Error(name + ": state file layer count " + std::to_string(layers) + " does not fit the file");
  state.layers.resize(layers);
  for (ops::LayerSnapshot& l : state.layers) {
    l.open = r.get<uint32_t>("a layer header");
    l.segments_written = r.get<int64_t>("a layer header");
    for (auto* b : {&l.m, &l.z, &l.k, &l.v, &l.kr}) *b = r.blob("a layer's state");
  }
  if (version >= 2) {
    const uint64_t logits = r.get<uint64_t>("the logit count");
    if (logits != 0 && (int64_t(logits) != f.vocab || logits > r.left() / sizeof(float)))
      throw Error(name + ": state file logit count " + std::to_string(logits) + " does not fit the file");
    state.last_logits.resize(logits);
    for (float& x : state.last_logits) x = r.get<float>("the logits");
  }
  if (r.left() != 0) throw Error(name + ": state file has " + std::to_string(r.left()) + " unexpected trailing bytes");
  if (state.tokens_seen < 0) throw Error(name + ": state file has a negative token count");
  return state;
}

void write_session_state(const std::filesystem::path& path, const SessionState& state) {
  const std::vector<std::byte> bytes = encode_session_state(state);
  io::AtomicFile file(path);
  file.write(bytes);
  file.commit();
}

SessionState read_session_state(const std::filesystem::path& path) {
  const io::MappedFile file(path);
  return decode_session_state(file.bytes(), path.string());
}

}  // namespace infini::stream
