#pragma once
// A digest of compiled shader variants (their names and SPIR-V words): what a measurement made
// with them holds for, so that the autotuner's cache goes stale when a kernel changes.
#include <cstdint>
#include <initializer_list>
#include <span>

#include "spirv/shader_variant.h"
#include "util/fnv1a.hpp"

namespace infini::ops {

inline uint64_t shader_variants_digest(std::initializer_list<std::span<const spirv::ShaderVariant>> shaders) {
  Fnv1a h;
  for (const std::span<const spirv::ShaderVariant> variants : shaders)
    for (const spirv::ShaderVariant& v : variants) {
      h.add(v.name.data(), v.name.size());
      h.add(v.words.data(), v.words.size_bytes());
    }
  return h.hash;
}

}  // namespace infini::ops
