#pragma once
// What sharing memory and semaphores between devices needs of the system and the driver: external
// handles are POSIX file descriptors (INFINI_HAS_FDS where the system has them), and the functions
// that export and import them are extension entry points looked up on the device.
#include <string>

#include "infini/error.hpp"
#include "vk/device.hpp"

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#define INFINI_HAS_FDS 1
#else
#define INFINI_HAS_FDS 0
#endif

namespace infini::vk {

// The device's entry point `name`; throws naming `what` (the feature asking) when it has none.
template <typename Fn>
Fn device_function(const Device& d, const char* name, const char* what) {
  const auto fn = reinterpret_cast<Fn>(vkGetDeviceProcAddr(d.handle(), name));
  if (!fn) throw Error(std::string(what) + ": '" + d.caps().name + "' does not provide " + name);
  return fn;
}

}  // namespace infini::vk
