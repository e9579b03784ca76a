#pragma once
// A signal that one device's work gives and another device's work waits for, on the GPUs, with
// no host wait and wake-up in between: how a layer pipeline's stage starts on a piece whose hidden
// states the stage before it is still computing (exec/stage_pipeline.hpp). Two kinds, the first
// the pair allows (VK_KHR_external_semaphore_fd):
//  - Timeline: a timeline semaphore of the producer exported as an opaque fd and imported, once,
//    by the consumer; the producer's submission of a piece signals the piece's ticket and the
//    consumer's waits for it. Vulkan shares opaque fds only between devices with the same device
//    and driver UUIDs (logical devices of one GPU).
//  - SyncFile: the producer's submission signals a binary semaphore, from which the host exports a
//    sync file (a kernel fence, no wait) that the consumer imports into its slot's semaphore and
//    waits for. Sync files pass between any two devices that export and import them.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vk/device.hpp"
#include "vk/owned.hpp"

namespace infini::vk {

enum class SignalKind { Timeline, SyncFile };
const char* signal_kind_name(SignalKind kind) noexcept;  // "timeline", "sync-file"

// Whether `producer` can signal `consumer` this way; when not, why (one phrase).
bool can_share_signal(SignalKind kind, const Device& producer, const Device& consumer, std::string* why = nullptr);

// What a piece carries from the producer's submission to the consumer's: its ticket, and for
// SyncFile the exported sync file (owned: closed unless the consumer imports it; -1 is valid and
// means already signalled).
class SignalToken {
 public:
  SignalToken() = default;
  SignalToken(uint64_t ticket, std::optional<int> fd) : ticket_(ticket), fd_(fd) {}
  SignalToken(SignalToken&& other) noexcept { *this = std::move(other); }
  SignalToken& operator=(SignalToken&& other) noexcept;
  SignalToken(const SignalToken&) = delete;
  SignalToken& operator=(const SignalToken&) = delete;
  ~SignalToken();

  uint64_t ticket() const noexcept { return ticket_; }
  bool carries_fd() const noexcept { return fd_.has_value(); }
  int release_fd() noexcept;  // the fd, now the caller's

 private:
  uint64_t ticket_ = 0;
  std::optional<int> fd_;
};

class SharedSignal {
 public:
  // `slots`: pieces the consumer may have waiting at once (each SyncFile wait needs a semaphore of
  // its own until the wait is done). Throws infini::Error when can_share_signal is false or a
  // semaphore cannot be made, exported or imported.
  SharedSignal(Device& producer, Device& consumer, SignalKind kind, size_t slots);
  ~SharedSignal();
  SharedSignal(const SharedSignal&) = delete;
  SharedSignal& operator=(const SharedSignal&) = delete;

  SignalKind kind() const noexcept { return kind_; }
  // The producer's side: what its submission of piece `ticket` signals, and once submitted, the
  // token to hand to the consumer.
  SemaphoreValue signal(uint64_t ticket) const noexcept;
  SignalToken handed(uint64_t ticket);
  // After handed() failed: a SyncFile's semaphore still holds that submission's signal, so it is
  // replaced (call once the producer's device is idle).
  void renew();
  // The consumer's side: what its submission of the piece in `slot` waits for (a SyncFile token's
  // fd is imported into that slot's semaphore). The slot's previous wait must be done.
  SemaphoreValue wait(SignalToken token, uint32_t slot);
  // After the producer failed and has nothing pending: lets the consumer's waits for tickets up to
  // `ticket` go on (Timeline; a SyncFile's fences end with the producer's work or its device).
  void release(uint64_t ticket) noexcept;

 private:
  Device& producer_;
  Device& consumer_;
  SignalKind kind_;
  Owned<VkSemaphore> produced_;             // the producer's semaphore
  std::vector<Owned<VkSemaphore>> waited_;  // the consumer's: one (Timeline) or one per slot (SyncFile)
};

}  // namespace infini::vk
