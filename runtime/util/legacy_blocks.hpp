#pragma once
// ggml's 32-value block formats (its "legacy" quants Q8_0, Q4_0, Q4_1, Q5_0 and Q5_1; layouts in
// include/infini/element_type.hpp): one block at a time, decoded to double and encoded byte for
// byte as ggml's reference quantizers (quantize_row_*_ref) write them. util/block_codec.cpp walks
// tensors of blocks with these.
#include <cstddef>

#include "infini/element_type.hpp"

namespace infini {

inline constexpr unsigned kLegacyBlock = 32;  // values per block

constexpr bool is_legacy_block(ElementType t) noexcept {
  return t == ElementType::Q8_0 || t == ElementType::Q4_0 || t == ElementType::Q4_1 || t == ElementType::Q5_0 ||
         t == ElementType::Q5_1;
}

void decode_legacy_block(ElementType type, const std::byte* block, double* out);  // 32 values
void encode_legacy_block(ElementType type, const float* x, std::byte* block);     // 32 finite values

}  // namespace infini
