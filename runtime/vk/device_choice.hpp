#pragma once
// Which physical devices exist, and which one to use.
//
// Order of preference: discrete > integrated > virtual > CPU (lavapipe), then more device-local
// memory. One GPU exposed by two drivers (say the vendor's and Mesa's) has one device UUID and is
// listed once. INFINI_DEVICE=<index|name substring> overrides the choice.
#include <string>
#include <string_view>
#include <vector>

#include "vk/capabilities.hpp"

namespace infini::vk {

class Instance;
struct DeviceProfile;

struct PhysicalDevice {
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  Capabilities caps;
};

// All devices of the instance, probed, with duplicates removed; listing order is the driver's
// enumeration order, so indices are stable for INFINI_DEVICE and --devices. With a profile, each
// usable device's record is lowered to it (vk/device_profile.hpp).
std::vector<PhysicalDevice> enumerate_physical_devices(const Instance& instance, const DeviceProfile* profile = nullptr);

// Pure selection logic, separate from Vulkan so it can be tested with made-up records.
std::vector<size_t> unique_devices(const std::vector<Capabilities>& devices);
int preference_rank(DeviceType type) noexcept;  // lower is better
size_t default_device(const std::vector<Capabilities>& devices);
// Index of the device named by `selector` (an index or a case-insensitive name substring).
// Throws infini::Error naming the selector and the devices that exist.
size_t select_device(const std::vector<Capabilities>& devices, std::string_view selector);
// default_device, or select_device(INFINI_DEVICE) when that variable is set.
size_t choose_device(const std::vector<Capabilities>& devices);

}  // namespace infini::vk
