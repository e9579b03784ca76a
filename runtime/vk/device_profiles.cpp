// The shipped device profiles. Every number says where it comes from; where no source gave a
// number, the profile takes the Vulkan 1.1 specification's required minimum ("spec minimum":
// the "Required Limits" table of the Vulkan specification, chapter "Limits"), which every
// conformant device meets, so the profile can only be stricter than the real GPU.
//
// Sources, by tag:
//   [spec]      Vulkan 1.1 specification, "Required Limits" table and VkPhysicalDeviceSubgroupProperties.
//   [turnip]    Mesa, src/freedreno/vulkan/tu_device.cc and src/freedreno/common/freedreno_devices.py
//               (Mesa's Adreno driver; its maxStorageBufferRange comment says it matches Qualcomm's).
//   [qcom-650]  Qualcomm Adreno 650 proprietary driver 0.502.0, apiVersion 1.1.128:
//               https://github.com/strato-emu/compat-list/issues/1035 ; "Vulkan 1.1" in Qualcomm's
//               Snapdragon 865 documentation, https://docs.qualcomm.com/doc/80-88500-4/topic/138_Graphics.html
//   [qcom-620]  vulkaninfo of the Adreno 620 proprietary driver (subgroups 64, 64-128, no quad or
//               clustered ops): https://github.com/termux/termux-packages/issues/7165
//   [qcom-x1]   Adreno X1-85 (Mesa's A740 entry) proprietary driver, apiVersion 1.3.295:
//               https://github.com/ggml-org/llama.cpp/pull/19569
//   [panvk]     Mesa, src/panfrost/vulkan/panvk_vX_physical_device.c and
//               src/panfrost/compiler/pan_compiler.h (pan_subgroup_size: Bifrost v6 = 4, v7 = 8, Valhall v9 = 16).
//   [mali-min]  azhirnov/as-en, AE/engine/shared_data/feature_set/min_mobile_mali.as: the features
//               common to Mali-G52, G71, G72, G76 drivers listed on vulkan.gpuinfo.org (no 16-bit storage).
//   [mali-g78]  Mali-G78 driver r36p0, apiVersion 1.1.201, with VK_KHR_16bit_storage:
//               https://github.com/strato-emu/compat-list/issues/1450
//   [pvr-min]   azhirnov/as-en, AE/engine/shared_data/feature_set/min_mobile_pvr.as: common to
//               PowerVR Rogue GE8320, GE8300, BXE-4-32 drivers on vulkan.gpuinfo.org (subgroup size
//               1, basic ops, no 16-bit storage, maxSpirvVersion 1.3).
//   [v3dv-old]  Mesa 22.x, src/broadcom/vulkan/v3dv_device.c and src/broadcom/common/v3d_limits.h
//               (Raspberry Pi 4, V3D 4.2); Pi 4 vulkaninfo: https://github.com/DTolm/VkFFT/issues/19
//   [v3dv]      Mesa main, src/broadcom/vulkan/v3dv_device.c, v3dv_limits.h, v3d_limits.h (Pi 5, V3D 7.1).
#include "vk/device_profile.hpp"

