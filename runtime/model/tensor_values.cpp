#include "model/tensor_values.hpp"

#include <algorithm>
#include <cstring>
#include <optional>

#include "infini/error.hpp"
#include "util/block_codec.hpp"

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
  const ElementTraits& e = element_traits(t.type);
  const uint64_t end = uint64_t(std::max<int64_t>(first + count, 0));
  const uint64_t blocks_needed = (end + e.block_elements - 1) / e.block_elements;
  if (first < 0 || count < 0 || first + count > t.elements() || blocks_needed * e.block_bytes > t.data.size())
    throw Error("tensor '" + t.name + "': elements [" + std::to_string(first) + ", " + std::to_string(first + count) +
                ") are out of range");
  decode_blocks(t.type, t.data, uint64_t(first), uint64_t(count), out);
}

std::vector<double> widen_all(const TensorView& t) {
  std::vector<double> out(static_cast<std::size_t>(t.elements()));
  widen(t, 0, t.elements(), out.data());
  return out;
}

void add_bias_rows(std::vector<double>& x, const std::optional<TensorView>& bias) {
  if (!bias) return;
  const std::vector<double> b = widen_all(*bias);
  for (size_t i = 0; i < x.size(); ++i) x[i] += b[i % b.size()];
}

}  // namespace infini::model
