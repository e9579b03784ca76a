#include "model/tensor_values.hpp"

#include <cstring>
#include <optional>

#include "infini/error.hpp"
#include "util/half.hpp"
#include "util/scalar_bytes.hpp"

namespace infini::model {
namespace {

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace

void check_tensor(const TensorView& t, const std::vector<int64_t>& shape) {
  if (t.shape != shape)
    throw Error("tensor '" + t.name + "' has shape " + shape_string(t.shape) + ", expected " + shape_string(shape));
  const std::optional<uint64_t> want = element_bytes(t.type, uint64_t(t.elements()));
  if (!want || t.data.size() != *want)
    throw Error("tensor '" + t.name + "' holds " + std::to_string(t.data.size()) + " bytes, its shape " +
                shape_string(t.shape) + " of " + std::string(element_name(t.type)) + " needs " +
                (want ? std::to_string(*want) : std::string("a whole number of blocks")));
}

void widen(const TensorView& t, int64_t first, int64_t count, double* out) {
  const std::size_t bytes = scalar_bytes(t.type);
  if (first < 0 || count < 0 || first + count > t.elements() ||
      static_cast<std::size_t>(first + count) * bytes > t.data.size())
    throw Error("tensor '" + t.name + "': elements [" + std::to_string(first) + ", " + std::to_string(first + count) +
                ") are out of range");
  const std::byte* p = t.data.data() + static_cast<std::size_t>(first) * bytes;
  const std::size_t n = static_cast<std::size_t>(count);
  // One case per element type: -Wswitch names this place when a type is added.
  switch (t.type) {
    case ElementType::F32:
      for (std::size_t i = 0; i < n; ++i) {
        float f;
        std::memcpy(&f, p + i * 4, 4);
        out[i] = static_cast<double>(f);
      }
      return;
    case ElementType::F16:
      for (std::size_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, p + i * 2, 2);
        out[i] = static_cast<double>(half_to_float(h));
      }
      return;
  }
}

std::vector<double> widen_all(const TensorView& t) {
  std::vector<double> out(static_cast<std::size_t>(t.elements()));
  widen(t, 0, t.elements(), out.data());
  return out;
}

}  // namespace infini::model
