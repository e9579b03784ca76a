// Host fp16 conversion: exact round trips and IEEE round-to-nearest-even, since every f16
// tensor the device reads was converted by it.
#include <catch2/catch.hpp>
#include <cmath>

#include "util/half.hpp"

using infini::float_to_half;
using infini::half_to_float;

TEST_CASE("every finite half survives half -> float -> half", "[half]") {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = half_to_float(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      REQUIRE(std::isnan(half_to_float(float_to_half(f))));
      continue;
    }
    REQUIRE(float_to_half(f) == h);
  }
}

TEST_CASE("half decoding matches the binary16 definition", "[half]") {
  // value = (-1)^s * 2^(e-15) * (1 + m/1024), subnormals 2^-14 * m/1024
  for (uint32_t h = 0; h < 0x10000; h += 7) {
    const uint32_t s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    if (e == 31) continue;
    const double v = (s ? -1.0 : 1.0) * (e ? std::ldexp(1.0 + m / 1024.0, int(e) - 15) : std::ldexp(m / 1024.0, -14));
    REQUIRE(static_cast<double>(half_to_float(static_cast<uint16_t>(h))) == v);
  }
}

TEST_CASE("float to half rounds to nearest even and saturates to infinity", "[half]") {
  const float ulp1 = std::ldexp(1.0f, -10);  // spacing of halves in [1, 2)
  CHECK(float_to_half(1.0f + ulp1 / 2) == 0x3c00);                 // tie -> even (1.0)
  CHECK(float_to_half(1.0f + 3 * ulp1 / 2) == 0x3c02);             // tie -> even (1 + 2 ulp)
  CHECK(float_to_half(1.0f + ulp1 / 2 + ulp1 / 64) == 0x3c01);     // above the tie
  CHECK(float_to_half(65504.0f) == 0x7bff);                        // largest half
  CHECK(float_to_half(65519.0f) == 0x7bff);                        // below the rounding point
  CHECK(float_to_half(65520.0f) == 0x7c00);                        // rounds to infinity
  CHECK(float_to_half(-1e9f) == 0xfc00);
  CHECK(float_to_half(std::ldexp(1.0f, -24)) == 0x0001);           // smallest subnormal
  CHECK(float_to_half(std::ldexp(1.0f, -25)) == 0x0000);           // tie -> even (zero)
  CHECK(float_to_half(std::ldexp(1.5f, -25)) == 0x0001);
  CHECK(float_to_half(std::ldexp(3.0f, -25)) == 0x0002);           // 1.5 ulp tie -> even (2)
  CHECK(float_to_half(-0.0f) == 0x8000);
  CHECK(std::isinf(half_to_float(float_to_half(INFINITY))));
  CHECK(std::isnan(half_to_float(float_to_half(NAN))));
  // Carry out of the mantissa into the exponent.
  CHECK(float_to_half(2.0f - std::ldexp(1.0f, -12)) == 0x4000);
}
