#include "serve/session_record.hpp"

#include <cstring>
#include <random>

#include "infini/error.hpp"

namespace infini::serve {
namespace {

constexpr char kMagic[8] = {'I', 'N', 'F', 'S', 'R', 'E', 'C', '1'};
constexpr size_t kHeader = sizeof(kMagic) + 4 * 8;

template <typename T>
void put(std::vector<std::byte>& out, size_t at, T v) {
  std::memcpy(out.data() + at, &v, sizeof(T));
}
template <typename T>
T get(std::span<const std::byte> in, size_t at) {
  T v;
  std::memcpy(&v, in.data() + at, sizeof(T));
  return v;
}

}  // namespace

std::string new_session_id() {
  static thread_local std::mt19937_64 rng{std::random_device{}() ^ (uint64_t(std::random_device{}()) << 32)};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id(32, '0');
  for (size_t i = 0; i < id.size(); i += 16)
    for (uint64_t r = rng(), j = 0; j < 16; ++j, r >>= 4) id[i + j] = kHex[r & 15];
  return id;
}

std::vector<std::byte> encode_record(const SessionRecord& r) {
  std::vector<std::byte> out(kHeader + r.state.size());
  std::memcpy(out.data(), kMagic, sizeof(kMagic));
  put<uint64_t>(out, 8, r.version);
  put<uint64_t>(out, 16, r.model_digest);
  put<int64_t>(out, 24, r.tokens_seen);
  put<uint64_t>(out, 32, r.state.size());
  if (!r.state.empty()) std::memcpy(out.data() + kHeader, r.state.data(), r.state.size());
  return out;
}

SessionRecord decode_record(std::span<const std::byte> in, const std::string& name) {
  if (in.size() < kHeader || std::memcmp(in.data(), kMagic, sizeof(kMagic)) != 0)
    throw Error(name + ": not an infini session record");
  SessionRecord r;
  r.version = get<uint64_t>(in, 8);
  r.model_digest = get<uint64_t>(in, 16);
  r.tokens_seen = get<int64_t>(in, 24);
  const uint64_t length = get<uint64_t>(in, 32);
  if (length != in.size() - kHeader || r.tokens_seen < 0)
    throw Error(name + ": session record is damaged (its state length or token count does not fit)");
  r.state.assign(in.begin() + kHeader, in.end());
  r.state_bytes = r.state.size();
  return r;
}

}  // namespace infini::serve
