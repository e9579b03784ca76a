#pragma once
// Known driver bugs, as a table: which devices and drivers (vendor, driver id, version ranges),
// and what infini then avoids, each entry citing where the bug is documented. Quirks are applied
// to a device's Capabilities when it is probed, so every kernel choice downstream follows them
// without asking. INFINI_QUIRKS=off applies none; INFINI_QUIRKS=NAME,... applies those named on
// top of the matching ones (to try a workaround on a driver the table does not list yet).
#include <vulkan/vulkan.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace infini::vk {

struct Capabilities;

// What a quirk makes infini avoid.
enum QuirkAvoid : uint32_t {
  kAvoidTimelineSemaphores = 1u << 0,   // wait with fences instead
  kAvoidSubgroupArithmetic = 1u << 1,   // shared-memory reductions instead
  kAvoidSubgroupShuffle = 1u << 2,
  kAvoidSubgroups = 1u << 3,            // no subgroup operations at all
  kAvoidStorage16Bit = 1u << 4,         // f16 values read as packed 32-bit words (infini's default)
  kAvoidFloat16Arithmetic = 1u << 5,
  kAvoidPipelineCache = 1u << 6,        // no VkPipelineCache, in memory or on disk
};

struct DeviceQuirk {
  std::string_view name;
  std::string_view symptom;
  std::string_view source;  // where it is documented
  uint32_t avoid = 0;       // QuirkAvoid bits
  // Which devices: every condition that is set must hold.
  uint32_t vendor_id = 0;                   // 0: any
  uint32_t driver_id = 0;                   // VkDriverId; 0: any
  uint32_t api_below = 0;                   // the device's apiVersion below this; 0: any
  uint32_t driver_version_from = 0;         // raw driverVersion in [from, below)
  uint32_t driver_version_below = 0;        // 0: no upper bound
  bool (*also)(const Capabilities&) = nullptr;  // a further test on the record, or nullptr
};

std::span<const DeviceQuirk> device_quirks() noexcept;
bool quirk_matches(const DeviceQuirk& quirk, const Capabilities& caps);

// Applies the quirks of `table` that match `caps`, plus those named in `forced`, and records their
// names in caps.quirks. Throws infini::Error on a forced name the table does not have.
void apply_device_quirks(Capabilities& caps, std::span<const DeviceQuirk> table = device_quirks(),
                         std::span<const std::string> forced = {});
// apply_device_quirks as INFINI_QUIRKS says (see above).
void apply_device_quirks_from_environment(Capabilities& caps);

}  // namespace infini::vk
