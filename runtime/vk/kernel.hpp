#pragma once
// A compute kernel as the runtime sees it: embedded SPIR-V plus its interface. Ops define one
// KernelSource per shader variant next to the code that dispatches it, so adding a kernel needs
// no central registry.
#include <cstdint>
#include <span>
#include <string_view>

namespace infini::vk {

struct KernelSource {
  std::string_view name;               // unique, e.g. "matmul_a32_b16"
  std::span<const uint32_t> spirv;     // from the generated spirv/<name>.h
  uint32_t storage_buffers = 0;        // bindings 0..storage_buffers-1 in set 0
  uint32_t push_constant_bytes = 0;
};

}  // namespace infini::vk
