#include "vk/device_choice.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>

#include "vk/check.hpp"
#include "vk/device_profile.hpp"
#include "vk/instance.hpp"
#include "util/environment.hpp"

namespace infini::vk {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

std::string device_list(const std::vector<Capabilities>& devices) {
  std::string out;
  for (size_t i = 0; i < devices.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(i) + " '" + devices[i].name + "'";
  }
  return out.empty() ? "none" : out;
}

}  // namespace

std::vector<PhysicalDevice> enumerate_physical_devices(const Instance& instance, const DeviceProfile* profile) {
  uint32_t count = 0;
  INFINI_VK_CHECK(vkEnumeratePhysicalDevices(instance.handle(), &count, nullptr));
  std::vector<VkPhysicalDevice> handles(count);
  INFINI_VK_CHECK(vkEnumeratePhysicalDevices(instance.handle(), &count, handles.data()));
  handles.resize(count);

  std::vector<Capabilities> caps;
  for (VkPhysicalDevice h : handles) caps.push_back(probe_capabilities(h, instance.api_version(), instance.handle()));
  std::vector<PhysicalDevice> out;
  for (size_t i : unique_devices(caps)) out.push_back({handles[i], std::move(caps[i])});
  if (profile)
    for (PhysicalDevice& d : out)
      if (d.caps.usable) apply_device_profile(d.caps, *profile);
  return out;
}

std::vector<size_t> unique_devices(const std::vector<Capabilities>& devices) {
  std::vector<size_t> kept;
  for (size_t i = 0; i < devices.size(); ++i) {
    const Capabilities& d = devices[i];
    auto twin = std::find_if(kept.begin(), kept.end(), [&](size_t k) {
      return d.has_device_uuid() && devices[k].device_uuid == d.device_uuid;
    });
    if (twin == kept.end()) {
      kept.push_back(i);
      continue;
    }
    // Same GPU twice: keep the usable driver with the newer API version.
    const Capabilities& other = devices[*twin];
    if ((d.usable && !other.usable) || (d.usable == other.usable && d.api_version > other.api_version)) *twin = i;
  }
  return kept;
}

int preference_rank(DeviceType type) noexcept {
  switch (type) {
    case DeviceType::Discrete: return 0;
    case DeviceType::Integrated: return 1;
    case DeviceType::Virtual: return 2;
    case DeviceType::Cpu: return 3;
    default: return 4;
  }
}

size_t default_device(const std::vector<Capabilities>& devices) {
  size_t best = devices.size();
  for (size_t i = 0; i < devices.size(); ++i) {
    if (!devices[i].usable) continue;
    if (best == devices.size()) {
      best = i;
      continue;
    }
    const int r = preference_rank(devices[i].type), rb = preference_rank(devices[best].type);
    if (r < rb || (r == rb && devices[i].device_local_bytes > devices[best].device_local_bytes)) best = i;
  }
  if (best == devices.size())
    throw Error("no usable Vulkan device (need Vulkan 1.2 with a compute queue; devices: " + device_list(devices) +
                "); on a machine without a GPU install Mesa's lavapipe: apt-get install mesa-vulkan-drivers");
  return best;
}

size_t select_device(const std::vector<Capabilities>& devices, std::string_view selector) {
  size_t index = 0;
  const char* end = selector.data() + selector.size();
  auto [ptr, ec] = std::from_chars(selector.data(), end, index);
  size_t found = devices.size();
  if (!selector.empty() && ec == std::errc() && ptr == end) {
    if (index >= devices.size())
      throw Error("device index " + std::string(selector) + " is out of range (devices: " + device_list(devices) + ")");
    found = index;
  } else {
    const std::string needle = lower(selector);
    for (size_t i = 0; i < devices.size() && found == devices.size(); ++i)
      if (!needle.empty() && lower(devices[i].name).find(needle) != std::string::npos) found = i;
    if (found == devices.size())
      throw Error("no device matches '" + std::string(selector) + "' (devices: " + device_list(devices) + ")");
  }
  if (!devices[found].usable)
    throw Error("device " + std::to_string(found) + " '" + devices[found].name + "' cannot be used: " +
                devices[found].unusable_reason);
  return found;
}

size_t choose_device(const std::vector<Capabilities>& devices) {
  if (const auto named = env::value(env::Variable::Device)) return select_device(devices, *named);
  return default_device(devices);
}

}  // namespace infini::vk
