#pragma once
// How a model's layers are split over the devices of a pipeline: the one place that decides it
// (Context::layers_per_device and the runner both call this).
#include <cstdint>
#include <span>
#include <vector>

namespace infini::vk {
class Device;
}

namespace infini::model {

// Layers per device for `layers` layers over devices weighted by `shares` (all > 0): largest
// remainders, so the counts add up to `layers`; a device may get none when there are more devices
// than layers.
std::vector<int64_t> split_layers(int64_t layers, std::span<const double> shares);

// Layers per device: by `shares` (one per device) or, when empty, in proportion to each device's
// free device-local memory. Throws when the shares do not match the devices.
std::vector<int64_t> layers_for_devices(std::span<vk::Device* const> devices, int64_t layers,
                                        std::span<const double> shares = {});

}  // namespace infini::model
