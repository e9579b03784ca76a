#include "vk/host_wait.hpp"

#include <cstdlib>
#include <string>

#include "infini/error.hpp"
#include "vk/capabilities.hpp"
#include "util/environment.hpp"

namespace infini::vk {

namespace {
// INFINI_WAIT_SPIN_US, read once: -1 when unset or empty.
long spin_from_environment() {
  static const long value = [] {
    const std::optional<std::string> text = env::value(env::Variable::WaitSpinUs);
    if (!text) return -1L;
    char* end = nullptr;
    const long us = std::strtol(text->c_str(), &end, 10);
    if (*end || us < 0 || us > 100000)
      throw Error("INFINI_WAIT_SPIN_US must be microseconds from 0 to 100000, got '" + *text + "'");
    return us;
  }();
  return value;
}
}  // namespace

std::chrono::microseconds wait_spin_for(const Capabilities& caps) {
  if (const long us = spin_from_environment(); us >= 0) return std::chrono::microseconds(us);
  return caps.type == DeviceType::Discrete ? kGpuWaitSpin : std::chrono::microseconds(0);
}

}  // namespace infini::vk
