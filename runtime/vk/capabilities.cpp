#include "vk/capabilities.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "spirv/matrix_units_api.h"
#include "vk/buffer.hpp"
#include "vk/cooperative_matrix_khr.hpp"
#include "vk/device_quirks.hpp"

namespace infini::vk {
namespace {

std::string vendor_name(uint32_t vendor_id, uint32_t driver_id) {
  switch (vendor_id) {
    case 0x10DE: return "NVIDIA";
    case 0x1002: return "AMD";
    case 0x1022: return "AMD";
    case 0x8086: return "Intel";
    case 0x13B5: return "Arm";
    case 0x5143: return "Qualcomm";
    case 0x1010: return "Imagination";
    case 0x106B: return "Apple";
    case 0x14E4: return "Broadcom";
    case 0x19E5: return "Huawei";
    case 0x10005: return "Mesa";  // VK_VENDOR_ID_MESA: lavapipe and other software drivers
    default: break;
  }
  if (driver_id == VK_DRIVER_ID_MESA_LLVMPIPE) return "Mesa";
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%04X", vendor_id);
  return hex;
}

DeviceType to_device_type(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return DeviceType::Discrete;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return DeviceType::Integrated;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return DeviceType::Virtual;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return DeviceType::Cpu;
    default: return DeviceType::Other;
  }
}

bool has_extension(const std::vector<VkExtensionProperties>& list, const char* name) {
  return std::any_of(list.begin(), list.end(),
                     [&](const VkExtensionProperties& e) { return std::strcmp(e.extensionName, name) == 0; });
}

}  // namespace

const char* device_type_name(DeviceType type) noexcept {
  switch (type) {
    case DeviceType::Discrete: return "discrete";
    case DeviceType::Integrated: return "integrated";
    case DeviceType::Virtual: return "virtual";
    case DeviceType::Cpu: return "cpu";
    default: return "other";
  }
}

bool same_physical_device(const Capabilities& a, const Capabilities& b) noexcept {
  return a.has_device_uuid() && a.device_uuid == b.device_uuid && a.driver_uuid == b.driver_uuid;
}

bool Capabilities::has_device_uuid() const noexcept {
  return std::any_of(device_uuid.begin(), device_uuid.end(), [](uint8_t b) { return b != 0; });
}

std::string format_api_version(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." +
         std::to_string(VK_API_VERSION_PATCH(v));
}

std::string format_driver_version(const Capabilities& c) {
  const uint32_t v = c.driver_version;
  if (c.vendor_id == 0x10DE)  // NVIDIA: 10.8.8.6 bits
    return std::to_string(v >> 22) + "." + std::to_string((v >> 14) & 0xff) + "." + std::to_string((v >> 6) & 0xff);
  if (c.vendor_id == 0x8086 && c.driver_id == VK_DRIVER_ID_INTEL_PROPRIETARY_WINDOWS)  // 18.14 bits
    return std::to_string(v >> 14) + "." + std::to_string(v & 0x3fff);
  return format_api_version(v);
}

std::string subgroup_operation_names(VkSubgroupFeatureFlags ops) {
  static const std::pair<VkSubgroupFeatureFlagBits, const char*> names[] = {
      {VK_SUBGROUP_FEATURE_BASIC_BIT, "basic"},         {VK_SUBGROUP_FEATURE_VOTE_BIT, "vote"},
      {VK_SUBGROUP_FEATURE_ARITHMETIC_BIT, "arithmetic"}, {VK_SUBGROUP_FEATURE_BALLOT_BIT, "ballot"},
      {VK_SUBGROUP_FEATURE_SHUFFLE_BIT, "shuffle"},     {VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT, "shuffle_relative"},
      {VK_SUBGROUP_FEATURE_CLUSTERED_BIT, "clustered"}, {VK_SUBGROUP_FEATURE_QUAD_BIT, "quad"},
  };
  std::string out;
  for (const auto& [bit, name] : names) {
    if (!(ops & bit)) continue;
    if (!out.empty()) out += ',';
    out += name;
  }
  return out.empty() ? "none" : out;
}

