#include "vk/dispatch_profile.hpp"

#include <string_view>

namespace infini::vk {

void DispatchProfile::add(std::span<const TimestampSample> samples) {
  const std::string_view prefix = CommandStream::kDispatchLabel;
  for (size_t i = 1; i < samples.size(); ++i) {
    const std::string& label = samples[i].label;
    if (label.compare(0, prefix.size(), prefix) != 0) continue;
    DispatchTime& t = kernels[label.substr(prefix.size())];
    ++t.dispatches;
    t.seconds += (samples[i].ns - samples[i - 1].ns) * 1e-9;
  }
}

DispatchProfile& DispatchProfile::operator+=(const DispatchProfile& o) {
  for (const auto& [kernel, t] : o.kernels) {
    DispatchTime& mine = kernels[kernel];
    mine.dispatches += t.dispatches;
    mine.seconds += t.seconds;
  }
  return *this;
}

DispatchProfile DispatchProfile::operator-(const DispatchProfile& earlier) const {
  DispatchProfile out;
  for (const auto& [kernel, t] : kernels) {
    DispatchTime d = t;
    if (const auto it = earlier.kernels.find(kernel); it != earlier.kernels.end()) {
      d.dispatches -= it->second.dispatches;
      d.seconds -= it->second.seconds;
    }
    if (d.dispatches > 0) out.kernels.emplace(kernel, d);
  }
  return out;
}

double DispatchProfile::seconds() const noexcept {
  double s = 0;
  for (const auto& [kernel, t] : kernels) s += t.seconds;
  return s;
}

}  // namespace infini::vk
