#pragma once
// Moving host float data to and from device tensors of a given storage type.
#include <span>
#include <string>
#include <vector>

#include "infini/element_type.hpp"
#include "vk/buffer.hpp"

namespace infini::ops {

// A device-local buffer holding `values` stored as `type` (f16 rounds to nearest even; block
// formats as util/block_codec.hpp encodes them), its size rounded up to whole 32-bit words.
vk::Buffer upload_tensor(vk::Device& device, std::span<const float> values, ElementType type, std::string label);

// The values exactly as the device sees them after storing as `type`, in double: what a float64
// reference must be fed so that only the kernel's arithmetic is being tested.
std::vector<double> as_stored(std::span<const float> values, ElementType type);

// Reads `count` floats from a float32 buffer at element `offset`.
std::vector<float> download_floats(const vk::Buffer& buffer, size_t count, size_t offset = 0);

}  // namespace infini::ops
