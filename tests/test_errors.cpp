// The error type carries the VkResult and where it happened; a lost device has its own type.
#include <catch2/catch.hpp>

#include "vk/check.hpp"

TEST_CASE("a failed Vulkan call names the call, the result and the place", "[errors]") {
  try {
    INFINI_VK_CHECK(VK_ERROR_OUT_OF_DEVICE_MEMORY);
    FAIL("no throw");
  } catch (const infini::DeviceLostError&) {
    FAIL("not a lost device");
  } catch (const infini::VulkanError& e) {
    CHECK(e.result() == VK_ERROR_OUT_OF_DEVICE_MEMORY);
    CHECK_THAT(e.what(), Catch::Contains("VK_ERROR_OUT_OF_DEVICE_MEMORY") && Catch::Contains("test_errors.cpp:"));
    CHECK(std::string(e.what()).find('\n') == std::string::npos);
  }
}

TEST_CASE("a lost device is reported as such", "[errors]") {
  CHECK_THROWS_AS(infini::vk::check(VK_ERROR_DEVICE_LOST, "vkQueueSubmit(q, 1, &s, f)", "x.cpp", 7),
                  infini::DeviceLostError);
  CHECK_THROWS_WITH(infini::vk::check(VK_ERROR_DEVICE_LOST, "vkQueueSubmit(q, 1, &s, f)", "x.cpp", 7),
                    Catch::StartsWith("vkQueueSubmit failed with VK_ERROR_DEVICE_LOST") &&
                        Catch::Contains("device was lost"));
}

TEST_CASE("success and positive codes do not throw", "[errors]") {
  CHECK(INFINI_VK_CHECK(VK_SUCCESS) == VK_SUCCESS);
  CHECK(INFINI_VK_CHECK(VK_INCOMPLETE) == VK_INCOMPLETE);
  CHECK(std::string(infini::vulkan_result_name(-12345)) == "VK_RESULT_UNKNOWN");
}
