// libFuzzer target for the .npy parser: any input must either parse into a consistent array or
// be rejected with a one-line infini::Error naming the file. Crashes, sanitizer reports, other
// exceptions (bad_alloc, length_error) and broken invariants are findings.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "infini/error.hpp"
#include "infini/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  constexpr std::string_view kName = "fuzz.npy";
  try {
    const infini::NpyArray a = infini::parse_npy({data, size}, kName);
    const auto n = static_cast<std::size_t>(a.elements());
    if (a.shape.size() > infini::kNpyMaxRank) __builtin_trap();
    if (a.bytes.size() != infini::element_bytes(a.dtype, n)) __builtin_trap();
    if (a.to_floats().size() != n) __builtin_trap();
  } catch (const infini::Error& e) {
    const std::string_view message = e.what();
    if (!message.starts_with("fuzz.npy: ") || message.find('\n') != std::string_view::npos) __builtin_trap();
  }
  return 0;
}
