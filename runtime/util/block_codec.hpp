#pragma once
// Block formats on the host: decoding to double (for the float64 references, norms and checks)
// and round-to-nearest encoding (for `infini quantize`, `infini make-model` and the tests), each
// as ggml defines the format's blocks. The kernels decode the same blocks in registers
// (shaders/common/storage.glsl).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "infini/element_type.hpp"

namespace infini {

// Values [first, first + count) of a tensor of `type` stored in `data`; `first` and `count` need
// not be whole blocks. The caller has checked that the range lies inside `data`.
void decode_blocks(ElementType type, std::span<const std::byte> data, uint64_t first, uint64_t count, double* out);

// `values` (a whole number of blocks) in `type`, byte for byte as ggml's reference quantizers
// (quantize_row_*_ref, no importance matrix) write them: Q8_0 takes d = max|x| / 127 per block
// and q = round(x / d); Q4_0 (Q5_0) takes d = m / -8 (-16) for m the value of largest magnitude
// and n = min(15 (31), round(x / d + 8 (16))); Q4_1 (Q5_1) d = (max - min) / 15 (31) and
// n = round((x - min) / d) (util/legacy_blocks.cpp); bf16 rounds to nearest even; IQ4_NL and
// IQ4_XS fit each 32 values' scale over 15 candidates (util/iq4_blocks.cpp); Q2_K and Q3_K as
// util/low_bit_k_blocks.cpp says; the K formats fit
// each sub-block's scale (and min) by weighted least squares over a few candidates, then quantize
// the scales (block_codec.cpp). Throws infini::Error when the count is not whole blocks, or a
// value to put in a block format is not finite.
// threads: for thousands of blocks or more, encode shares of whole blocks on this many threads
// (0: one per core); every block is encoded from its own values, so the bytes do not depend on it.
// One by default: library callers opt in (qemu-user, which the arm64 tests run under, hangs on
// threads here).
std::vector<std::byte> encode_blocks(ElementType type, std::span<const float> values, unsigned threads = 1);

// Whether a block format keeps a second f16 right after its scale d: the min m of Q4_1 and Q5_1,
// the min scale dmin of Q2_K, Q4_K and Q5_K.
constexpr bool has_min_scale(ElementType t) noexcept {
  return t == ElementType::Q4_1 || t == ElementType::Q5_1 || t == ElementType::Q2_K || t == ElementType::Q4_K ||
         t == ElementType::Q5_K;
}

// The byte of a block where its f16 scale d starts: 0, but at the end of Q2_K (80, dmin after it),
// Q3_K (108) and Q6_K (208).
constexpr uint32_t scale_offset(ElementType t) noexcept {
  return t == ElementType::Q6_K ? 208 : t == ElementType::Q3_K ? 108 : t == ElementType::Q2_K ? 80 : 0;
}

// Index of the first block whose f16 scale (or min, has_min_scale) is NaN or infinite, or -1
// (always for f32, f16 and bf16).
int64_t first_bad_scale(ElementType type, std::span<const std::byte> data);

}  // namespace infini
