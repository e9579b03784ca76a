#pragma once
// Every element type infini stores tensors in, with its traits in one table: the GGUF reader, the
// host conversions, the kernels and the options all read this table, so a new type is a new row
// here plus the kernels that read it. A block format (ggml's Q8_0: 32 values in 34 bytes) is a row
// with block_elements > 1; f32 and f16 are blocks of one element. Block formats store weights
// only (matrices and the embedding table); activations and caches are f32 or f16.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace infini {

enum class ElementType : uint8_t {
  F32, F16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K, BF16, Q4_1, Q5_0, Q5_1, IQ4_NL, IQ4_XS, Q2_K, Q3_K
};

struct ElementTraits {
  ElementType type;
  std::string_view name;    // as options, files and messages spell it: "f32"
  uint32_t ggml_type;       // the GGUF tensor type id (ggml_type)
  uint32_t block_elements;  // values per block
  uint32_t block_bytes;     // bytes per block
};

inline constexpr ElementTraits kElementTypes[] = {
    {ElementType::F32, "f32", 0, 1, 4},
    {ElementType::F16, "f16", 1, 1, 2},
    // ggml's Q8_0: an f16 scale d, then 32 int8 values q; each value is d * q.
    {ElementType::Q8_0, "q8_0", 8, 32, 34},
    // ggml's Q4_0: an f16 scale d, then 16 bytes of 4-bit values n (value j < 16 in the low
    // nibble of byte j, value j + 16 in its high nibble); each value is d * (n - 8).
    {ElementType::Q4_0, "q4_0", 2, 32, 18},
    // ggml's K formats: super-blocks of 256 values in sub-blocks with their own quantized scales
    // (util/block_codec.cpp and shaders/common/storage.glsl spell out the byte layouts).
    // Q4_K: f16 d and dmin, 12 bytes of 6-bit sub-block scales and mins, 128 bytes of nibbles;
    // value = d * scale * n - dmin * min, eight sub-blocks of 32.
    {ElementType::Q4_K, "q4_k", 12, 256, 144},
    // Q5_K: as Q4_K plus 32 bytes holding each value's fifth bit.
    {ElementType::Q5_K, "q5_k", 13, 256, 176},
    // Q6_K: 128 bytes of low nibbles, 64 of high bit pairs, 16 int8 sub-block scales, f16 d;
    // value = d * scale * (q - 32), sixteen sub-blocks of 16.
    {ElementType::Q6_K, "q6_k", 14, 256, 210},
    // bfloat16: the high 16 bits of an f32 (its exponent, 7 bits of mantissa).
    {ElementType::BF16, "bf16", 30, 1, 2},
    // ggml's Q4_1: f16 d and m, then 16 bytes of nibbles as Q4_0's; each value is d * n + m.
    {ElementType::Q4_1, "q4_1", 3, 32, 20},
    // ggml's Q5_0: f16 d, 4 bytes qh (bit j: the fifth bit, 16, of value j), 16 bytes of nibbles as
    // Q4_0's; each value is d * (n - 16). Q5_1: f16 d and m, qh, the nibbles; d * n + m.
    {ElementType::Q5_0, "q5_0", 6, 32, 22},
    {ElementType::Q5_1, "q5_1", 7, 32, 24},
    // ggml's IQ4_NL: f16 d, 16 bytes of 4-bit indices into 16 fixed levels, laid out as Q4_0's
    // nibbles; IQ4_XS: super-blocks of 256 with 6-bit sub-block scales (util/iq4_blocks.hpp).
    {ElementType::IQ4_NL, "iq4_nl", 20, 32, 18},
    {ElementType::IQ4_XS, "iq4_xs", 23, 256, 136},
    // ggml's Q2_K: sixteen sub-blocks of 16, each with a 4-bit scale and a 4-bit min, 2-bit values,
    // f16 d and dmin; value = d * scale * q - dmin * min. Q3_K: 6-bit signed sub-block scales, 3-bit
    // values (two low bits plus a bit in a mask), f16 d; value = d * scale * (q - 4)
    // (util/low_bit_k_blocks.hpp).
    {ElementType::Q2_K, "q2_k", 10, 256, 84},
    {ElementType::Q3_K, "q3_k", 11, 256, 110},
};

constexpr const ElementTraits& element_traits(ElementType t) noexcept { return kElementTypes[std::size_t(t)]; }
constexpr std::string_view element_name(ElementType t) noexcept { return element_traits(t).name; }

// The type with this GGUF id or name; nullopt when infini does not store it.
constexpr std::optional<ElementType> element_type_from_ggml(uint32_t ggml_type) noexcept {
  for (const ElementTraits& t : kElementTypes)
    if (t.ggml_type == ggml_type) return t.type;
  return std::nullopt;
}
constexpr std::optional<ElementType> element_type_from_name(std::string_view name) noexcept {
  for (const ElementTraits& t : kElementTypes)
    if (t.name == name) return t.type;
  return std::nullopt;
}

// Bytes of `count` values, or nullopt when `count` is not a whole number of blocks or the size
// overflows.
constexpr std::optional<uint64_t> element_bytes(ElementType t, uint64_t count) noexcept {
  const ElementTraits& e = element_traits(t);
  if (count % e.block_elements != 0) return std::nullopt;
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(count / e.block_elements, uint64_t(e.block_bytes), &bytes)) return std::nullopt;
  return bytes;
}

}  // namespace infini
