#pragma once
// Device profiles: a device opened under a profile reports at most that profile's features and
// limits, so every kernel choice, buffer split and shared-memory size that a phone or board GPU
// would see can be exercised on any machine (lavapipe included). The pipeline cache checks each
// kernel against the profiled limits before building it, so a choice that the real device could
// not run fails in tests here instead of on the phone.
//
// The device counts as an integrated GPU, so the kernels a GPU gets are the ones exercised (on
// lavapipe too, which otherwise gets its CPU-driver kernels). A profile lowers; it never raises: features are the device's AND the profile's, limits the
// smaller of the two (the larger for alignments), the API version the lower. The subgroup size is
// the one exception: host code sees the profile's size, while the driver keeps running its own,
// so kernels must work at any subgroup size (they read gl_SubgroupSize), and what host code
// decides from the size is exercised. On lavapipe LP_NATIVE_VECTOR_WIDTH=128 makes the driver's
// own size 4.
#include <vulkan/vulkan.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace infini::vk {

struct Capabilities;

struct DeviceProfile {
  std::string_view name;         // "mali-g78", as INFINI_DEVICE_PROFILE takes it
  std::string_view description;  // the GPU and driver the numbers come from
  uint32_t api_version = VK_API_VERSION_1_1;
  uint32_t subgroup_size = 1;
  VkSubgroupFeatureFlags subgroup_operations = VK_SUBGROUP_FEATURE_BASIC_BIT;
  bool storage_buffer_16bit = false;
  bool storage_buffer_8bit = false;
  bool shader_float16 = false;
  bool shader_int8 = false;
  bool timeline_semaphore = false;
  uint32_t max_shared_memory_bytes = 16384;
  uint32_t max_workgroup_invocations = 128;
  std::array<uint32_t, 3> max_workgroup_size{128, 128, 64};
  uint64_t max_storage_buffer_range = uint64_t(1) << 27;
  uint64_t max_memory_allocation_size = uint64_t(1) << 30;
  uint32_t max_push_constants_bytes = 128;
  uint64_t min_storage_buffer_offset_alignment = 256;
};

// The shipped profiles (runtime/vk/device_profiles.cpp, each number with its source).
std::span<const DeviceProfile> device_profiles() noexcept;
// The profile called `name`; throws infini::Error listing the known names when there is none.
const DeviceProfile& find_device_profile(std::string_view name);
// The profile INFINI_DEVICE_PROFILE names, or nullptr when it is unset or empty.
const DeviceProfile* device_profile_from_environment();

// `caps` lowered to `profile` (see above). The device's name gains " [profile NAME]".
void apply_device_profile(Capabilities& caps, const DeviceProfile& profile);

}  // namespace infini::vk
