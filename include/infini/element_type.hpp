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

enum class ElementType : uint8_t { F32, F16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K };

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
