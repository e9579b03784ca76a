// libFuzzer target for the session state reader: any input must either decode into a state that
// encodes back to exactly the same bytes (an older version's: to bytes of the current version that
// round-trip exactly), or be rejected with a one-line infini::Error naming
// the file. Crashes, sanitizer reports, other exceptions (bad_alloc, length_error) and a broken
// round trip are findings. Random mutations almost never keep the checksum right, so each input
// is also tried with its checksum repaired: that is what reaches the parser behind the check.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "infini/error.hpp"
#include "formats/session_state.hpp"

namespace {

const std::string kName = "fuzz.state";

void check_one(std::span<const std::byte> bytes) {
  try {
    const infini::stream::SessionState state = infini::stream::decode_session_state(bytes, kName);
    const std::vector<std::byte> again = infini::stream::encode_session_state(state);
    uint32_t version = 0;
    std::memcpy(&version, bytes.data() + 8, 4);  // a decoded file is longer than its header
    if (version == infini::stream::kSessionStateVersion) {
      if (again.size() != bytes.size() || std::memcmp(again.data(), bytes.data(), bytes.size()) != 0) __builtin_trap();
    } else {
      // An older version is written back in the current one, which must round-trip exactly.
      const infini::stream::SessionState current = infini::stream::decode_session_state(again, kName);
      if (infini::stream::encode_session_state(current) != again || current.tokens_seen != state.tokens_seen)
        __builtin_trap();
    }
    if (state.tokens_seen < 0 || int64_t(state.layers.size()) != state.fingerprint.layers) __builtin_trap();
  } catch (const infini::Error& e) {
    const std::string_view message = e.what();
    if (!message.starts_with("fuzz.state: ") || message.find('\n') != std::string_view::npos) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  check_one(bytes);
  if (size >= 8) {
    std::vector<std::byte> repaired(bytes.begin(), bytes.end());
    const uint64_t sum = infini::stream::session_state_checksum(std::span(repaired).first(size - 8));
    std::memcpy(repaired.data() + size - 8, &sum, 8);
    check_one(repaired);
  }
  return 0;
}
