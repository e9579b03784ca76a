#pragma once
// What a physical device can do, probed once when devices are enumerated. Kernels read this
// record to pick their variant instead of querying Vulkan themselves.
#include <vulkan/vulkan.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace infini::vk {

enum class DeviceType { Discrete, Integrated, Virtual, Cpu, Other };
const char* device_type_name(DeviceType type) noexcept;

// One fragment shape of cooperative matrices: D (m x n) = A (m x k) * B (k x n) + C, with the
// element type of each as "f16", "f32", "i8", ... and subgroup scope.
struct MatrixShape {
  uint32_t m = 0, n = 0, k = 0;
  std::string a, b, c, d;
  bool operator==(const MatrixShape&) const = default;
};

struct Capabilities {
  std::string name;
  DeviceType type = DeviceType::Other;
  uint32_t vendor_id = 0;
  uint32_t device_id = 0;
  std::string vendor;  // "NVIDIA", "AMD", "Intel", "Arm", "Qualcomm", "Apple", "Mesa", ...
  uint32_t api_version = 0;
  uint32_t driver_version = 0;  // raw, vendor-encoded
  uint32_t driver_id = 0;       // VkDriverId
  std::string driver_name;      // e.g. "llvmpipe", "NVIDIA"
  std::string driver_info;      // e.g. "Mesa 22.3.6 (LLVM 15.0.6)"
  std::array<uint8_t, VK_UUID_SIZE> device_uuid{};
  std::array<uint8_t, VK_UUID_SIZE> driver_uuid{};
  std::array<uint8_t, VK_UUID_SIZE> pipeline_cache_uuid{};

  // Compute queue.
  uint32_t compute_queue_family = UINT32_MAX;
  bool timestamps = false;
  uint32_t timestamp_valid_bits = 0;
  float timestamp_period_ns = 0;

  // Subgroups.
  uint32_t subgroup_size = 0;
  uint32_t min_subgroup_size = 0;  // equal to subgroup_size without subgroup size control
  uint32_t max_subgroup_size = 0;
  bool subgroup_size_control = false;
  bool compute_full_subgroups = false;  // computeFullSubgroups: a pipeline may require full subgroups
  bool subgroups_in_compute = false;
  VkSubgroupFeatureFlags subgroup_operations = 0;

  // Arithmetic and storage types.
  bool shader_float16 = false;
  bool shader_int8 = false;
  bool storage_buffer_16bit = false;
  bool storage_buffer_8bit = false;
  bool integer_dot_product = false;  // VK_KHR_shader_integer_dot_product
  // Cooperative matrices: VK_KHR_cooperative_matrix and VK_NV_cooperative_matrix, each with its
  // feature, in compute shaders, with subgroup-scope shapes. This build's matrix-unit kernels use
  // one of them (matrix_units_on_khr()); matrix_shapes are that one's.
  bool cooperative_matrix_khr = false;
  bool cooperative_matrix_nv = false;
  std::vector<MatrixShape> matrix_shapes;
  bool vulkan_memory_model = false;  // Vulkan 1.2's vulkanMemoryModel (the matrix-unit kernels use it)
  bool vulkan_memory_model_device_scope = false;  // its device-scope barriers (vulkanMemoryModelDeviceScope)
  bool timeline_semaphore = false;
  bool memory_budget = false;  // VK_EXT_memory_budget: free device memory can be asked for
  // VK_KHR_pipeline_executable_properties: the driver reports statistics of the code it compiled
  // for a kernel (registers, spills, ...; vk/pipeline_statistics.hpp).
  bool pipeline_statistics = false;
  // Memory shared with another device (pipeline hand-offs, vk/shared_buffer.hpp):
  // VK_EXT_external_memory_host, host allocations imported as device memory, at this alignment;
  bool external_memory_host = false;
  uint64_t min_imported_host_pointer_alignment = 0;
  // VK_KHR_external_memory_fd with storage buffers exportable and importable as opaque fds (between
  // logical devices of one physical device: same device and driver UUIDs).
  bool external_memory_fd = false;
  // VK_KHR_external_semaphore_fd (vk/shared_signal.hpp: one device's work waits for another's on
  // the GPU): timeline semaphores exportable and importable as opaque fds (between logical devices
  // of one physical device), and binary ones exportable or importable as sync files (any devices).
  bool timeline_semaphore_fd = false;
  bool sync_file_export = false, sync_file_import = false;

  // Limits.
  uint32_t max_shared_memory_bytes = 0;
  uint32_t max_workgroup_invocations = 0;
  std::array<uint32_t, 3> max_workgroup_size{};
  std::array<uint32_t, 3> max_workgroup_count{};
  uint64_t max_storage_buffer_range = 0;
  uint64_t max_memory_allocation_size = 0;
  uint32_t max_push_constants_bytes = 0;
  uint32_t max_storage_buffers_per_stage = 0;  // maxPerStageDescriptorStorageBuffers (a kernel's bindings)
  uint64_t min_storage_buffer_offset_alignment = 0;
  uint64_t non_coherent_atom_size = 0;
  uint64_t device_local_bytes = 0;  // sum of device-local heaps
  uint64_t largest_device_local_heap = 0;
  bool unified_memory = false;      // device-local memory that the host can map (iGPU, CPU, UMA)

  bool pipeline_cache = true;      // false where a quirk says the driver's VkPipelineCache is unsafe
  std::vector<std::string> quirks;  // names of the known-bug workarounds applied (vk/device_quirks.hpp)

  bool usable = false;             // Vulkan 1.1+ with a compute queue
  std::string unusable_reason;

  bool has_device_uuid() const noexcept;
  bool has_matrix_shape(const MatrixShape& shape) const noexcept;
  bool matrix_units_api() const noexcept;  // the cooperative-matrix extension this build's kernels use
  // The f16 x f16 + f32 shape the kernels' 16 x 16 fragments are made of: 16x16x16, or for KHR a
  // shape of 8s and 16s (lavapipe's 8x8x8) tiled to 16 x 16; m = 0 where there is none.
  MatrixShape fragment_shape() const;
  // The (largest) lanes of the subgroups that hold matrix-unit fragments: 32 for NV, any size
  // dividing 32 for KHR; 0 where the device's sizes do not fit. Required: the device may pick a
  // size that does not fit, so the pipelines ask for 32 (size control).
  uint32_t fragment_lanes() const noexcept;
  bool fragment_lanes_required() const noexcept;
  bool is_software() const noexcept { return type == DeviceType::Cpu; }
};

// Two records of one physical device and driver (logical devices of one GPU): what opaque fds
// exported by one can be imported by the other.
bool same_physical_device(const Capabilities& a, const Capabilities& b) noexcept;

// Whether this build's matrix-unit kernels are on VK_KHR_cooperative_matrix (its glslang compiled
// GL_KHR_cooperative_matrix) rather than VK_NV_cooperative_matrix.
bool matrix_units_on_khr() noexcept;
const char* matrix_units_extension() noexcept;

// `instance_api_version`: what the instance was created for; the record's api_version is the lower
// of it and the device's, and only structures of that version (or of extensions the device lists)
// are queried. `instance` is needed for the queries of instance-level extension functions
// (cooperative matrix shapes); without it those report nothing.
Capabilities probe_capabilities(VkPhysicalDevice device, uint32_t instance_api_version, VkInstance instance = VK_NULL_HANDLE);

// "1.3.239" from a packed API version; the driver version decoded per vendor convention.
std::string format_api_version(uint32_t version);
std::string format_driver_version(const Capabilities& caps);
std::string subgroup_operation_names(VkSubgroupFeatureFlags ops);

}  // namespace infini::vk
