#pragma once
// Element types of tensors in buffers. Accumulation is always fp32 on the device.
#include <cstddef>
#include <string_view>

namespace infini {

enum class DType { F32, F16 };

constexpr std::size_t dtype_bytes(DType t) noexcept { return t == DType::F16 ? 2 : 4; }
constexpr std::string_view dtype_name(DType t) noexcept { return t == DType::F16 ? "f16" : "f32"; }

}  // namespace infini