namespace infini::vk {
namespace {

constexpr VkSubgroupFeatureFlags kBasic = VK_SUBGROUP_FEATURE_BASIC_BIT;
constexpr VkSubgroupFeatureFlags kVote = VK_SUBGROUP_FEATURE_VOTE_BIT;
constexpr VkSubgroupFeatureFlags kArithmetic = VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
constexpr VkSubgroupFeatureFlags kBallot = VK_SUBGROUP_FEATURE_BALLOT_BIT;
constexpr VkSubgroupFeatureFlags kShuffle = VK_SUBGROUP_FEATURE_SHUFFLE_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT;
constexpr VkSubgroupFeatureFlags kClustered = VK_SUBGROUP_FEATURE_CLUSTERED_BIT;
constexpr VkSubgroupFeatureFlags kQuad = VK_SUBGROUP_FEATURE_QUAD_BIT;
constexpr uint64_t MiB = uint64_t(1) << 20;

DeviceProfile vulkan11_minimum() {
  DeviceProfile p;  // the defaults are the spec minimums [spec]
  p.name = "vulkan-1.1-minimum";
  p.description = "the least a conformant Vulkan 1.1 device may report [spec]";
  return p;
}

DeviceProfile mali_bifrost() {
  DeviceProfile p;
  p.name = "mali-bifrost";
  p.description = "Arm Mali-G71/G72 (Bifrost), Arm's driver";
  p.api_version = VK_API_VERSION_1_1;                                                // [mali-min]: 1.1-era drivers
  p.subgroup_size = 4;                                                               // [panvk] Bifrost v6
  p.subgroup_operations = kBasic | kVote | kArithmetic | kBallot | kShuffle | kClustered | kQuad;  // [panvk]
  p.storage_buffer_16bit = false;                                                    // [mali-min]
  p.storage_buffer_8bit = false;                                                     // [mali-min]: not common to all
  p.shader_float16 = false;                                                          // [panvk]: arch < 10
  p.shader_int8 = false;                                                             // not found: off
  p.max_shared_memory_bytes = 32768;                                                 // [mali-min]
  // workgroup size, buffer range, allocation, alignment: not found, spec minimums
  return p;
}

DeviceProfile mali_g78() {
  DeviceProfile p;
  p.name = "mali-g78";
  p.description = "Arm Mali-G78 (Valhall), Arm's driver r36p0";
  p.api_version = VK_API_VERSION_1_1;                                    // [mali-g78] 1.1.201
  p.subgroup_size = 16;                                                  // [panvk] Valhall v9
  p.subgroup_operations = kBasic | kVote | kArithmetic | kBallot | kShuffle | kClustered | kQuad;  // [panvk]
  p.storage_buffer_16bit = true;                                         // [mali-g78] VK_KHR_16bit_storage
  p.shader_float16 = false;                                              // not found: off
  p.max_shared_memory_bytes = 32768;                                     // [mali-min]
  // workgroup size, buffer range, allocation, alignment: not found, spec minimums
  return p;
}

DeviceProfile adreno_650() {
  DeviceProfile p;
  p.name = "adreno-650";
  p.description = "Qualcomm Adreno 650 (Snapdragon 865), Qualcomm's driver";
  p.api_version = VK_API_VERSION_1_1;                                          // [qcom-650]
  p.subgroup_size = 64;                                                        // [qcom-620]
  p.subgroup_operations = kBasic | kVote | kArithmetic | kBallot | kShuffle;   // [qcom-620]
  p.storage_buffer_16bit = true;                                               // [turnip] a6xx
  p.storage_buffer_8bit = false;                                               // [turnip] a6xx
  p.shader_float16 = true;                                                     // [turnip], [qcom-650]
  p.shader_int8 = true;                                                        // [turnip]
  p.timeline_semaphore = false;                                                // quirk "qualcomm-timeline"
  p.max_shared_memory_bytes = 32768;                                           // [turnip]
  p.max_workgroup_invocations = 1024;                                          // [turnip] at subgroup 64
  p.max_workgroup_size = {1024, 1024, 1024};                                   // [turnip]
  p.max_storage_buffer_range = 128 * MiB;                                      // [turnip]
  p.max_memory_allocation_size = 0xFFFFFFFFu;                                  // [turnip]
  p.max_push_constants_bytes = 256;                                            // [turnip]
  // alignment for Qualcomm's driver: not found, the spec's bound (turnip reports 4)
  return p;
}

DeviceProfile adreno_740() {
  DeviceProfile p;
  p.name = "adreno-740";
  p.description = "Qualcomm Adreno 740 (Snapdragon 8 Gen 2)";
  p.api_version = VK_API_VERSION_1_3;                                          // [qcom-x1]
  p.subgroup_size = 128;                                                       // [turnip] (64-128)
  p.subgroup_operations = kBasic | kVote | kArithmetic | kBallot | kShuffle | kClustered | kQuad;  // [turnip]
  p.storage_buffer_16bit = true;                                               // [turnip] a7xx
  p.storage_buffer_8bit = true;                                                // [turnip] a7xx
  p.shader_float16 = true;                                                     // [turnip]
  p.shader_int8 = true;                                                        // [turnip]
  p.timeline_semaphore = false;                                                // quirk "qualcomm-timeline"
  p.max_shared_memory_bytes = 32768;                                           // [turnip]
  p.max_workgroup_invocations = 1024;                                          // [turnip] 2048, per dimension 1024
  p.max_workgroup_size = {1024, 1024, 1024};                                   // [turnip]
  p.max_storage_buffer_range = 128 * MiB;                                      // [turnip]
  p.max_memory_allocation_size = 0xFFFFFFFFu;                                  // [turnip]
  p.max_push_constants_bytes = 256;                                            // [turnip]
  p.min_storage_buffer_offset_alignment = 4;                                   // [turnip]
  return p;
}

DeviceProfile powervr_rogue() {
  DeviceProfile p;
  p.name = "powervr-rogue";
  p.description = "Imagination PowerVR Rogue GE8320/GE8300, Imagination's driver";
  p.api_version = VK_API_VERSION_1_1;                 // [pvr-min]: SPIR-V 1.3 at most
  p.subgroup_size = 1;                                // [pvr-min]
  p.subgroup_operations = kBasic;                     // [pvr-min]
  p.storage_buffer_16bit = false;                     // [pvr-min]
  p.storage_buffer_8bit = true;                       // [pvr-min]
  p.shader_float16 = true;                            // [pvr-min]
  p.shader_int8 = true;                               // [pvr-min]
  p.max_shared_memory_bytes = 16384;                  // [pvr-min]
  p.max_workgroup_invocations = 512;                  // [pvr-min]
  p.max_workgroup_size = {512, 512, 64};              // [pvr-min]
  p.max_storage_buffer_range = 128 * MiB;             // [pvr-min]
  p.max_push_constants_bytes = 128;                   // [pvr-min]
  // allocation size and alignment: not found, spec minimums
  return p;
}

DeviceProfile v3d_pi4() {
  DeviceProfile p;
  p.name = "v3d-pi4";
  p.description = "Broadcom V3D 4.2 (Raspberry Pi 4), Mesa v3dv 22.x";
  p.api_version = VK_API_VERSION_1_1;                 // [v3dv-old]
  p.subgroup_size = 16;                               // [v3dv-old] V3D_CHANNELS
  p.subgroup_operations = kBasic;                     // [v3dv-old] V3D 4.2: basic only
  p.storage_buffer_16bit = true;                      // [v3dv-old]
  p.storage_buffer_8bit = true;                       // [v3dv-old]
  p.shader_float16 = false;                           // [v3dv-old]
  p.shader_int8 = false;                              // [v3dv-old]
  p.max_shared_memory_bytes = 16384;                  // [v3dv-old], Pi 4 vulkaninfo
  p.max_workgroup_invocations = 256;                  // [v3dv-old]
  p.max_workgroup_size = {256, 256, 256};             // [v3dv-old]
  p.max_storage_buffer_range = 128 * MiB;             // [v3dv-old] V3D_MAX_BUFFER_RANGE 1 << 27
  p.max_memory_allocation_size = uint64_t(1) << 30;   // [v3dv-old]
  p.max_push_constants_bytes = 128;                   // [v3dv-old]
  p.min_storage_buffer_offset_alignment = 32;         // [v3dv-old]
  return p;
}

DeviceProfile v3d_pi5() {
  DeviceProfile p;
  p.name = "v3d-pi5";
  p.description = "Broadcom V3D 7.1 (Raspberry Pi 5), Mesa v3dv";
  p.api_version = VK_API_VERSION_1_3;                                       // [v3dv]
  p.subgroup_size = 16;                                                     // [v3dv]
  p.subgroup_operations = kBasic | kVote | kBallot | kShuffle | kQuad;      // [v3dv] V3D 7.1 (arithmetic only on main)
  p.storage_buffer_16bit = true;                                            // [v3dv]
  p.storage_buffer_8bit = true;                                             // [v3dv]
  p.shader_float16 = false;                                                 // [v3dv]
  p.shader_int8 = false;                                                    // [v3dv]
  p.timeline_semaphore = true;                                              // [v3dv] (emulated by Mesa)
  p.max_shared_memory_bytes = 32768;                                        // [v3dv]
  p.max_workgroup_invocations = 256;                                        // [v3dv]
  p.max_workgroup_size = {256, 256, 256};                                   // [v3dv]
  p.max_storage_buffer_range = uint64_t(1) << 30;                           // [v3dv]
  p.max_memory_allocation_size = uint64_t(1) << 30;                         // [v3dv]
  p.max_push_constants_bytes = 128;                                         // [v3dv]
  p.min_storage_buffer_offset_alignment = 32;                               // [v3dv]
  return p;
}

}  // namespace

std::span<const DeviceProfile> device_profiles() noexcept {
  static const DeviceProfile profiles[] = {vulkan11_minimum(), mali_bifrost(), mali_g78(), adreno_650(),
                                           adreno_740(), powervr_rogue(), v3d_pi4(), v3d_pi5()};
  return profiles;
}

}  // namespace infini::vk
