#pragma once
// How the host waits for its device's work. A blocking wait (vkWaitSemaphores, vkWaitForFences)
// puts the thread to sleep and the driver wakes it when the work is done: on a GPU that sleep and
// wake-up costs tens of microseconds a submission, a large share of a decode token on a fast card
// (an H200 spent 149 of a 155M model's 670 us a token on submission, start and wake-up). So on
// discrete GPUs the host first polls the work's status for a while (its spin), and sleeps only if
// the work is still running then. Elsewhere it sleeps at once: a CPU driver's device is the host's
// own cores, which a polling thread would take from the work it waits for, and an integrated GPU
// (a phone's, a laptop's) shares the chip's power and heat budget with the cores, so a polling
// core there can slow the GPU it waits for and costs battery.
#include <chrono>
#include <cstdint>

namespace infini::vk {

struct Capabilities;

// The longest the host polls before it sleeps: kGpuWaitSpin on discrete GPUs, 0 on other devices,
// or INFINI_WAIT_SPIN_US microseconds (0 to 100000) for every device where that is set.
std::chrono::microseconds wait_spin_for(const Capabilities& caps);
inline constexpr std::chrono::microseconds kGpuWaitSpin{2000};

// Polls done() until it returns true or `spin` has passed; returns its last answer. Between
// polls the thread pauses (a CPU hint), so a sibling hyper-thread keeps its share.
template <class Done>
bool spin_until(Done&& done, std::chrono::microseconds spin) {
  if (spin.count() <= 0) return false;
  const auto until = std::chrono::steady_clock::now() + spin;
  for (;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= until) return false;
    for (int i = 0; i < 16; ++i) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#elif defined(__aarch64__)
      asm volatile("yield");
#endif
    }
  }
}

}  // namespace infini::vk
