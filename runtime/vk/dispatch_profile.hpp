#pragma once
// Device time per kernel, from command streams recorded with CommandStream::time_dispatches: each
// kernel (its name and grid) with how many dispatches ran it and their time in all. What a
// benchmark prints to show where a prefill or a decode token spends its device time.
#include <cstdint>
#include <map>
#include <span>
#include <string>

#include "vk/command_stream.hpp"

namespace infini::vk {

struct DispatchTime {
  int64_t dispatches = 0;
  double seconds = 0;
};

struct DispatchProfile {
  std::map<std::string, DispatchTime> kernels;  // "<kernel> <groups>" -> its time

  // Adds the dispatches of one run of a stream: each sample labelled by time_dispatches counts
  // from the sample before it.
  void add(std::span<const TimestampSample> samples);
  DispatchProfile& operator+=(const DispatchProfile& o);
  // The dispatches run between two reads of a running total.
  DispatchProfile operator-(const DispatchProfile& earlier) const;
  double seconds() const noexcept;  // all kernels together
};

}  // namespace infini::vk
