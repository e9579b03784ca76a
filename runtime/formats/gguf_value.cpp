// Decoding of GGUF metadata values. The reader has already checked that every payload holds
// exactly what its type and count say, so the decoders only convert and range-check.
#include "formats/gguf_value.hpp"

#include <cfloat>
#include <cmath>
#include <cstring>
#include <optional>
#include <utility>

#include "infini/error.hpp"
#include "formats/byte_cursor.hpp"

namespace infini::model {

using gguf::ValueType;

namespace {

template <typename T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <typename T, typename S>
std::optional<T> fit(S v) {
  if (std::in_range<T>(v)) return static_cast<T>(v);
  return std::nullopt;
}

// An integer of encoded type `t` at `p`, if it is one and fits T.
template <typename T>
std::optional<T> decode_integer(ValueType t, const std::byte* p) {
  switch (t) {
    case ValueType::U8: return fit<T>(load<uint8_t>(p));
    case ValueType::I8: return fit<T>(load<int8_t>(p));
    case ValueType::U16: return fit<T>(load<uint16_t>(p));
    case ValueType::I16: return fit<T>(load<int16_t>(p));
    case ValueType::U32: return fit<T>(load<uint32_t>(p));
    case ValueType::I32: return fit<T>(load<int32_t>(p));
    case ValueType::U64: return fit<T>(load<uint64_t>(p));
    case ValueType::I64: return fit<T>(load<int64_t>(p));
    default: return std::nullopt;
  }
}

[[noreturn]] void wrong_type(const GgufValue& v, std::string_view what, const char* expected) {
  throw Error(std::string(what) + " has type " + v.type_name() + ", expected " + expected);
}

template <typename T>
T integer(const GgufValue& v, std::string_view what, const char* target) {
  if (!gguf::is_integer(v.type)) wrong_type(v, what, "an integer");
  const auto r = decode_integer<T>(v.type, v.payload.data());
  if (!r) throw Error(std::string(what) + " (" + v.type_name() + ") holds a value out of range for " + target);
  return *r;
}

double floating(ValueType t, const std::byte* p) {
  return t == ValueType::F32 ? static_cast<double>(load<float>(p)) : load<double>(p);
}

}  // namespace

std::string GgufValue::type_name() const {
  if (type != ValueType::Array) return gguf::value_type_name(type);
  return std::string("array of ") + gguf::value_type_name(element_type);
}

uint32_t value_u32(const GgufValue& v, std::string_view what) { return integer<uint32_t>(v, what, "u32"); }
int32_t value_i32(const GgufValue& v, std::string_view what) { return integer<int32_t>(v, what, "i32"); }
uint64_t value_u64(const GgufValue& v, std::string_view what) { return integer<uint64_t>(v, what, "u64"); }
int64_t value_i64(const GgufValue& v, std::string_view what) { return integer<int64_t>(v, what, "i64"); }

double value_f64(const GgufValue& v, std::string_view what) {
  if (v.type != ValueType::F32 && v.type != ValueType::F64) wrong_type(v, what, "f32 or f64");
  return floating(v.type, v.payload.data());
}

float value_f32(const GgufValue& v, std::string_view what) {
  const double d = value_f64(v, what);
  if (std::isfinite(d) && std::fabs(d) > static_cast<double>(FLT_MAX))
    throw Error(std::string(what) + " (f64) holds a value out of range for f32");
  return static_cast<float>(d);
}

bool value_bool(const GgufValue& v, std::string_view what) {
  if (v.type != ValueType::Bool) wrong_type(v, what, "bool");
  return load<uint8_t>(v.payload.data()) != 0;
}

std::string_view value_string(const GgufValue& v, std::string_view what) {
  if (v.type != ValueType::String) wrong_type(v, what, "string");
  return {reinterpret_cast<const char*>(v.payload.data()), v.payload.size()};
}

std::vector<std::string> value_string_array(const GgufValue& v, std::string_view what) {
  if (v.type != ValueType::Array || v.element_type != ValueType::String) wrong_type(v, what, "array of string");
  std::vector<std::string> out;
  out.reserve(static_cast<std::size_t>(v.count));  // bounded by the payload size (>= 8 bytes each)
  ByteCursor c(v.payload, what);
  for (uint64_t i = 0; i < v.count; ++i) {
    const auto length = c.read<uint64_t>("string length");
    const auto chars = c.take(length, "string");
    out.emplace_back(reinterpret_cast<const char*>(chars.data()), chars.size());
  }
  return out;
}

std::vector<float> value_f32_array(const GgufValue& v, std::string_view what) {
  if (v.type != ValueType::Array || (v.element_type != ValueType::F32 && v.element_type != ValueType::F64))
    wrong_type(v, what, "array of f32");
  const std::size_t size = gguf::scalar_size(v.element_type);
  std::vector<float> out(static_cast<std::size_t>(v.count));
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double d = floating(v.element_type, v.payload.data() + i * size);
    if (std::isfinite(d) && std::fabs(d) > static_cast<double>(FLT_MAX))
      throw Error(std::string(what) + " element " + std::to_string(i) + " is out of range for f32");
    out[i] = static_cast<float>(d);
  }
  return out;
}

std::vector<int64_t> value_int_array(const GgufValue& v, std::string_view what) {
  if (v.type != ValueType::Array || !gguf::is_integer(v.element_type)) wrong_type(v, what, "array of integers");
  const std::size_t size = gguf::scalar_size(v.element_type);
  std::vector<int64_t> out(static_cast<std::size_t>(v.count));
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto r = decode_integer<int64_t>(v.element_type, v.payload.data() + i * size);
    if (!r) throw Error(std::string(what) + " element " + std::to_string(i) + " is out of range for i64");
    out[i] = *r;
  }
  return out;
}

}  // namespace infini::model
