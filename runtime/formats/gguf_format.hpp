#pragma once
// The GGUF container format (versions 2 and 3, little-endian) as the reader and the writer share
// it. Layout of a file:
//   "GGUF"  u32 version  u64 tensor_count  u64 kv_count
//   kv_count x   { string key, u32 value_type, value }
//   tensor_count x { string name, u32 n_dims, u64 ne[n_dims], u32 ggml_type, u64 offset }
//   padding to `general.alignment` (default 32), then the data section; each tensor's offset is
//   relative to the data section and a multiple of the alignment.
// A string is a u64 byte length and the bytes (UTF-8, no terminator). An array is a u32 element
// type, a u64 count and the elements. Version 1 (u32 counts) is obsolete and not read.
#include <cstddef>
#include <cstdint>

#include "formats/tensor_view.hpp"

namespace infini::model::gguf {

inline constexpr char kMagic[4] = {'G', 'G', 'U', 'F'};
inline constexpr uint32_t kVersion = 3;  // what the writer produces
inline constexpr uint32_t kDefaultAlignment = 32;
inline constexpr uint32_t kMaxDims = 4;  // ggml's GGML_MAX_DIMS
inline constexpr const char* kAlignmentKey = "general.alignment";

enum class ValueType : uint32_t {
  U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, Bool = 7,
  String = 8, Array = 9, U64 = 10, I64 = 11, F64 = 12,
};
inline constexpr uint32_t kValueTypeCount = 13;

constexpr const char* value_type_name(ValueType t) noexcept {
  switch (t) {
    case ValueType::U8: return "u8";
    case ValueType::I8: return "i8";
    case ValueType::U16: return "u16";
    case ValueType::I16: return "i16";
    case ValueType::U32: return "u32";
    case ValueType::I32: return "i32";
    case ValueType::F32: return "f32";
    case ValueType::Bool: return "bool";
    case ValueType::String: return "string";
    case ValueType::Array: return "array";
    case ValueType::U64: return "u64";
    case ValueType::I64: return "i64";
    case ValueType::F64: return "f64";
  }
  return "?";
}

// Encoded size of a fixed-size value; 0 for string and array.
constexpr std::size_t scalar_size(ValueType t) noexcept {
  switch (t) {
    case ValueType::U8: case ValueType::I8: case ValueType::Bool: return 1;
    case ValueType::U16: case ValueType::I16: return 2;
    case ValueType::U32: case ValueType::I32: case ValueType::F32: return 4;
    case ValueType::U64: case ValueType::I64: case ValueType::F64: return 8;
    case ValueType::String: case ValueType::Array: return 0;
  }
  return 0;
}

constexpr bool is_integer(ValueType t) noexcept {
  return t == ValueType::U8 || t == ValueType::I8 || t == ValueType::U16 || t == ValueType::I16 ||
         t == ValueType::U32 || t == ValueType::I32 || t == ValueType::U64 || t == ValueType::I64;
}


}  // namespace infini::model::gguf

#include <span>
#include <string>

namespace infini::model::gguf {

// "[64, 32]" for messages (ggml order, shape[0] first).
inline std::string shape_text(std::span<const int64_t> shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

}  // namespace infini::model::gguf
