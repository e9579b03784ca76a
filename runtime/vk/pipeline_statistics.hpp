#pragma once
// What the driver says of the code it compiled for a kernel (VK_KHR_pipeline_executable_properties):
// registers, spills to local memory, shared memory, instruction counts, as each driver names them
// (NVIDIA's, AMD's, Mesa's differ). How a kernel uses a GPU's registers decides how many of its
// workgroups run at once, and spills are slow memory traffic: facts to tune kernels by on
// devices this project cannot profile otherwise. Captured only when INFINI_PIPELINE_STATISTICS=1
// is set before a device is opened (capturing can cost compile time), where the device has the
// extension; `infini bench --workload matmul` then adds them to its records.
#include <string>
#include <vector>

namespace infini::vk {

class Device;
struct Pipeline;

struct PipelineStatistic {
  std::string executable;  // the compiled stage's name as the driver gives it
  std::string name;
  double value = 0;  // booleans as 0 or 1
};

// INFINI_PIPELINE_STATISTICS is "1" (read once). Any other value than "", "0" or "1" throws.
bool pipeline_statistics_requested();

// The statistics of `pipeline`, made on `device`; empty where the device does not capture them.
std::vector<PipelineStatistic> pipeline_statistics(const Device& device, const Pipeline& pipeline);

}  // namespace infini::vk
