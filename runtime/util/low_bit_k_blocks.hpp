#pragma once
// ggml's 2- and 3-bit K formats, super-blocks of 256 values in sixteen sub-blocks of 16. Value
// 128 h + 32 j + l of a block (h < 2, j < 4, l < 32) keeps its two low bits at bits 2j of byte
// 32 h + l of qs[64]; its sub-block is its index / 16.
//   Q2_K (84 bytes): scales[16] (low nibble: the sub-block's scale, high nibble: its min), qs[64],
//     f16 d, f16 dmin; value = d * scale * q - dmin * min.
//   Q3_K (110 bytes): hmask[32] (bit 4h + j of byte l: the value's third bit), qs[64], scales[12]
//     (sixteen 6-bit scales: low nibbles of bytes 0-7 for sub-blocks 0-7 and their high nibbles
//     for 8-15, the top two bits of sub-block s at bits 2 (s / 4) of byte 8 + s % 4), f16 d;
//     value = d * (scale - 32) * (q - 4), q with the third bit set counting 4 more.
// Decoded to double, and encoded byte for byte as ggml's quantize_row_q2_K_ref and
// quantize_row_q3_K_ref write them (llama-quantize's path without an importance matrix).
#include <cstddef>

#include "infini/element_type.hpp"

namespace infini {

constexpr bool is_low_bit_k_block(ElementType t) noexcept { return t == ElementType::Q2_K || t == ElementType::Q3_K; }

void decode_low_bit_k_block(ElementType type, const std::byte* block, double* out);  // 256 values
void encode_low_bit_k_block(ElementType type, const float* x, std::byte* block);     // finite values

}  // namespace infini
