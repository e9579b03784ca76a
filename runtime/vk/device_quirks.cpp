#include "vk/device_quirks.hpp"

#include <algorithm>
#include <cstdlib>

#include "infini/error.hpp"
#include "vk/capabilities.hpp"
#include "util/environment.hpp"

namespace infini::vk {
namespace {

bool subgroup_size_invalid(const Capabilities& c) {
  return c.subgroup_size == 0 || (c.subgroup_size & (c.subgroup_size - 1)) != 0;
}

bool without_16bit_storage(const Capabilities& c) { return !c.storage_buffer_16bit; }

constexpr uint32_t kQualcomm = 0x5143, kAmd = 0x1002;

const DeviceQuirk kQuirks[] = {
    {.name = "qualcomm-timeline",
     .symptom = "timeline semaphores unreliable or missing on Adreno drivers",
     .source = "yuzu's device setup (HasTimelineSemaphore), https://github.com/yuzu-emu/yuzu/issues/11017 ; "
               "https://github.com/KhronosGroup/Vulkan-ExtensionLayer/issues/118",
     .avoid = kAvoidTimelineSemaphores,
     .vendor_id = kQualcomm},
    {.name = "moltenvk-amd-subgroups",
     .symptom = "subgroup arithmetic and shuffles give wrong results on AMD GPUs through MoltenVK",
     .source = "https://github.com/ggml-org/llama.cpp/issues/15846 (workaround in pull 15886); "
               "https://github.com/KhronosGroup/MoltenVK/issues/2756",
     .avoid = kAvoidSubgroupArithmetic | kAvoidSubgroupShuffle,
     .vendor_id = kAmd,
     .driver_id = VK_DRIVER_ID_MOLTENVK},
    {.name = "subgroup-size-invalid",
     .symptom = "a subgroup size of 0 (reported by a Mali-G72 driver) or not a power of two",
     .source = "https://github.com/Tencent/ncnn/issues/6457 (fixed in pull 6459)",
     .avoid = kAvoidSubgroups,
     .also = subgroup_size_invalid},
    {.name = "adreno-fp16-without-16bit-storage",
     .symptom = "f16 arithmetic gives wrong results on old Adreno drivers (those without 16-bit storage)",
     .source = "ncnn, src/gpu.cpp, the known-bug blacklist (https://github.com/Tencent/ncnn/blob/master/src/gpu.cpp)",
     .avoid = kAvoidFloat16Arithmetic,
     .vendor_id = kQualcomm,
     .also = without_16bit_storage},
    {.name = "powervr-pipeline-cache",
     .symptom = "vkCreatePipelineCache crashes inside Imagination's driver on saved cache data",
     .source = "https://github.com/godotengine/godot/issues/115171",
     .avoid = kAvoidPipelineCache,
     .driver_id = VK_DRIVER_ID_IMAGINATION_PROPRIETARY},
};

void avoid(Capabilities& c, uint32_t what) {
  if (what & kAvoidTimelineSemaphores) c.timeline_semaphore = false;
  if (what & kAvoidSubgroupArithmetic) c.subgroup_operations &= ~VkSubgroupFeatureFlags(VK_SUBGROUP_FEATURE_ARITHMETIC_BIT);
  if (what & kAvoidSubgroupShuffle)
    c.subgroup_operations &=
        ~VkSubgroupFeatureFlags(VK_SUBGROUP_FEATURE_SHUFFLE_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT);
  if (what & kAvoidSubgroups) {
    c.subgroups_in_compute = false;
    c.subgroup_operations = 0;
  }
  if (what & kAvoidStorage16Bit) c.storage_buffer_16bit = false;
  if (what & kAvoidFloat16Arithmetic) c.shader_float16 = false;
  if (what & kAvoidPipelineCache) c.pipeline_cache = false;
}

}  // namespace

std::span<const DeviceQuirk> device_quirks() noexcept { return kQuirks; }

bool quirk_matches(const DeviceQuirk& q, const Capabilities& c) {
  if (q.vendor_id && q.vendor_id != c.vendor_id) return false;
  if (q.driver_id && q.driver_id != c.driver_id) return false;
  if (q.api_below && c.api_version >= q.api_below) return false;
  if (c.driver_version < q.driver_version_from) return false;
  if (q.driver_version_below && c.driver_version >= q.driver_version_below) return false;
  return !q.also || q.also(c);
}

void apply_device_quirks(Capabilities& caps, std::span<const DeviceQuirk> table, std::span<const std::string> forced) {
  for (const std::string& name : forced)
    if (std::none_of(table.begin(), table.end(), [&](const DeviceQuirk& q) { return q.name == name; })) {
      std::string known;
      for (const DeviceQuirk& q : table) known += (known.empty() ? "" : ", ") + std::string(q.name);
      throw Error("unknown quirk '" + name + "' in INFINI_QUIRKS (known: " + known + ", or off)");
    }
  for (const DeviceQuirk& q : table) {
    const bool named = std::find(forced.begin(), forced.end(), q.name) != forced.end();
    if (!named && !quirk_matches(q, caps)) continue;
    avoid(caps, q.avoid);
    caps.quirks.emplace_back(q.name);
  }
}

void apply_device_quirks_from_environment(Capabilities& caps) {
  const std::string value = env::value(env::Variable::Quirks).value_or("");
  if (value == "off") return;
  std::vector<std::string> forced;
  for (size_t start = 0; start < value.size();) {
    const size_t comma = std::min(value.find(',', start), value.size());
    if (comma > start) forced.push_back(value.substr(start, comma - start));
    start = comma + 1;
  }
  apply_device_quirks(caps, device_quirks(), forced);
}

}  // namespace infini::vk
