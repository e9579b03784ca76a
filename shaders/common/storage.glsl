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

// Four signed bytes of a word, low byte first.
vec4 int8x4_to_vec4(uint w) { return vec4(ivec4(int(w << 24), int(w << 16), int(w << 8), int(w)) >> 24); }

// ggml's Q8_0: blocks of 32 values in 34 bytes, an f16 scale d then 32 int8 q; value = d * q.
// Blocks are not word-aligned, so bytes come out of the 32-bit words that hold them (no 8-bit
// storage feature needed). A block starts at an even byte: its scale lies within one word, and
// four quants from a multiple of 4 start at byte 0 or 2 of a word. load4_NAME(i) reads values
// i..i+3 for i a multiple of 4 (one block). NAME_block(b, lo, hi) reads a whole block in the nine
// words that hold it and returns its scale, with its 32 quants as 8 words (int8x4_to_vec4 each):
// the loads a kernel walking K block by block needs.
#define DECLARE_Q8_0_INPUT(BINDING, NAME)                                                  \
  layout(std430, binding = BINDING) readonly buffer NAME##Buffer { uint NAME##_data[]; }; \
  float NAME##_scale(uint block) {                                                         \
    const uint b = block * 34u;                                                            \
    return unpackHalf2x16((NAME##_data[b >> 2] >> ((b & 3u) * 8u)) & 0xffffu).x;           \
  }                                                                                        \
  uint NAME##_quad(uint b) {                                                               \
    const uint shift = (b & 3u) * 8u, w = NAME##_data[b >> 2];                             \
    return shift == 0u ? w : (w >> shift) | (NAME##_data[(b >> 2) + 1u] << (32u - shift)); \
  }                                                                                        \
  float load_##NAME(uint i) {                                                              \
    const uint b = (i >> 5) * 34u + 2u + (i & 31u);                                        \
    const int q = int((NAME##_data[b >> 2] >> ((b & 3u) * 8u)) << 24) >> 24;               \
    return NAME##_scale(i >> 5) * float(q);                                                \
  }                                                                                        \
  vec4 load4_##NAME(uint i) {                                                              \
    return NAME##_scale(i >> 5) * int8x4_to_vec4(NAME##_quad((i >> 5) * 34u + 2u + (i & 31u))); \
  }                                                                                        \
  float NAME##_block(uint block, out uvec4 lo, out uvec4 hi) {                             \
    const uint b = block * 34u, w = b >> 2;                                                \
    const uint r0 = NAME##_data[w], r1 = NAME##_data[w + 1u], r2 = NAME##_data[w + 2u];    \
    const uint r3 = NAME##_data[w + 3u], r4 = NAME##_data[w + 4u], r5 = NAME##_data[w + 5u]; \
    const uint r6 = NAME##_data[w + 6u], r7 = NAME##_data[w + 7u], r8 = NAME##_data[w + 8u]; \
    const bool even = (b & 3u) == 0u;                                                      \
    lo = even ? uvec4((r0 >> 16) | (r1 << 16), (r1 >> 16) | (r2 << 16), (r2 >> 16) | (r3 << 16), \
                      (r3 >> 16) | (r4 << 16))                                             \
              : uvec4(r1, r2, r3, r4);                                                     \
    hi = even ? uvec4((r4 >> 16) | (r5 << 16), (r5 >> 16) | (r6 << 16), (r6 >> 16) | (r7 << 16), \
                      (r7 >> 16) | (r8 << 16))                                             \
              : uvec4(r5, r6, r7, r8);                                                     \
    return unpackHalf2x16(even ? r0 & 0xffffu : r0 >> 16).x;                               \
  }

#endif
