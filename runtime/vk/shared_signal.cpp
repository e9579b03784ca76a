#include "vk/shared_signal.hpp"

#include "infini/error.hpp"
#include "vk/check.hpp"
#include "vk/external_handles.hpp"


namespace infini::vk {
namespace {

Owned<VkSemaphore> make_semaphore(const Device& d, VkSemaphoreType type_of, VkExternalSemaphoreHandleTypeFlags exported) {
  VkExportSemaphoreCreateInfo export_info{VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO};
  export_info.handleTypes = exported;
  VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
  type.pNext = exported ? &export_info : nullptr;
  type.semaphoreType = type_of;
  VkSemaphoreCreateInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
  info.pNext = &type;
  VkSemaphore semaphore = VK_NULL_HANDLE;
  INFINI_VK_CHECK(vkCreateSemaphore(d.handle(), &info, nullptr, &semaphore));
  return Owned<VkSemaphore>(d.handle(), semaphore, vkDestroySemaphore);
}

int export_fd(const Device& d, VkSemaphore semaphore, VkExternalSemaphoreHandleTypeFlagBits type) {
  VkSemaphoreGetFdInfoKHR get{VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR};
  get.semaphore = semaphore;
  get.handleType = type;
  int fd = -1;
  const auto get_fd = device_function<PFN_vkGetSemaphoreFdKHR>(d, "vkGetSemaphoreFdKHR", "shared signal");
  INFINI_VK_CHECK(get_fd(d.handle(), &get, &fd));
  return fd;
}

void close_fd(int fd) noexcept {
#if INFINI_HAS_FDS
  if (fd >= 0) close(fd);
#endif
}

// Imports `fd` into `semaphore`; the import owns it when it succeeds, else it is closed here.
void import_fd(const Device& d, VkSemaphore semaphore, VkExternalSemaphoreHandleTypeFlagBits type, int fd,
               VkSemaphoreImportFlags flags) {
  VkImportSemaphoreFdInfoKHR import{VK_STRUCTURE_TYPE_IMPORT_SEMAPHORE_FD_INFO_KHR};
  import.semaphore = semaphore;
  import.flags = flags;
  import.handleType = type;
  import.fd = fd;
  PFN_vkImportSemaphoreFdKHR import_semaphore = nullptr;
  try {
    import_semaphore = device_function<PFN_vkImportSemaphoreFdKHR>(d, "vkImportSemaphoreFdKHR", "shared signal");
  } catch (...) {
    close_fd(fd);
    throw;
  }
  if (const VkResult result = import_semaphore(d.handle(), &import); result != VK_SUCCESS) {
    close_fd(fd);
    throw Error("shared signal: importing a semaphore into '" + d.caps().name + "' failed (" +
                vulkan_result_name(result) + ")");
  }
}

}  // namespace

const char* signal_kind_name(SignalKind kind) noexcept { return kind == SignalKind::Timeline ? "timeline" : "sync-file"; }

bool can_share_signal(SignalKind kind, const Device& producer, const Device& consumer, std::string* why) {
  const Capabilities &p = producer.caps(), &c = consumer.caps();
  auto no = [&](std::string reason) {
    if (why) *why = std::move(reason);
    return false;
  };
  if (!INFINI_HAS_FDS) return no("semaphores are shared through file descriptors, which this system does not have");
  for (const Device* d : {&producer, &consumer})
    if (!d->has_timeline()) return no("'" + d->caps().name + "' has no timeline semaphores");
  if (kind == SignalKind::Timeline) {
    for (const Capabilities* d : {&p, &c})
      if (!d->timeline_semaphore_fd)
        return no("'" + d->name + "' cannot export and import timeline semaphores as fds (VK_KHR_external_semaphore_fd)");
    if (!same_physical_device(p, c))
      return no("'" + p.name + "' and '" + c.name + "' are not one physical device (device or driver UUIDs differ)");
    return true;
  }
  if (!p.sync_file_export)
    return no("'" + p.name + "' cannot export a semaphore as a sync file (VK_KHR_external_semaphore_fd)");
  if (!c.sync_file_import)
    return no("'" + c.name + "' cannot import a semaphore from a sync file (VK_KHR_external_semaphore_fd)");
  return true;
}

SignalToken& SignalToken::operator=(SignalToken&& other) noexcept {
  if (this != &other) {
    close_fd(release_fd());
    ticket_ = other.ticket_;
    fd_ = std::exchange(other.fd_, std::nullopt);
  }
  return *this;
}

SignalToken::~SignalToken() { close_fd(release_fd()); }

int SignalToken::release_fd() noexcept {
  const int fd = fd_.value_or(-1);
  fd_.reset();
  return fd;
}

SharedSignal::SharedSignal(Device& producer, Device& consumer, SignalKind kind, size_t slots)
    : producer_(producer), consumer_(consumer), kind_(kind) {
  if (std::string why; !can_share_signal(kind, producer, consumer, &why))
    throw Error("shared signal (" + std::string(signal_kind_name(kind)) + "): " + why);
  if (kind_ == SignalKind::Timeline) {
    const auto type = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
    produced_ = make_semaphore(producer, VK_SEMAPHORE_TYPE_TIMELINE, type);
    waited_.push_back(make_semaphore(consumer, VK_SEMAPHORE_TYPE_TIMELINE, 0));
    import_fd(consumer, waited_.back().get(), type, export_fd(producer, produced_.get(), type), 0);
    return;
  }
  produced_ = make_semaphore(producer, VK_SEMAPHORE_TYPE_BINARY, VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_SYNC_FD_BIT);
  for (size_t i = 0; i < std::max<size_t>(slots, 1); ++i)
    waited_.push_back(make_semaphore(consumer, VK_SEMAPHORE_TYPE_BINARY, 0));
}

SharedSignal::~SharedSignal() {
  waited_.clear();  // the import before what it imports
  produced_.reset();
}

SemaphoreValue SharedSignal::signal(uint64_t ticket) const noexcept { return {produced_.get(), ticket}; }

void SharedSignal::renew() {
  if (kind_ == SignalKind::Timeline) return;
  produced_ = make_semaphore(producer_, VK_SEMAPHORE_TYPE_BINARY, VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_SYNC_FD_BIT);
}

SignalToken SharedSignal::handed(uint64_t ticket) {
  if (kind_ == SignalKind::Timeline) return {ticket, std::nullopt};
  // Exporting a sync file takes the pending signal's fence and leaves the semaphore unsignalled,
  // ready for the next piece's signal.
  return {ticket, export_fd(producer_, produced_.get(), VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_SYNC_FD_BIT)};
}

SemaphoreValue SharedSignal::wait(SignalToken token, uint32_t slot) {
  if (kind_ == SignalKind::Timeline) return {waited_.front().get(), token.ticket()};
  if (!token.carries_fd()) throw Error("shared signal: a piece came without the sync file of the stage before it");
  if (slot >= waited_.size())
    throw Error("shared signal: slot " + std::to_string(slot) + " of " + std::to_string(waited_.size()));
  // A sync file is imported for one wait only (temporarily), which then consumes it.
  import_fd(consumer_, waited_[slot].get(), VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_SYNC_FD_BIT, token.release_fd(),
            VK_SEMAPHORE_IMPORT_TEMPORARY_BIT);
  return {waited_[slot].get(), 0};
}

void SharedSignal::release(uint64_t ticket) noexcept {
  if (kind_ != SignalKind::Timeline) return;
  try {
    uint64_t value = 0;
    INFINI_VK_CHECK(vkGetSemaphoreCounterValue(consumer_.handle(), waited_.front().get(), &value));
    if (value >= ticket) return;
    VkSemaphoreSignalInfo signal{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
    signal.semaphore = waited_.front().get();
    signal.value = ticket;
    INFINI_VK_CHECK(vkSignalSemaphore(consumer_.handle(), &signal));
  } catch (const std::exception&) {  // nothing more to do for a device that is gone
  }
}

}  // namespace infini::vk
