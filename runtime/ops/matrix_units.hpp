#pragma once
// Whether a device can run the kernels built on common/fragments.glsl with hardware fragments
// (MATRIX_UNITS): the cooperative-matrix extension this build's kernels use (KHR, or NV where the
// build's glslang lacks KHR) with f16 x f16 + f32 fragments at subgroup scope (NV 16x16x16, KHR
// 8s and 16s, see Capabilities::fragment_shape), the Vulkan
// memory model those shaders are compiled for, f16 arithmetic, and subgroups of 32 lanes (fixed,
// or asked for with size control; KHR also takes sizes dividing 32), launched full
// (computeFullSubgroups). Matmul and attention both ask here.
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>

#include "vk/capabilities.hpp"

namespace infini::ops {

bool supports_matrix_units(const vk::Capabilities& caps);
// Empty when it can; otherwise what is missing, e.g. "cooperative matrices (VK_KHR_cooperative_matrix)".
std::string missing_matrix_units(const vk::Capabilities& caps);

// Why fragment kernels over head dims (attention_coopmat.comp, memory_*_coopmat.comp, whose
// specialization constants are {workgroup, D, Dv}) cannot take D, Dv on this device; empty when
// they can. D must be a multiple of 16 and Dv of 32, and each kernel's shared memory, read from
// its SPIR-V at these constants, must fit the device.
std::string matrix_head_dims_misfit(int head_dim, int value_dim, uint32_t workgroup,
                                    std::initializer_list<std::span<const uint32_t>> kernels,
                                    const vk::Capabilities& caps);

// What the Auto kernels use: the hardware fragments where a GPU supports them (a CPU driver's
// are slower than its own kernels). INFINI_MATRIX_UNITS=off: never (the f32 kernels everywhere).
// INFINI_MATRIX_UNITS=emulate: a CPU driver with them takes them too, and a device without them
// that has f16 arithmetic takes the emulated fragments instead (slow); that runs everything a
// matrix-unit GPU would, on lavapipe, so the test suite can be run as such a GPU runs it. Any
// other value of the variable is an error.
enum class MatrixUnits { None, Hardware, Emulated };
MatrixUnits matrix_units_for_auto(const vk::Capabilities& caps);

}  // namespace infini::ops
