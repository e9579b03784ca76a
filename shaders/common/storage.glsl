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
// The low nibbles of a word's four bytes, low byte first, less 8 (Q4_0's offset).
vec4 nibbles4_minus8(uint w) { return vec4(w & 15u, (w >> 8) & 15u, (w >> 16) & 15u, (w >> 24) & 15u) - 8.0; }

// ggml's block formats start every block with an f16 scale d and then its quants:
//   Q8_0: 32 values in 34 bytes, 32 int8 q; value = d * q.
//   Q4_0: 32 values in 18 bytes, 16 bytes of nibbles: value j < 16 is the low nibble of byte j,
//         value j + 16 its high nibble; value = d * (nibble - 8).
// Blocks are not word-aligned, so bytes come out of the 32-bit words that hold them (no 8-bit
// storage feature needed). Both block sizes are even: a block starts at byte 0 or 2 of a word,
// its scale lies within one word, and four quant bytes from an even offset span one or two words.
// Each format declares load_NAME(i) (one value), load4_NAME(i) (values i..i+3, i a multiple of 4),
// load8_NAME(i, lo, hi) (values i..i+7, i a multiple of 8: one scale, two or three words) and, for
// kernels that walk K block by block, NAME_block(b, lo, hi) (the block's scale, its
// quant bytes as up to 8 words read in the words that hold the block) with NAME_step(t, lo, hi)
// (values 4t..4t+3 of the block before scaling).
#define DECLARE_BLOCK_BYTES(BINDING, NAME, BLOCK_BYTES)                                    \
  layout(std430, binding = BINDING) readonly buffer NAME##Buffer { uint NAME##_data[]; }; \
  float NAME##_scale(uint block) {                                                         \
    const uint b = block * BLOCK_BYTES;                                                    \
    return unpackHalf2x16((NAME##_data[b >> 2] >> ((b & 3u) * 8u)) & 0xffffu).x;           \
  }                                                                                        \
  uint NAME##_byte(uint b) { return (NAME##_data[b >> 2] >> ((b & 3u) * 8u)) & 0xffu; }   \
  uint NAME##_quad(uint b) {                                                               \
    const uint shift = (b & 3u) * 8u, w = NAME##_data[b >> 2];                             \
    return shift == 0u ? w : (w >> shift) | (NAME##_data[(b >> 2) + 1u] << (32u - shift)); \
  }                                                                                        \
  void NAME##_octet(uint b, out uint q0, out uint q1) {                                    \
    const uint w = b >> 2, w0 = NAME##_data[w], w1 = NAME##_data[w + 1u];                  \
    if ((b & 3u) == 0u) { q0 = w0; q1 = w1; return; }                                      \
    const uint w2 = NAME##_data[w + 2u];                                                   \
    q0 = (w0 >> 16) | (w1 << 16);                                                          \
    q1 = (w1 >> 16) | (w2 << 16);                                                          \
  }                                                                                        \
  uint NAME##_even_word(bool even, uint r_lo, uint r_hi) {                                 \
    return even ? (r_lo >> 16) | (r_hi << 16) : r_hi;                                     \
  }

