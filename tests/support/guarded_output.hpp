#pragma once
// Output buffers followed by sentinel words that a kernel must leave untouched, and a one-shot
// recording: what the tests of the small ops (rms_norm, elementwise, embedding) share.
#include <cmath>
#include <functional>
#include <span>
#include <vector>

#include "infini/element_type.hpp"
#include "ops/host_tensor.hpp"
#include "util/nmse.hpp"
#include "vk/buffer.hpp"
#include "vk/command_stream.hpp"
#include "vk/device.hpp"

namespace infini::test {

inline constexpr size_t kGuard = 64;
inline constexpr float kSentinel = -12345.0f;

// A device buffer holding `values` followed by kGuard sentinel words.
inline vk::Buffer guarded(vk::Device& d, const std::vector<float>& values) {
  std::vector<float> all(values);
  all.insert(all.end(), kGuard, kSentinel);
  return ops::upload_tensor(d, all, ElementType::F32, "guarded");
}

// Whether the kGuard words after the first `count` of `b` are still the sentinel.
inline bool guard_intact(const vk::Buffer& b, size_t count) {
  for (float v : ops::download_floats(b, kGuard, count))
    if (v != kSentinel) return false;
  return true;
}

inline double err(const std::vector<float>& got, const std::vector<double>& want) {
  return nmse(std::span<const float>(got), std::span<const double>(want));
}

// Records `record` into a new stream, submits it and waits.
inline void run_once(vk::Device& d, const std::function<void(vk::CommandStream&)>& record) {
  vk::CommandStream s(d);
  s.begin();
  record(s);
  s.end();
  s.submit_and_wait();
}

}  // namespace infini::test
