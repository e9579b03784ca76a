// Storage-type helpers shared by kernels.
//
// A kernel declares a read-only input with DECLARE_INPUT(binding, Name) and reads element i with
// load_Name(i) as a float. The element type is chosen per build variant:
//   -DName_F16  the buffer holds IEEE half floats, packed two per 32-bit word;
//   otherwise   the buffer holds 32-bit floats.
// Half floats are read as packed words with unpackHalf2x16, which needs no 16-bit storage
// feature, so the same SPIR-V runs on every Vulkan 1.2 device.
#ifndef INFINI_STORAGE_GLSL
#define INFINI_STORAGE_GLSL

#define DECLARE_F32_INPUT(BINDING, NAME)                                                   \
  layout(std430, binding = BINDING) readonly buffer NAME##Buffer { float NAME##_data[]; }; \
  float load_##NAME(uint i) { return NAME##_data[i]; }

#define DECLARE_F16_INPUT(BINDING, NAME)                                                  \
  layout(std430, binding = BINDING) readonly buffer NAME##Buffer { uint NAME##_data[]; }; \
  float load_##NAME(uint i) {                                                            \
    const vec2 pair = unpackHalf2x16(NAME##_data[i >> 1]);                                \
    return (i & 1u) != 0u ? pair.y : pair.x;                                              \
  }

#endif
