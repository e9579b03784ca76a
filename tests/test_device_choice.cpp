// Device choice without a GPU: made-up capability records.
#include <catch2/catch.hpp>
#include <cstdlib>

#include "infini/error.hpp"
#include "vk/device_choice.hpp"

using namespace infini::vk;

namespace {
Capabilities make(const char* name, DeviceType type, uint8_t uuid, uint64_t memory = 1 << 30,
                  uint32_t api = VK_API_VERSION_1_3) {
  Capabilities c;
  c.name = name;
  c.type = type;
  c.device_uuid[0] = uuid;
  c.device_local_bytes = memory;
  c.api_version = api;
  c.usable = true;
  return c;
}
}  // namespace

TEST_CASE("discrete beats integrated beats virtual beats CPU", "[device-choice]") {
  std::vector<Capabilities> d{make("llvmpipe", DeviceType::Cpu, 0), make("Intel UHD", DeviceType::Integrated, 1),
                              make("virtio", DeviceType::Virtual, 2), make("RTX 4090", DeviceType::Discrete, 3)};
  CHECK(default_device(d) == 3);
  d[3].usable = false;
  CHECK(default_device(d) == 1);
  d[1].usable = false;
  CHECK(default_device(d) == 2);
  d[2].usable = false;
  CHECK(default_device(d) == 0);
  d[0].usable = false;
  CHECK_THROWS_WITH(default_device(d), Catch::Contains("no usable Vulkan device"));
}

TEST_CASE("among equal types the device with more memory wins", "[device-choice]") {
  std::vector<Capabilities> d{make("small", DeviceType::Discrete, 1, 8ull << 30),
                              make("big", DeviceType::Discrete, 2, 24ull << 30)};
  CHECK(default_device(d) == 1);
}

TEST_CASE("one GPU seen through two drivers is listed once", "[device-choice]") {
  std::vector<Capabilities> d{make("AMD RADV", DeviceType::Discrete, 7, 1 << 30, VK_API_VERSION_1_2),
                              make("llvmpipe", DeviceType::Cpu, 0), make("AMD AMDVLK", DeviceType::Discrete, 7),
                              make("other llvmpipe", DeviceType::Cpu, 0)};
  const auto kept = unique_devices(d);
  // The newer-API driver replaces its twin; all-zero UUIDs (unknown) are never merged.
  REQUIRE(kept.size() == 3);
  CHECK(kept[0] == 2);
  CHECK(kept[1] == 1);
  CHECK(kept[2] == 3);
}

TEST_CASE("a selector picks by index or by name substring", "[device-choice]") {
  std::vector<Capabilities> d{make("llvmpipe (LLVM 15)", DeviceType::Cpu, 0),
                              make("NVIDIA GeForce RTX 3060", DeviceType::Discrete, 1)};
  CHECK(select_device(d, "0") == 0);
  CHECK(select_device(d, "1") == 1);
  CHECK(select_device(d, "rtx") == 1);
  CHECK(select_device(d, "LLVMpipe") == 0);
  CHECK_THROWS_WITH(select_device(d, "2"), Catch::Contains("out of range"));
  CHECK_THROWS_WITH(select_device(d, "radeon"), Catch::Contains("no device matches 'radeon'") &&
                                                    Catch::Contains("NVIDIA GeForce RTX 3060"));
  CHECK_THROWS_WITH(select_device(d, ""), Catch::Contains("no device matches"));
  d[1].usable = false;
  d[1].unusable_reason = "Vulkan 1.1.0 (1.2 or newer needed)";
  CHECK_THROWS_WITH(select_device(d, "nvidia"), Catch::Contains("1.2 or newer"));
}

TEST_CASE("INFINI_DEVICE overrides the default choice", "[device-choice]") {
  std::vector<Capabilities> d{make("llvmpipe", DeviceType::Cpu, 0), make("RTX", DeviceType::Discrete, 1)};
  ::setenv("INFINI_DEVICE", "llvm", 1);
  CHECK(choose_device(d) == 0);
  ::setenv("INFINI_DEVICE", "nope", 1);
  CHECK_THROWS_AS(choose_device(d), infini::Error);
  ::unsetenv("INFINI_DEVICE");
  CHECK(choose_device(d) == 1);
}
