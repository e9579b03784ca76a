#pragma once
// bfloat16 <-> binary32 on the host: a bfloat16 is the high half of an f32, so widening is a
// shift; narrowing rounds to nearest even and keeps NaN quiet, as ggml's fp32-to-bf16 does (no
// flush of subnormals).
#include <bit>
#include <cstdint>

namespace infini {

inline float bf16_to_float(uint16_t b) { return std::bit_cast<float>(uint32_t(b) << 16); }

inline uint16_t float_to_bf16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u);  // NaN, made quiet
  return uint16_t((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

}  // namespace infini