namespace {
// Whether infini's buffers (storage, copy source and destination) can be made on memory of this
// handle type: `features`, VK_EXTERNAL_MEMORY_FEATURE_*_BIT, all offered.
bool external_buffers(VkPhysicalDevice device, VkExternalMemoryHandleTypeFlagBits type,
                      VkExternalMemoryFeatureFlags features) {
  VkPhysicalDeviceExternalBufferInfo info{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO};
  info.usage = kBufferUsage;
  info.handleType = type;
  VkExternalBufferProperties props{VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES};
  vkGetPhysicalDeviceExternalBufferProperties(device, &info, &props);
  return (props.externalMemoryProperties.externalMemoryFeatures & features) == features;
}
// What a semaphore of the given type can do with handles of `handle_type`.
VkExternalSemaphoreFeatureFlags external_semaphores(VkPhysicalDevice device, VkSemaphoreType semaphore_type,
                                                    VkExternalSemaphoreHandleTypeFlagBits handle_type) {
  VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
  type.semaphoreType = semaphore_type;
  VkPhysicalDeviceExternalSemaphoreInfo info{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_SEMAPHORE_INFO};
  info.pNext = &type;
  info.handleType = handle_type;
  VkExternalSemaphoreProperties props{VK_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_PROPERTIES};
  vkGetPhysicalDeviceExternalSemaphoreProperties(device, &info, &props);
  return props.externalSemaphoreFeatures;
}

const char* component_name(VkComponentTypeNV type) {  // the KHR values are the same
  switch (type) {
    case VK_COMPONENT_TYPE_FLOAT16_NV: return "f16";
    case VK_COMPONENT_TYPE_FLOAT32_NV: return "f32";
    case VK_COMPONENT_TYPE_FLOAT64_NV: return "f64";
    case VK_COMPONENT_TYPE_SINT8_NV: return "i8";
    case VK_COMPONENT_TYPE_SINT16_NV: return "i16";
    case VK_COMPONENT_TYPE_SINT32_NV: return "i32";
    case VK_COMPONENT_TYPE_UINT8_NV: return "u8";
    case VK_COMPONENT_TYPE_UINT16_NV: return "u16";
    case VK_COMPONENT_TYPE_UINT32_NV: return "u32";
    default: return "?";
  }
}

// The subgroup-scope fragment shapes of a cooperative-matrix extension in compute shaders, through
// its stage property (Stages), its query (Query, named query_name) and its shape record (Props),
// which NV and KHR spell alike but for the result's name. False when the query is missing or
// offers none that `shape` takes.
template <class Stages, class Props, class Query, class ToShape>
bool probe_matrix_shapes(VkInstance instance, VkPhysicalDevice device, VkStructureType stages_type,
                         VkStructureType props_type, const char* query_name, ToShape shape,
                         std::vector<MatrixShape>& shapes) {
  Stages stages{stages_type};
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props.pNext = &stages;
  vkGetPhysicalDeviceProperties2(device, &props);
  if (!(stages.cooperativeMatrixSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT)) return false;
  const auto query = reinterpret_cast<Query>(vkGetInstanceProcAddr(instance, query_name));
  if (!query) return false;
  uint32_t count = 0;
  if (query(device, &count, nullptr) != VK_SUCCESS || count == 0) return false;
  std::vector<Props> list(count, Props{props_type});
  if (query(device, &count, list.data()) < VK_SUCCESS) return false;
  list.resize(count);
  for (const Props& m : list)
    if (m.scope == VK_SCOPE_SUBGROUP_NV)  // KHR's subgroup scope has the same value
      if (std::optional<MatrixShape> s = shape(m)) shapes.push_back(*s);
  return !shapes.empty();
}

bool probe_matrix_shapes_nv(VkInstance instance, VkPhysicalDevice device, std::vector<MatrixShape>& shapes) {
  const auto shape = [](const VkCooperativeMatrixPropertiesNV& m) -> std::optional<MatrixShape> {
    return MatrixShape{m.MSize, m.NSize, m.KSize, component_name(m.AType), component_name(m.BType),
                       component_name(m.CType), component_name(m.DType)};
  };
  return probe_matrix_shapes<VkPhysicalDeviceCooperativeMatrixPropertiesNV, VkCooperativeMatrixPropertiesNV,
                             PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV>(
      instance, device, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_NV,
      VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV", shape,
      shapes);
}

bool probe_matrix_shapes_khr(VkInstance instance, VkPhysicalDevice device, std::vector<MatrixShape>& shapes) {
  const auto shape = [](const VkCooperativeMatrixPropertiesKHR& m) -> std::optional<MatrixShape> {
    if (m.saturatingAccumulation) return std::nullopt;  // integer shapes only; never what the kernels use
    const auto name = [](VkComponentTypeKHR t) { return component_name(VkComponentTypeNV(t)); };
    return MatrixShape{m.MSize, m.NSize, m.KSize, name(m.AType), name(m.BType), name(m.CType), name(m.ResultType)};
  };
  return probe_matrix_shapes<VkPhysicalDeviceCooperativeMatrixPropertiesKHR, VkCooperativeMatrixPropertiesKHR,
                             PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR>(
      instance, device, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_KHR,
      VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR", shape,
      shapes);
}

}  // namespace

