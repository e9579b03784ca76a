// A value is non-finite exactly when its exponent bits are all ones, in f32, f16 and bf16 alike, so
// the scan compares bit patterns and never converts (fast, and exact for every payload).
#include "model/weight_scan.hpp"

#include <cstring>
#include <string>

#include "infini/error.hpp"
#include "util/block_codec.hpp"

namespace infini::model {

namespace {

template <typename Bits>
NonFiniteCount scan(const TensorView& t, Bits exponent_mask) {
  NonFiniteCount r;
  const std::size_t n = t.data.size() / sizeof(Bits);
  for (std::size_t i = 0; i < n; ++i) {
    Bits b;
    std::memcpy(&b, t.data.data() + i * sizeof(Bits), sizeof b);
    if ((b & exponent_mask) == exponent_mask) {
      if (r.count == 0) r.first = i;
      ++r.count;
    }
  }
  return r;
}

}  // namespace

NonFiniteCount count_non_finite(const TensorView& t) {
  switch (t.type) {
    case ElementType::F32: return scan<uint32_t>(t, 0x7f800000u);
    case ElementType::F16: return scan<uint16_t>(t, 0x7c00u);
    case ElementType::BF16: return scan<uint16_t>(t, 0x7f80u);
    case ElementType::Q8_0:
    case ElementType::Q4_0:
    case ElementType::Q4_1:
    case ElementType::Q5_0:
    case ElementType::Q5_1:
    case ElementType::IQ4_NL:
    case ElementType::IQ4_XS:
    case ElementType::Q2_K:
    case ElementType::Q3_K:
    case ElementType::Q4_K:
    case ElementType::Q5_K:
    case ElementType::Q6_K: {  // integers behind a scale: only a scale can be non-finite
      const int64_t bad = first_bad_scale(t.type, t.data);
      if (bad >= 0)
        throw Error("tensor '" + t.name + "': the scale of " + std::string(element_name(t.type)) + " block " +
                    std::to_string(bad) + " is NaN or infinite");
      return {};
    }
  }
  return {};  // unreachable: -Wswitch names this place when a type is added
}

}  // namespace infini::model
