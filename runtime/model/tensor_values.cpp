#include "model/tensor_values.hpp"

#include <cstring>

#include "infini/error.hpp"
#include "util/half.hpp"

namespace infini::model {
namespace {

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace

std::size_t tensor_type_bytes(TensorType type) {
  switch (type) {
    case TensorType::F32: return 4;
    case TensorType::F16: return 2;
  }
  throw Error("tensor type " + std::to_string(static_cast<uint32_t>(type)) + " is not supported");
}

const char* tensor_type_name(TensorType type) noexcept {
  switch (type) {
    case TensorType::F32: return "f32";
    case TensorType::F16: return "f16";
  }
  return "unknown";
}

void check_tensor(const TensorView& t, const std::vector<int64_t>& shape) {
  if (t.shape != shape)
    throw Error("tensor '" + t.name + "' has shape " + shape_string(t.shape) + ", expected " + shape_string(shape));
  const std::size_t want = static_cast<std::size_t>(t.elements()) * tensor_type_bytes(t.type);
  if (t.data.size() != want)
    throw Error("tensor '" + t.name + "' holds " + std::to_string(t.data.size()) + " bytes, its shape " +
                shape_string(t.shape) + " of " + tensor_type_name(t.type) + " needs " + std::to_string(want));
}

void widen(const TensorView& t, int64_t first, int64_t count, double* out) {
  const std::size_t bytes = tensor_type_bytes(t.type);
  if (first < 0 || count < 0 || first + count > t.elements() ||
      static_cast<std::size_t>(first + count) * bytes > t.data.size())
    throw Error("tensor '" + t.name + "': elements [" + std::to_string(first) + ", " + std::to_string(first + count) +
                ") are out of range");
  const std::byte* p = t.data.data() + static_cast<std::size_t>(first) * bytes;
  const std::size_t n = static_cast<std::size_t>(count);
  if (t.type == TensorType::F32) {
    for (std::size_t i = 0; i < n; ++i) {
      float f;
      std::memcpy(&f, p + i * 4, 4);
      out[i] = static_cast<double>(f);
    }
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, p + i * 2, 2);
      out[i] = static_cast<double>(half_to_float(h));
    }
  }
}

std::vector<double> widen_all(const TensorView& t) {
  std::vector<double> out(static_cast<std::size_t>(t.elements()));
  widen(t, 0, t.elements(), out.data());
  return out;
}

}  // namespace infini::model
