#include "support/gpu_fixture.hpp"

#include <cstdlib>
#include <exception>
#include <string>

#include "ops/matrix_units.hpp"
#include "vk/device_profile.hpp"

namespace infini::test {
namespace {

struct Shared {
  std::shared_ptr<vk::Instance> instance;
  std::vector<vk::PhysicalDevice> physical;
  size_t index = 0;
  std::unique_ptr<vk::Device> device;
  const vk::DeviceProfile* profile = nullptr;  // INFINI_DEVICE_PROFILE: every test runs as that GPU
};

Shared& shared() {
  static Shared s = [] {
    Shared out;
    vk::InstanceOptions options;
    options.validation = vk::Validation::IfAvailable;
    options.synchronization_validation = true;
    out.profile = vk::device_profile_from_environment();
    if (out.profile) options.max_api_version = out.profile->api_version;
    out.instance = vk::Instance::create(options);
    out.physical = vk::enumerate_physical_devices(*out.instance, out.profile);
    std::vector<vk::Capabilities> caps;
    for (const auto& p : out.physical) caps.push_back(p.caps);
    out.index = vk::choose_device(caps);
    vk::DeviceOptions device_options;
    device_options.profile = out.profile;
    out.device = std::make_unique<vk::Device>(out.instance, out.physical[out.index], device_options);
    return out;
  }();
  return s;
}

}  // namespace

vk::Device& device() { return *shared().device; }
vk::Instance& instance() { return *shared().instance; }

std::unique_ptr<vk::Device> open_second_device(const vk::DeviceOptions& options) {
  Shared& s = shared();
  vk::DeviceOptions profiled = options;
  if (!profiled.profile) profiled.profile = s.profile;
  return std::make_unique<vk::Device>(s.instance, s.physical[s.index], profiled);
}

GpuTest::GpuTest() : messages_before_(instance().validation_message_count()) {}

GpuTest::~GpuTest() {
  if (std::uncaught_exceptions()) return;
  const uint64_t new_messages = instance().validation_message_count() - messages_before_;
  INFO("validation layer on: " << instance().validation_enabled());
  CHECK(new_messages == 0);
}

std::vector<float> random_floats(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> out(n);
  for (float& v : out) v = dist(rng);
  return out;
}

bool auto_takes_matrix_units(const vk::Capabilities& caps) {
  const char* mode = std::getenv("INFINI_MATRIX_UNITS");
  const bool emulate = mode && std::string(mode) == "emulate";
  return ops::supports_matrix_units(caps) && (!caps.is_software() || emulate);
}

}  // namespace infini::test
