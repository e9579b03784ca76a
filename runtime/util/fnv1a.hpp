#pragma once
// FNV-1a, 64 bits: a cheap digest of bytes for telling files and builds apart (not a defence
// against anyone forging them).
#include <cstddef>
#include <cstdint>

namespace infini {

struct Fnv1a {
  uint64_t hash = 1469598103934665603ull;
  void add(const void* data, size_t bytes) {
    for (size_t i = 0; i < bytes; ++i) hash = (hash ^ static_cast<const unsigned char*>(data)[i]) * 1099511628211ull;
  }
};

}  // namespace infini