#define DECLARE_Q8_0_INPUT(BINDING, NAME)                                                  \
  DECLARE_BLOCK_BYTES(BINDING, NAME, 34u)                                                  \
  float load_##NAME(uint i) {                                                              \
    const int q = int(NAME##_byte((i >> 5) * 34u + 2u + (i & 31u)) << 24) >> 24;           \
    return NAME##_scale(i >> 5) * float(q);                                                \
  }                                                                                        \
  vec4 load4_##NAME(uint i) {                                                              \
    return NAME##_scale(i >> 5) * int8x4_to_vec4(NAME##_quad((i >> 5) * 34u + 2u + (i & 31u))); \
  }                                                                                        \
  void load8_##NAME(uint i, out vec4 lo, out vec4 hi) {                                    \
    uint q0, q1;                                                                           \
    NAME##_octet((i >> 5) * 34u + 2u + (i & 31u), q0, q1);                                 \
    const float d = NAME##_scale(i >> 5);                                                  \
    lo = d * int8x4_to_vec4(q0);                                                           \
    hi = d * int8x4_to_vec4(q1);                                                           \
  }                                                                                        \
  float NAME##_block(uint block, out uvec4 lo, out uvec4 hi) {                             \
    const uint b = block * 34u, w = b >> 2;                                                \
    const uint r0 = NAME##_data[w], r1 = NAME##_data[w + 1u], r2 = NAME##_data[w + 2u];    \
    const uint r3 = NAME##_data[w + 3u], r4 = NAME##_data[w + 4u], r5 = NAME##_data[w + 5u]; \
    const uint r6 = NAME##_data[w + 6u], r7 = NAME##_data[w + 7u], r8 = NAME##_data[w + 8u]; \
    const bool even = (b & 3u) == 0u;                                                      \
    lo = uvec4(NAME##_even_word(even, r0, r1), NAME##_even_word(even, r1, r2),     \
               NAME##_even_word(even, r2, r3), NAME##_even_word(even, r3, r4));    \
    hi = uvec4(NAME##_even_word(even, r4, r5), NAME##_even_word(even, r5, r6),     \
               NAME##_even_word(even, r6, r7), NAME##_even_word(even, r7, r8));    \
    return unpackHalf2x16(even ? r0 & 0xffffu : r0 >> 16).x;                               \
  }                                                                                        \
  vec4 NAME##_step(uint t, uvec4 lo, uvec4 hi) { return int8x4_to_vec4(t < 4u ? lo[t & 3u] : hi[t & 3u]); }

#define DECLARE_Q4_0_INPUT(BINDING, NAME)                                                  \
  DECLARE_BLOCK_BYTES(BINDING, NAME, 18u)                                                  \
  float load_##NAME(uint i) {                                                              \
    const uint j = i & 31u, v = NAME##_byte((i >> 5) * 18u + 2u + (j & 15u));             \
    return NAME##_scale(i >> 5) * (float(j < 16u ? v & 15u : v >> 4) - 8.0);               \
  }                                                                                        \
  vec4 load4_##NAME(uint i) {                                                              \
    const uint j = i & 31u, w = NAME##_quad((i >> 5) * 18u + 2u + (j & 15u));             \
    return NAME##_scale(i >> 5) * nibbles4_minus8(j < 16u ? w : w >> 4);                   \
  }                                                                                        \
  void load8_##NAME(uint i, out vec4 lo, out vec4 hi) {                                    \
    const uint j = i & 31u;                                                                \
    uint q0, q1;                                                                           \
    NAME##_octet((i >> 5) * 18u + 2u + (j & 15u), q0, q1);                                 \
    const float d = NAME##_scale(i >> 5);                                                  \
    lo = d * nibbles4_minus8(j < 16u ? q0 : q0 >> 4);                                      \
    hi = d * nibbles4_minus8(j < 16u ? q1 : q1 >> 4);                                      \
  }                                                                                        \
  float NAME##_block(uint block, out uvec4 lo, out uvec4 hi) {                             \
    const uint b = block * 18u, w = b >> 2;                                                \
    const uint r0 = NAME##_data[w], r1 = NAME##_data[w + 1u], r2 = NAME##_data[w + 2u];    \
    const uint r3 = NAME##_data[w + 3u], r4 = NAME##_data[w + 4u];                         \
    const bool even = (b & 3u) == 0u;                                                      \
    lo = uvec4(NAME##_even_word(even, r0, r1), NAME##_even_word(even, r1, r2),     \
               NAME##_even_word(even, r2, r3), NAME##_even_word(even, r3, r4));    \
    hi = uvec4(0u);                                                                        \
    return unpackHalf2x16(even ? r0 & 0xffffu : r0 >> 16).x;                               \
  }                                                                                        \
  vec4 NAME##_step(uint t, uvec4 lo, uvec4 hi) {                                           \
    const uint w = lo[t & 3u];                                                             \
    return nibbles4_minus8(t < 4u ? w : w >> 4);                                           \
  }

#endif
