#pragma once
// One metadata value of a GGUF file, kept as a view of its encoded bytes inside the file: parsing
// allocates nothing per array element, so a hostile file with millions of elements costs no more
// memory than the file itself. The reader validated the bytes; the accessors below decode them
// and throw infini::Error (naming `what`, usually "<file>: key 'k'") on a type that does not fit.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "formats/gguf_format.hpp"

namespace infini::model {

struct GgufValue {
  gguf::ValueType type = gguf::ValueType::U8;
  gguf::ValueType element_type = gguf::ValueType::U8;  // arrays only
  uint64_t count = 0;                                  // arrays only: number of elements
  // Scalars: the value's bytes. Strings: the characters. Arrays: the encoded elements.
  std::span<const std::byte> payload;

  // "u32", "string", "array of f32", ...
  std::string type_name() const;
};

// Integers of any integer type whose value fits the target; floats from f32 or f64.
uint32_t value_u32(const GgufValue& v, std::string_view what);
int32_t value_i32(const GgufValue& v, std::string_view what);
uint64_t value_u64(const GgufValue& v, std::string_view what);
int64_t value_i64(const GgufValue& v, std::string_view what);
float value_f32(const GgufValue& v, std::string_view what);
double value_f64(const GgufValue& v, std::string_view what);
bool value_bool(const GgufValue& v, std::string_view what);
std::string_view value_string(const GgufValue& v, std::string_view what);
std::vector<std::string> value_string_array(const GgufValue& v, std::string_view what);
std::vector<float> value_f32_array(const GgufValue& v, std::string_view what);   // f32 or f64 elements
std::vector<int64_t> value_int_array(const GgufValue& v, std::string_view what); // any integer elements

}  // namespace infini::model
