#pragma once
// Bytes of one value of a scalar element type, for the kernels and buffers that address single
// values (activations, caches, f32/f16 weights). Block formats have no per-value size.
#include <cstdint>
#include <string>

#include "infini/element_type.hpp"
#include "infini/error.hpp"

namespace infini {

inline uint64_t scalar_bytes(ElementType t) {
  const ElementTraits& e = element_traits(t);
  if (e.block_elements != 1) throw Error(std::string(e.name) + " is a block format: its values have no size of their own");
  return e.block_bytes;
}

}  // namespace infini
