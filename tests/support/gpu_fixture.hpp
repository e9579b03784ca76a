#pragma once
// Fixture for tests that use the device. The device is opened once per process with the
// Khronos validation layer (synchronisation validation included) whenever it is installed;
// any validation error or warning during a test fails that test.
#include <catch2/catch.hpp>
#include <memory>
#include <random>
#include <vector>

#include "vk/device.hpp"
#include "vk/instance.hpp"

namespace infini::test {

vk::Device& device();
vk::Instance& instance();
// Opens another logical device on the same physical device (for cache and multi-device tests).
std::unique_ptr<vk::Device> open_second_device(const vk::DeviceOptions& options = {});

// Whether auto kernels take the matrix units here, as the README states the rule: on GPUs that
// have them, and on a CPU driver that has them (lavapipe 26) only under INFINI_MATRIX_UNITS=emulate.
bool auto_takes_matrix_units(const vk::Capabilities& caps);

class GpuTest {
 public:
  GpuTest();
  ~GpuTest();
  vk::Device& dev() const { return device(); }

 private:
  uint64_t messages_before_;
};

std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f);

}  // namespace infini::test
