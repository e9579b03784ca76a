#pragma once
// Owned<Handle>: a device-level Vulkan handle together with the function that destroys it.
// Move-only; destroys the handle when it goes out of scope.
#include <vulkan/vulkan.h>

#include <utility>

namespace infini::vk {

template <typename Handle>
class Owned {
 public:
  using Destroy = void (*)(VkDevice, Handle, const VkAllocationCallbacks*);

  Owned() = default;
  Owned(VkDevice device, Handle handle, Destroy destroy)
      : device_(device), handle_(handle), destroy_(destroy) {}
  Owned(Owned&& other) noexcept { *this = std::move(other); }
  Owned& operator=(Owned&& other) noexcept {
    if (this != &other) {
      reset();
      device_ = std::exchange(other.device_, VK_NULL_HANDLE);
      handle_ = std::exchange(other.handle_, VK_NULL_HANDLE);
      destroy_ = std::exchange(other.destroy_, nullptr);
    }
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() { reset(); }

  Handle get() const noexcept { return handle_; }
  const Handle& get_ref() const noexcept { return handle_; }  // for APIs taking an array
  explicit operator bool() const noexcept { return handle_ != VK_NULL_HANDLE; }

  void reset() noexcept {
    if (handle_ != VK_NULL_HANDLE && destroy_) destroy_(device_, handle_, nullptr);
    handle_ = VK_NULL_HANDLE;
  }

 private:
  VkDevice device_ = VK_NULL_HANDLE;
  Handle handle_ = VK_NULL_HANDLE;
  Destroy destroy_ = nullptr;
};

}  // namespace infini::vk