bool matrix_units_on_khr() noexcept { return INFINI_MATRIX_UNITS_KHR; }
const char* matrix_units_extension() noexcept {
  return matrix_units_on_khr() ? "VK_KHR_cooperative_matrix" : "VK_NV_cooperative_matrix";
}

bool Capabilities::matrix_units_api() const noexcept {
  return matrix_units_on_khr() ? cooperative_matrix_khr : cooperative_matrix_nv;
}

namespace {
// Whether fragments may live in subgroups of n lanes: NV's need 32; KHR's any size dividing 32,
// since the kernels' warps of 32 invocations leave the extra subgroups out (common/fragments.glsl).
bool fragments_fit(uint32_t n) { return matrix_units_on_khr() ? n >= 4 && n <= 32 && 32 % n == 0 : n == 32; }
}  // namespace

uint32_t Capabilities::fragment_lanes() const noexcept {
  if (!subgroups_in_compute) return 0;
  // Every size the driver may pick fits (NVIDIA's 32, lavapipe's 8, Intel's 8 to 32): it picks,
  // as cooperative matrices may need; else 32 if it can be asked for (AMD's 32 to 64).
  if (fragments_fit(min_subgroup_size) && fragments_fit(max_subgroup_size)) return max_subgroup_size;
  return subgroup_size_control && min_subgroup_size <= 32 && max_subgroup_size >= 32 ? 32 : 0;
}

bool Capabilities::fragment_lanes_required() const noexcept {
  return fragment_lanes() && !(fragments_fit(min_subgroup_size) && fragments_fit(max_subgroup_size));
}

MatrixShape Capabilities::fragment_shape() const {
  const MatrixShape full{16, 16, 16, "f16", "f16", "f32", "f32"};
  if (has_matrix_shape(full)) return full;
  if (!matrix_units_on_khr()) return {};  // NV's kernels take whole fragments only
  const auto tiles_16 = [](uint32_t size) { return size == 8 || size == 16; };
  for (const MatrixShape& s : matrix_shapes)
    if (s.a == "f16" && s.b == "f16" && s.c == "f32" && s.d == "f32" && tiles_16(s.m) && tiles_16(s.n) && tiles_16(s.k))
      return s;
  return {};
}

bool Capabilities::has_matrix_shape(const MatrixShape& shape) const noexcept {
  for (const MatrixShape& s : matrix_shapes)
    if (s == shape) return true;
  return false;
}

