#pragma once
// ggml's non-linear 4-bit formats: each 4-bit index picks one of 16 fixed levels (kIq4Levels,
// denser near zero, as weights are), scaled per block. IQ4_NL: blocks of 32 values, an f16 scale
// d then 16 bytes of indices laid out as Q4_0's nibbles (value = d * level). IQ4_XS: super-blocks
// of 256, f16 d, a u16 of the 6-bit sub-block scales' top bit pairs, 4 bytes of their low
// nibbles, then 128 bytes of indices (sub-block s's 32 values as an IQ4_NL block's 16 bytes);
// value = d * (scale_s - 32) * level. Decoded to double, and encoded byte for byte as
// ggml_quantize_chunk writes them without an importance matrix (llama-quantize's path; for
// IQ4_XS also quantize_row_iq4_xs_ref).
#include <cstddef>
#include <cstdint>

#include "infini/element_type.hpp"

namespace infini {

inline constexpr int8_t kIq4Levels[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

constexpr bool is_iq4_block(ElementType t) noexcept { return t == ElementType::IQ4_NL || t == ElementType::IQ4_XS; }

void decode_iq4_block(ElementType type, const std::byte* block, double* out);  // 32 or 256 values
void encode_iq4_block(ElementType type, const float* x, std::byte* block);     // finite values

}  // namespace infini
