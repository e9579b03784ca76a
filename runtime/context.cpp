#include "infini/context.hpp"


#include "vk/device.hpp"
#include "vk/instance.hpp"

namespace infini {
namespace {

std::string mib(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

std::string capability_line(const vk::Capabilities& c) {
  if (!c.usable) return "unusable: " + c.unusable_reason;
  std::string s = "memory " + mib(c.device_local_bytes) + (c.unified_memory ? " unified" : "");
  s += ", subgroup " + std::to_string(c.subgroup_size);
  if (c.subgroup_size_control && c.min_subgroup_size != c.max_subgroup_size)
    s += " (" + std::to_string(c.min_subgroup_size) + "-" + std::to_string(c.max_subgroup_size) + ")";
  s += c.subgroups_in_compute ? " [" + vk::subgroup_operation_names(c.subgroup_operations) + "]" : " [not in compute]";
  s += ", fp16 " + std::string(c.shader_float16 ? "yes" : "no");
  s += ", 16-bit storage " + std::string(c.storage_buffer_16bit ? "yes" : "no");
  s += ", int8 " + std::string(c.shader_int8 ? "yes" : "no");
  s += ", int dot " + std::string(c.integer_dot_product ? "yes" : "no");
  s += ", coopmat " + std::string(c.cooperative_matrix_khr ? "KHR" : c.cooperative_matrix_nv ? "NV" : "no");
  s += ", shared " + std::to_string(c.max_shared_memory_bytes / 1024) + " KiB";
  s += ", workgroup " + std::to_string(c.max_workgroup_invocations);
  s += ", max buffer range " + mib(c.max_storage_buffer_range);
  s += ", max allocation " + mib(c.max_memory_allocation_size);
  s += ", timestamps " + std::string(c.timestamps ? "yes" : "no");
  return s;
}

DeviceDescription describe(const vk::Capabilities& c, size_t index) {
  DeviceDescription d;
  d.index = index;
  d.name = c.name;
  d.vendor = c.vendor;
  d.type = vk::device_type_name(c.type);
  d.driver = (c.driver_name.empty() ? std::string("driver") : c.driver_name) + " " +
             (c.driver_info.empty() ? vk::format_driver_version(c) : c.driver_info);
  d.api_version = vk::format_api_version(c.api_version);
  d.capabilities = capability_line(c);
  d.usable = c.usable;
  return d;
}

std::vector<vk::Capabilities> caps_of(const std::vector<vk::PhysicalDevice>& devices) {
  std::vector<vk::Capabilities> caps;
  for (const auto& d : devices) caps.push_back(d.caps);
  return caps;
}

}  // namespace

std::vector<DeviceDescription> list_devices() {
  auto instance = vk::Instance::create();
  const auto devices = vk::enumerate_physical_devices(*instance);
  const auto caps = caps_of(devices);
  std::vector<DeviceDescription> out;
  for (size_t i = 0; i < devices.size(); ++i) out.push_back(describe(devices[i].caps, i));
  if (!devices.empty()) out[vk::choose_device(caps)].default_choice = true;
  return out;
}

struct Context::State {
  std::shared_ptr<vk::Instance> instance;
  std::unique_ptr<vk::Device> device;
  size_t index = 0;
};

Context::Context(const ContextOptions& options) : state_(std::make_unique<State>()) {
  vk::InstanceOptions instance_options = vk::instance_options_from_environment();
  if (options.validation && instance_options.validation == vk::Validation::Off)
    instance_options.validation = vk::Validation::IfAvailable;
  state_->instance = vk::Instance::create(instance_options);
  const auto devices = vk::enumerate_physical_devices(*state_->instance);
  const auto caps = caps_of(devices);
  state_->index = options.device.empty() ? vk::choose_device(caps) : vk::select_device(caps, options.device);
  state_->device = std::make_unique<vk::Device>(state_->instance, devices[state_->index]);
}

Context::~Context() = default;
Context::Context(Context&&) noexcept = default;
Context& Context::operator=(Context&&) noexcept = default;

DeviceDescription Context::device() const {
  DeviceDescription d = describe(state_->device->caps(), state_->index);
  d.default_choice = true;
  return d;
}
uint64_t Context::device_memory_bytes() const { return state_->device->allocated_bytes(); }
uint64_t Context::peak_device_memory_bytes() const { return state_->device->peak_allocated_bytes(); }
vk::Device& Context::vulkan_device() const { return *state_->device; }

}  // namespace infini
