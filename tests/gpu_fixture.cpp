#include "gpu_fixture.hpp"

#include <exception>

namespace infini::test {
namespace {

struct Shared {
  std::shared_ptr<vk::Instance> instance;
  std::vector<vk::PhysicalDevice> physical;
  size_t index = 0;
  std::unique_ptr<vk::Device> device;
};

Shared& shared() {
  static Shared s = [] {
    Shared out;
    vk::InstanceOptions options;
    options.validation = vk::Validation::IfAvailable;
    options.synchronization_validation = true;
    out.instance = vk::Instance::create(options);
    out.physical = vk::enumerate_physical_devices(*out.instance);
    std::vector<vk::Capabilities> caps;
    for (const auto& p : out.physical) caps.push_back(p.caps);
    out.index = vk::choose_device(caps);
    out.device = std::make_unique<vk::Device>(out.instance, out.physical[out.index]);
    return out;
  }();
  return s;
}

}  // namespace

vk::Device& device() { return *shared().device; }
vk::Instance& instance() { return *shared().instance; }

std::unique_ptr<vk::Device> open_second_device(const vk::DeviceOptions& options) {
  Shared& s = shared();
  return std::make_unique<vk::Device>(s.instance, s.physical[s.index], options);
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

}  // namespace infini::test
