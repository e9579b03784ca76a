#include "vk/pipeline_statistics.hpp"

#include <cstdlib>
#include <string>

#include "infini/error.hpp"
#include "vk/check.hpp"
#include "vk/device.hpp"
#include "vk/external_handles.hpp"
#include "vk/pipeline_cache.hpp"
#include "util/environment.hpp"

namespace infini::vk {

bool pipeline_statistics_requested() {
  static const bool requested = [] {
    const std::string v = env::value(env::Variable::PipelineStatistics).value_or("");
    if (v.empty() || v == "0") return false;
    if (v == "1") return true;
    throw Error("INFINI_PIPELINE_STATISTICS must be 0 or 1, got '" + v + "'");
  }();
  return requested;
}

std::vector<PipelineStatistic> pipeline_statistics(const Device& device, const Pipeline& pipeline) {
  std::vector<PipelineStatistic> out;
  if (!device.captures_statistics()) return out;
  const char* what = "pipeline statistics";
  const auto properties = device_function<PFN_vkGetPipelineExecutablePropertiesKHR>(
      device, "vkGetPipelineExecutablePropertiesKHR", what);
  const auto statistics = device_function<PFN_vkGetPipelineExecutableStatisticsKHR>(
      device, "vkGetPipelineExecutableStatisticsKHR", what);
  VkPipelineInfoKHR info{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
  info.pipeline = pipeline.pipeline.get();
  uint32_t count = 0;
  INFINI_VK_CHECK(properties(device.handle(), &info, &count, nullptr));
  std::vector<VkPipelineExecutablePropertiesKHR> executables(count, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR});
  INFINI_VK_CHECK(properties(device.handle(), &info, &count, executables.data()));
  for (uint32_t e = 0; e < count; ++e) {
    VkPipelineExecutableInfoKHR executable{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
    executable.pipeline = pipeline.pipeline.get();
    executable.executableIndex = e;
    uint32_t n = 0;
    INFINI_VK_CHECK(statistics(device.handle(), &executable, &n, nullptr));
    std::vector<VkPipelineExecutableStatisticKHR> stats(n, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
    INFINI_VK_CHECK(statistics(device.handle(), &executable, &n, stats.data()));
    for (const VkPipelineExecutableStatisticKHR& s : stats) {
      double value = 0;
      switch (s.format) {
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: value = s.value.b32 ? 1 : 0; break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: value = double(s.value.i64); break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: value = double(s.value.u64); break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR: value = s.value.f64; break;
        default: continue;
      }
      out.push_back({executables[e].name, s.name, value});
    }
  }
  return out;
}

}  // namespace infini::vk
