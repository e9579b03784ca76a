#pragma once
// The library's own way to the Vulkan devices behind an infini::Context (the public header shows
// none). Also used by the tests and benchmarks, which see the internals.
#include <vector>

#include "infini/context.hpp"
#include "vk/device.hpp"

namespace infini {

struct ContextAccess {
  static std::vector<vk::Device*> devices(const Context& context);
  static vk::Device& first_device(const Context& context) { return *devices(context).front(); }
};

}  // namespace infini