Capabilities probe_capabilities(VkPhysicalDevice device, uint32_t instance_api_version, VkInstance instance) {
  Capabilities c;

  uint32_t ext_count = 0;
  vkEnumerateDeviceExtensionProperties(device, nullptr, &ext_count, nullptr);
  std::vector<VkExtensionProperties> extensions(ext_count);
  vkEnumerateDeviceExtensionProperties(device, nullptr, &ext_count, extensions.data());

  VkPhysicalDeviceProperties basic{};
  vkGetPhysicalDeviceProperties(device, &basic);
  c.name = basic.deviceName;
  c.type = to_device_type(basic.deviceType);
  c.vendor_id = basic.vendorID;
  c.device_id = basic.deviceID;
  c.api_version = basic.apiVersion;
  c.driver_version = basic.driverVersion;
  std::memcpy(c.pipeline_cache_uuid.data(), basic.pipelineCacheUUID, VK_UUID_SIZE);
  const VkPhysicalDeviceLimits& limits = basic.limits;
  c.max_shared_memory_bytes = limits.maxComputeSharedMemorySize;
  c.max_workgroup_invocations = limits.maxComputeWorkGroupInvocations;
  for (int i = 0; i < 3; ++i) {
    c.max_workgroup_size[i] = limits.maxComputeWorkGroupSize[i];
    c.max_workgroup_count[i] = limits.maxComputeWorkGroupCount[i];
  }
  c.max_storage_buffer_range = limits.maxStorageBufferRange;
  c.max_push_constants_bytes = limits.maxPushConstantsSize;
  c.max_storage_buffers_per_stage = limits.maxPerStageDescriptorStorageBuffers;
  c.min_storage_buffer_offset_alignment = limits.minStorageBufferOffsetAlignment;
  c.non_coherent_atom_size = limits.nonCoherentAtomSize;
  c.timestamp_period_ns = limits.timestampPeriod;

  // What may be used is the lower of the device's version and the instance's.
  // (Versions compare without their patch numbers: a 1.3.230 device under a 1.3 instance is 1.3.230.)
  if ((c.api_version & ~0xFFFu) > (instance_api_version & ~0xFFFu)) c.api_version = instance_api_version;
  if (c.api_version < VK_API_VERSION_1_1) {
    c.unusable_reason = "Vulkan " + format_api_version(c.api_version) + " (1.1 or newer needed)";
    c.vendor = vendor_name(c.vendor_id, 0);
    return c;
  }
  const bool core12 = c.api_version >= VK_API_VERSION_1_2;
  auto has = [&](const char* name) { return has_extension(extensions, name); };

  // Property and feature chains: Vulkan 1.1 core structures, and what 1.2 made core through the
  // extensions it came from (so 1.1 phones report the same things).
  VkPhysicalDeviceSubgroupSizeControlProperties size_control{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
  VkPhysicalDeviceMaintenance3Properties maintenance3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceIDProperties ids{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props.pNext = &ids;
  ids.pNext = &subgroup;
  subgroup.pNext = &maintenance3;
  void** tail = &maintenance3.pNext;
  const bool driver_properties = core12 || has(VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME);
  if (driver_properties) {
    *tail = &driver;
    tail = &driver.pNext;
  }
  const bool size_control_ext = c.api_version >= VK_API_VERSION_1_3 || has(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
  if (size_control_ext) {
    *tail = &size_control;
    tail = &size_control.pNext;
  }
  VkPhysicalDeviceExternalMemoryHostPropertiesEXT host_import{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT};
  c.external_memory_host = has(VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
  if (c.external_memory_host) *tail = &host_import;
  vkGetPhysicalDeviceProperties2(device, &props);

  std::memcpy(c.device_uuid.data(), ids.deviceUUID, VK_UUID_SIZE);
  std::memcpy(c.driver_uuid.data(), ids.driverUUID, VK_UUID_SIZE);
  c.min_imported_host_pointer_alignment = host_import.minImportedHostPointerAlignment;
  c.external_memory_host = c.external_memory_host && c.min_imported_host_pointer_alignment > 0 &&
                           external_buffers(device, VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT,
                                            VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT);
  c.external_memory_fd = has(VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME) &&
                         external_buffers(device, VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT,
                                          VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT |
                                              VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT);
  // A size of 0 has been reported (Mali-G72); such a device is treated as having no subgroups.
  c.subgroup_size = subgroup.subgroupSize;
  c.min_subgroup_size = c.max_subgroup_size = subgroup.subgroupSize;
  c.subgroups_in_compute = (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0 && subgroup.subgroupSize > 0;
  c.subgroup_operations = subgroup.supportedOperations;
  if (driver_properties) {
    c.driver_id = driver.driverID;
    c.driver_name = driver.driverName;
    c.driver_info = driver.driverInfo;
  }
  c.vendor = vendor_name(c.vendor_id, c.driver_id);
  c.max_memory_allocation_size = maintenance3.maxMemoryAllocationSize;

  VkPhysicalDeviceSubgroupSizeControlFeatures size_control_features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
  VkPhysicalDevice16BitStorageFeatures storage16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  VkPhysicalDevice8BitStorageFeatures storage8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES};
  VkPhysicalDeviceShaderFloat16Int8Features float16_int8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
  VkPhysicalDeviceTimelineSemaphoreFeatures timeline{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES};
  VkPhysicalDeviceVulkanMemoryModelFeatures memory_model{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES};
  VkPhysicalDeviceCooperativeMatrixFeaturesNV matrix_nv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.pNext = &storage16;
  tail = &storage16.pNext;
  auto chain = [&](bool present, auto& next) {
    if (!present) return;
    *tail = &next;
    tail = &next.pNext;
  };
  chain(core12 || has(VK_KHR_8BIT_STORAGE_EXTENSION_NAME), storage8);
  chain(core12 || has(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME), float16_int8);
  chain(core12, timeline);  // infini waits on timelines with the 1.2 entry points only
  chain(size_control_ext, size_control_features);
  chain(core12, memory_model);  // enabled through the 1.2 feature structure only
  const bool matrix_nv_ext = has(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  chain(matrix_nv_ext, matrix_nv);
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR matrix_khr{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
  const bool matrix_khr_ext = has(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
  chain(matrix_khr_ext, matrix_khr);
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR executables{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  const bool executables_ext = has(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
  chain(executables_ext, executables);
  vkGetPhysicalDeviceFeatures2(device, &features);
  c.pipeline_statistics = executables_ext && executables.pipelineExecutableInfo;
  c.shader_float16 = float16_int8.shaderFloat16;
  c.shader_int8 = float16_int8.shaderInt8;
  c.storage_buffer_16bit = storage16.storageBuffer16BitAccess;
  c.storage_buffer_8bit = storage8.storageBuffer8BitAccess;
  c.timeline_semaphore = timeline.timelineSemaphore;
  if (c.timeline_semaphore && has(VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME)) {
    const VkExternalSemaphoreFeatureFlags both =
        VK_EXTERNAL_SEMAPHORE_FEATURE_EXPORTABLE_BIT | VK_EXTERNAL_SEMAPHORE_FEATURE_IMPORTABLE_BIT;
    const VkExternalSemaphoreFeatureFlags timelines =
        external_semaphores(device, VK_SEMAPHORE_TYPE_TIMELINE, VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT);
    const VkExternalSemaphoreFeatureFlags sync_files =
        external_semaphores(device, VK_SEMAPHORE_TYPE_BINARY, VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_SYNC_FD_BIT);
    c.timeline_semaphore_fd = (timelines & both) == both;
    c.sync_file_export = sync_files & VK_EXTERNAL_SEMAPHORE_FEATURE_EXPORTABLE_BIT;
    c.sync_file_import = sync_files & VK_EXTERNAL_SEMAPHORE_FEATURE_IMPORTABLE_BIT;
  }
  c.compute_full_subgroups = size_control_ext && size_control_features.computeFullSubgroups;
  if (size_control_ext && size_control_features.subgroupSizeControl &&
      (size_control.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT)) {
    c.subgroup_size_control = true;
    c.min_subgroup_size = size_control.minSubgroupSize;
    c.max_subgroup_size = size_control.maxSubgroupSize;
  }
  c.integer_dot_product = c.api_version >= VK_API_VERSION_1_3 ||
                          has(VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
  c.vulkan_memory_model = memory_model.vulkanMemoryModel;
  c.vulkan_memory_model_device_scope = memory_model.vulkanMemoryModelDeviceScope;
  // Shapes of the API this build's kernels use (matrix_units_on_khr); the other is only reported.
  std::vector<MatrixShape> shapes_nv, shapes_khr;
  c.cooperative_matrix_nv = matrix_nv_ext && matrix_nv.cooperativeMatrix && instance &&
                            probe_matrix_shapes_nv(instance, device, shapes_nv);
  c.cooperative_matrix_khr = matrix_khr_ext && matrix_khr.cooperativeMatrix && instance &&
                             probe_matrix_shapes_khr(instance, device, shapes_khr);
  c.matrix_shapes = matrix_units_on_khr() ? shapes_khr : shapes_nv;
  c.memory_budget = has(VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);

  // Memory heaps.
  VkPhysicalDeviceMemoryProperties memory{};
  vkGetPhysicalDeviceMemoryProperties(device, &memory);
  for (uint32_t h = 0; h < memory.memoryHeapCount; ++h) {
    if (!(memory.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)) continue;
    c.device_local_bytes += memory.memoryHeaps[h].size;
    c.largest_device_local_heap = std::max<uint64_t>(c.largest_device_local_heap, memory.memoryHeaps[h].size);
  }
  const bool shares_host_memory = c.type == DeviceType::Integrated || c.type == DeviceType::Cpu;
  for (uint32_t t = 0; t < memory.memoryTypeCount; ++t) {
    const auto f = memory.memoryTypes[t].propertyFlags;
    if (shares_host_memory && (f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) && (f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
      c.unified_memory = true;
  }

  // A compute queue: prefer a compute-only family (async compute), else any with compute.
  uint32_t family_count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(device, &family_count, nullptr);
  std::vector<VkQueueFamilyProperties> families(family_count);
  vkGetPhysicalDeviceQueueFamilyProperties(device, &family_count, families.data());
  for (uint32_t i = 0; i < family_count; ++i) {
    if (!(families[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
    const bool compute_only = !(families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT);
    if (c.compute_queue_family == UINT32_MAX || compute_only) {
      c.compute_queue_family = i;
      c.timestamp_valid_bits = families[i].timestampValidBits;
      if (compute_only) break;
    }
  }
  c.timestamps = c.timestamp_valid_bits > 0 && c.timestamp_period_ns > 0;

  if (c.compute_queue_family == UINT32_MAX) {
    c.unusable_reason = "no compute queue";
    return c;
  }
  c.usable = true;
  apply_device_quirks_from_environment(c);
  return c;
}

}  // namespace infini::vk
