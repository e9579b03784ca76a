#pragma once
// The stream state of one Infini-attention layer on the host: what a session file stores. Kept
// apart from infini_attention_layer.hpp so that the state file reader (and its fuzz target)
// does not pull in Vulkan.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace infini::ops {

// Sizes follow the shape, the input type and the open token count, never the stream length.
struct LayerSnapshot {
  uint32_t open = 0;             // tokens in the open segment
  int64_t segments_written = 0;
  std::vector<std::byte> m, z;   // f32 [Hkv][D][Dv], [Hkv][D]
  std::vector<std::byte> k, v;   // the open segment's raw K [open][Hkv][D], V [open][Hkv][Dv] (input type)
  std::vector<std::byte> kr;     // its rotated K, f32 [open][Hkv][D]
};

}  // namespace infini::ops
