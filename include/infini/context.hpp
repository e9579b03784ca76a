#pragma once
// infini::Context: the Vulkan device a program computes on. Everything else (layers, models,
// sessions) is created from a context. This header needs no Vulkan headers.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "infini/error.hpp"

namespace infini {

struct DeviceDescription {
  size_t index = 0;          // stable: the order the driver lists devices, duplicates removed
  std::string name;          // "NVIDIA H100 80GB HBM3", "llvmpipe (LLVM 15.0.6, 256 bits)"
  std::string vendor;        // "NVIDIA", "AMD", "Intel", "Arm", "Qualcomm", "Mesa", ...
  std::string type;          // "discrete", "integrated", "virtual", "cpu", "other"
  std::string driver;        // driver name and version
  std::string api_version;   // "1.3.239"
  std::string capabilities;  // one-line summary: memory, subgroups, fp16, int8, ...
  bool usable = false;       // Vulkan 1.1 or newer with a compute queue
  bool default_choice = false;
  // The autotuner's kept choices on this device ("q4_0 2048x2048: lanes", "attention 16/4 heads
  // of 64, segment 2048: rows"; `infini tune`), and why its cache was not read when it is
  // damaged or stale (empty when there is none).
  std::vector<std::string> tuned_kernels;
  std::string tuning_cache_problem;
};

// Every Vulkan device on this machine; default_choice marks the one Context() would open
// (INFINI_DEVICES / INFINI_DEVICE honoured: the first device named there).
std::vector<DeviceDescription> list_devices();

// The device profiles infini ships: run as if on a phone or board GPU (ContextOptions::device_profile,
// INFINI_DEVICE_PROFILE). Each lowers a device's features and limits to a real GPU's published ones.
struct DeviceProfileDescription {
  std::string name;         // "mali-g78"
  std::string description;  // the GPU and driver its numbers come from
  uint32_t subgroup_size = 0;
};
std::vector<DeviceProfileDescription> device_profiles();

struct ContextOptions {
  std::string device;       // index or name substring; empty = INFINI_DEVICE or the best device
  // Several devices in pipeline order (indices or name substrings). An entry may repeat: each
  // entry opens its own logical device, with its own queue and memory. When empty: `device`;
  // when that is empty too, INFINI_DEVICES (comma-separated), then INFINI_DEVICE, then the best.
  std::vector<std::string> devices;
  bool validation = false;  // enable VK_LAYER_KHRONOS_validation when installed (also INFINI_VALIDATION=1)
  // Run as if every device were the GPU of this profile (its features and limits at most; see
  // `infini devices --profiles`): "mali-g78", "adreno-650", ... Empty: INFINI_DEVICE_PROFILE.
  std::string device_profile;
};

class Context {
 public:
  explicit Context(const ContextOptions& options = {});
  ~Context();
  Context(Context&&) noexcept;
  Context& operator=(Context&&) noexcept;

  DeviceDescription device() const;                 // the first device
  std::vector<DeviceDescription> devices() const;  // every device, in pipeline order
  uint64_t device_memory_bytes() const;       // allocated by infini on all its devices now
  uint64_t peak_device_memory_bytes() const;  // the sum over its devices of the most allocated at once
  // Starts the peaks over: peak_device_memory_bytes() is then what is allocated now.
  void reset_peak_device_memory();

  // How `layers` layers are split over the devices in pipeline order: by `shares` (one positive
  // weight per device; {3, 1}: three quarters on the first) or, when empty, in proportion to each
  // device's free memory (the driver's budget where it reports one). Largest remainders, so the
  // counts add up to `layers`; a device may get none. Throws when the shares do not match.
  std::vector<int64_t> layers_per_device(int64_t layers, std::span<const double> shares = {}) const;
  // How a model's hidden states pass from device `from` to device `to` (indices into devices())
  // when they are neighbours in the pipeline: "device-memory" (two logical devices of one GPU
  // share its memory), "host-memory" (both devices map one host buffer), or "host" (the host
  // copies them from one to the other). INFINI_HANDOFF forces a kind; throws when it cannot be.
  std::string handoff(size_t from, size_t to) const;
  // And who orders each piece's hand-off: "timeline" or "sync-file" (device `to` waits on the GPU
  // for device `from`'s signal: a timeline semaphore both hold, or a sync file per piece), or
  // "host" (the host waits for `from` before it submits to `to`). INFINI_HANDOFF_WAIT forces one.
  std::string handoff_wait(size_t from, size_t to) const;

 private:
  friend struct ContextAccess;  // the library's own access to the Vulkan devices
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace infini
