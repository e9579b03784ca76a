#include "infini/context.hpp"

#include <cstdlib>
#include <utility>

#include "graph/kernel_tuning.hpp"
#include "api/context_access.hpp"
#include "exec/handoff.hpp"
#include "exec/layer_split.hpp"
#include "vk/device.hpp"
#include "vk/device_profile.hpp"
#include "vk/instance.hpp"
#include "util/environment.hpp"

namespace infini {
namespace {

std::string mib(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

// "KHR [16x16x16 f16>f32, ...]": the fragment shapes of the extension this build's kernels use
// (A and B types > D type); the other extension is named when only it is there.
std::string matrix_units(const vk::Capabilities& c) {
  const bool khr = vk::matrix_units_on_khr();
  if (!c.matrix_units_api()) {
    if (c.cooperative_matrix_khr) return "KHR (this build's kernels are on NV)";
    if (c.cooperative_matrix_nv) return "NV (this build's kernels are on KHR)";
    return "no";
  }
  std::string s = khr ? "KHR [" : "NV [";
  for (size_t i = 0; i < c.matrix_shapes.size(); ++i) {
    const vk::MatrixShape& m = c.matrix_shapes[i];
    s += (i ? ", " : "") + std::to_string(m.m) + "x" + std::to_string(m.n) + "x" + std::to_string(m.k) + " " + m.a +
         (m.b == m.a ? "" : "*" + m.b) + ">" + m.d;
  }
  return s + "]";
}

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
  s += ", coopmat " + matrix_units(c);
  s += ", shared " + std::to_string(c.max_shared_memory_bytes / 1024) + " KiB";
  s += ", workgroup " + std::to_string(c.max_workgroup_invocations);
  s += ", max buffer range " + mib(c.max_storage_buffer_range);
  s += ", max allocation " + mib(c.max_memory_allocation_size);
  s += ", timestamps " + std::string(c.timestamps ? "yes" : "no");
  // What pipeline hand-offs between this device and another can share (exec/handoff.hpp).
  std::vector<std::string> shared;
  if (c.external_memory_host) shared.push_back("host memory");
  if (c.external_memory_fd) shared.push_back("memory fds");
  if (c.timeline_semaphore && c.timeline_semaphore_fd) shared.push_back("timeline fds");
  if (c.timeline_semaphore && (c.sync_file_export || c.sync_file_import))
    shared.push_back(std::string("sync files") + (c.sync_file_export && c.sync_file_import ? "" : c.sync_file_export ? " (out)" : " (in)"));
  std::string shares;
  for (size_t i = 0; i < shared.size(); ++i)
    shares += (i == 0 ? "" : i + 1 == shared.size() ? " and " : ", ") + shared[i];
  s += ", shares " + (shares.empty() ? std::string("nothing") : shares);
  for (size_t i = 0; i < c.quirks.size(); ++i) s += (i ? "," : ", quirks ") + c.quirks[i];
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
  if (const auto tuned = model::read_tuning_cache(c, d.tuning_cache_problem))
  {
    for (const auto& [shape, t] : tuned->matmuls) d.tuned_kernels.push_back(model::shape_name(shape) + ": " + t.choice.name());
    for (const auto& [shape, t] : tuned->attention)
      d.tuned_kernels.push_back(model::shape_name(shape) + ": " + ops::attention_kernel_name(t.kernel));
  }
  return d;
}

std::vector<vk::Capabilities> caps_of(const std::vector<vk::PhysicalDevice>& devices) {
  std::vector<vk::Capabilities> caps;
  for (const auto& d : devices) caps.push_back(d.caps);
  return caps;
}

// "0,0,Intel" -> {"0", "0", "Intel"}; an empty entry is an error.
std::vector<std::string> split_device_list(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t comma = list.find(',', start);
    std::string item = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const size_t a = item.find_first_not_of(" \t"), b = item.find_last_not_of(" \t");
    item = a == std::string::npos ? "" : item.substr(a, b - a + 1);
    if (item.empty()) throw Error("device list '" + list + "' has an empty entry");
    out.push_back(item);
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

// The selectors a Context opens when given none: INFINI_DEVICES, else none (INFINI_DEVICE or the
// best device, see choose_device).
std::vector<std::string> selectors_from_environment() {
  const std::optional<std::string> list = env::value(env::Variable::Devices);
  return list ? split_device_list(*list) : std::vector<std::string>{};
}

// The profile `name` names, else INFINI_DEVICE_PROFILE's, else none.
const vk::DeviceProfile* chosen_profile(const std::string& name) {
  return name.empty() ? vk::device_profile_from_environment() : &vk::find_device_profile(name);
}

// `options` for an instance that asks for at most the profile's API version.
vk::InstanceOptions capped_to(vk::InstanceOptions options, const vk::DeviceProfile* profile) {
  if (profile) options.max_api_version = profile->api_version;
  return options;
}

}  // namespace

std::vector<DeviceProfileDescription> device_profiles() {
  std::vector<DeviceProfileDescription> out;
  for (const vk::DeviceProfile& p : vk::device_profiles()) out.push_back({std::string(p.name), std::string(p.description), p.subgroup_size});
  return out;
}

std::vector<DeviceDescription> list_devices() {
  const vk::DeviceProfile* profile = chosen_profile("");
  auto instance = vk::Instance::create(capped_to({}, profile));
  const auto devices = vk::enumerate_physical_devices(*instance, profile);
  const auto caps = caps_of(devices);
  std::vector<DeviceDescription> out;
  for (size_t i = 0; i < devices.size(); ++i) out.push_back(describe(devices[i].caps, i));
  const std::vector<std::string> env = selectors_from_environment();
  if (!devices.empty()) out[env.empty() ? vk::choose_device(caps) : vk::select_device(caps, env.front())].default_choice = true;
  return out;
}

struct Context::Impl {
  std::shared_ptr<vk::Instance> instance;
  std::vector<std::unique_ptr<vk::Device>> devices;
  std::vector<size_t> indices;
};


Context::Context(const ContextOptions& options) : impl_(std::make_unique<Impl>()) {
  const vk::DeviceProfile* profile = chosen_profile(options.device_profile);
  vk::InstanceOptions instance_options = capped_to(vk::instance_options_from_environment(), profile);
  if (options.validation && instance_options.validation == vk::Validation::Off)
    instance_options.validation = vk::Validation::IfAvailable;
  impl_->instance = vk::Instance::create(instance_options);
  const auto physical = vk::enumerate_physical_devices(*impl_->instance, profile);
  const auto caps = caps_of(physical);
  std::vector<std::string> selectors = options.devices;
  if (selectors.empty() && !options.device.empty()) selectors = {options.device};
  if (selectors.empty()) selectors = selectors_from_environment();
  if (selectors.empty()) impl_->indices = {vk::choose_device(caps)};
  for (const std::string& s : selectors) impl_->indices.push_back(vk::select_device(caps, s));
  vk::DeviceOptions device_options;
  device_options.profile = profile;
  for (size_t index : impl_->indices)
    impl_->devices.push_back(std::make_unique<vk::Device>(impl_->instance, physical[index], device_options));
}

Context::~Context() = default;
Context::Context(Context&&) noexcept = default;
Context& Context::operator=(Context&&) noexcept = default;

DeviceDescription Context::device() const { return devices().front(); }

std::vector<DeviceDescription> Context::devices() const {
  std::vector<DeviceDescription> out;
  for (size_t i = 0; i < impl_->devices.size(); ++i) {
    out.push_back(describe(impl_->devices[i]->caps(), impl_->indices[i]));
    out.back().default_choice = true;
  }
  return out;
}

uint64_t Context::device_memory_bytes() const { return vk::allocated_bytes(ContextAccess::devices(*this)); }

uint64_t Context::peak_device_memory_bytes() const { return vk::peak_allocated_bytes(ContextAccess::devices(*this)); }

void Context::reset_peak_device_memory() { vk::reset_peaks(ContextAccess::devices(*this)); }

namespace {

// Devices `from` and `to` of a context; throws naming `what` when either is not one of them.
std::pair<vk::Device*, vk::Device*> device_pair(const Context& context, size_t from, size_t to, const char* what) {
  const std::vector<vk::Device*> all = ContextAccess::devices(context);
  if (from >= all.size() || to >= all.size())
    throw Error(std::string(what) + ": device " + std::to_string(std::max(from, to)) + " of " + std::to_string(all.size()));
  return {all[from], all[to]};
}

}  // namespace

std::string Context::handoff(size_t from, size_t to) const {
  const auto [producer, consumer] = device_pair(*this, from, to, "handoff");
  return model::handoff_name(model::choose_handoff(model::Handoff::Auto, *producer, *consumer));
}

std::string Context::handoff_wait(size_t from, size_t to) const {
  const auto [producer, consumer] = device_pair(*this, from, to, "handoff_wait");
  const model::Handoff kind = model::choose_handoff(model::Handoff::Auto, *producer, *consumer);
  return model::handoff_wait_name(model::choose_handoff_wait(model::HandoffWait::Auto, kind, *producer, *consumer));
}

std::vector<int64_t> Context::layers_per_device(int64_t layers, std::span<const double> shares) const {
  return model::layers_for_devices(ContextAccess::devices(*this), layers, shares);
}

std::vector<vk::Device*> ContextAccess::devices(const Context& context) {
  std::vector<vk::Device*> out;
  for (const auto& d : context.impl_->devices) out.push_back(d.get());
  return out;
}

}  // namespace infini
