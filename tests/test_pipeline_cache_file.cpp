// Pipeline cache files: only data whose header matches the device reaches the driver.
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "vk/pipeline_cache_file.hpp"
#include "support/temp_path.hpp"

using namespace infini::vk;

namespace {
Capabilities fake_device() {
  Capabilities c;
  c.vendor_id = 0x10de;
  c.device_id = 0x2330;
  c.driver_version = 42;
  for (uint8_t i = 0; i < VK_UUID_SIZE; ++i) c.pipeline_cache_uuid[i] = i;
  return c;
}
std::vector<uint8_t> cache_for(const Capabilities& c, size_t payload = 100) {
  VkPipelineCacheHeaderVersionOne h{};
  h.headerSize = sizeof h;
  h.headerVersion = VK_PIPELINE_CACHE_HEADER_VERSION_ONE;
  h.vendorID = c.vendor_id;
  h.deviceID = c.device_id;
  std::memcpy(h.pipelineCacheUUID, c.pipeline_cache_uuid.data(), VK_UUID_SIZE);
  std::vector<uint8_t> data(sizeof h + payload, 0xab);
  std::memcpy(data.data(), &h, sizeof h);
  return data;
}
}  // namespace

TEST_CASE("cache data is accepted only for the device that wrote it", "[pipeline-cache]") {
  const Capabilities dev = fake_device();
  CHECK(pipeline_cache_matches(cache_for(dev), dev));
  Capabilities other = dev;
  other.device_id = 1;
  CHECK_FALSE(pipeline_cache_matches(cache_for(other), dev));
  other = dev;
  other.pipeline_cache_uuid[5] ^= 1;  // new driver build
  CHECK_FALSE(pipeline_cache_matches(cache_for(other), dev));
  auto data = cache_for(dev);
  CHECK_FALSE(pipeline_cache_matches({data.begin(), data.begin() + 10}, dev));  // truncated
  data[4] = 2;                                                                   // header version
  CHECK_FALSE(pipeline_cache_matches(data, dev));
  data = cache_for(dev, 0);
  data[0] = 0xff;  // headerSize larger than the data
  CHECK_FALSE(pipeline_cache_matches(data, dev));
}

TEST_CASE("cache files are saved atomically and reloaded", "[pipeline-cache]") {
  const Capabilities dev = fake_device();
  const auto dir = infini::test::temp_path("infini-test-cache-file");
  std::filesystem::remove_all(dir);
  const auto file = pipeline_cache_path(dir, dev);
  CHECK(file.filename().string().find("10de-2330") != std::string::npos);
  CHECK_FALSE(load_pipeline_cache(file, dev).has_value());
  const auto data = cache_for(dev);
  REQUIRE(save_pipeline_cache(file, data));
  const auto loaded = load_pipeline_cache(file, dev);
  REQUIRE(loaded.has_value());
  CHECK(*loaded == data);
  // No temporary files are left behind.
  CHECK(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()) == 1);
  // A corrupted file is ignored, not passed on.
  std::ofstream(file, std::ios::binary | std::ios::trunc) << "garbage";
  CHECK_FALSE(load_pipeline_cache(file, dev).has_value());
  std::filesystem::remove_all(dir);
}
