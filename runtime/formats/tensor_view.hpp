#pragma once
// A tensor as a GGUF file stores it: name, element type, ggml-order shape (shape[0] contiguous)
// and a view of its bytes (in the memory-mapped file, or any buffer that outlives it).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "infini/element_type.hpp"

namespace infini::model {

struct TensorView {
  std::string name;
  ElementType type = ElementType::F32;
  std::vector<int64_t> shape;      // ggml order, shape[0] contiguous
  std::span<const std::byte> data; // exactly element_bytes(type, elements()) bytes

  int64_t elements() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
};

}  // namespace infini::model
