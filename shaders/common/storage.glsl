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

// ACCESS is `readonly` for an input, empty for a buffer the kernel also writes (NAME_data[] is
// then written as floats or as words of two halves).
#define DECLARE_F32_STORAGE(BINDING, NAME, ACCESS)                                         \
  layout(std430, binding = BINDING) ACCESS buffer NAME##Buffer { float NAME##_data[]; };   \
  float load_##NAME(uint i) { return NAME##_data[i]; }

#define DECLARE_F16_STORAGE(BINDING, NAME, ACCESS)                                         \
  layout(std430, binding = BINDING) ACCESS buffer NAME##Buffer { uint NAME##_data[]; };    \
  float load_##NAME(uint i) {                                                              \
    const vec2 pair = unpackHalf2x16(NAME##_data[i >> 1]);                                 \
    return (i & 1u) != 0u ? pair.y : pair.x;                                               \
  }

#define DECLARE_F32_INPUT(BINDING, NAME) DECLARE_F32_STORAGE(BINDING, NAME, readonly)
#define DECLARE_F16_INPUT(BINDING, NAME) DECLARE_F16_STORAGE(BINDING, NAME, readonly)
#define DECLARE_F32_BUFFER(BINDING, NAME) DECLARE_F32_STORAGE(BINDING, NAME, )
#define DECLARE_F16_BUFFER(BINDING, NAME) DECLARE_F16_STORAGE(BINDING, NAME, )

// Four signed bytes of a word, low byte first.
vec4 int8x4_to_vec4(uint w) { return vec4(ivec4(int(w << 24), int(w << 16), int(w << 8), int(w)) >> 24); }
// The low nibbles of a word's four bytes, low byte first, less 8 (Q4_0's offset).
vec4 nibbles4_minus8(uint w) { return vec4(w & 15u, (w >> 8) & 15u, (w >> 16) & 15u, (w >> 24) & 15u) - 8.0; }
// A word's four bytes, low byte first.
vec4 bytes4(uint w) { return vec4(w & 255u, (w >> 8) & 255u, (w >> 16) & 255u, w >> 24); }
// Four bits (bit e for byte e) moved to bit 0 of each byte.
uint spread4_to_bytes(uint f) { return (f & 1u) | (f & 2u) << 7 | (f & 4u) << 14 | (f & 8u) << 21; }

// bfloat16 is the high half of an f32, so a pair widens with two shifts (low half first).
vec2 unpack_bf16x2(uint w) { return vec2(uintBitsToFloat(w << 16), uintBitsToFloat(w & 0xffff0000u)); }

// bfloat16 values, two per word: load_NAME(i), load4_NAME(i) and load8_NAME(i, lo, hi) as the
// block formats below give them (i a multiple of 4 or 8 for the last two).
#define DECLARE_BF16_INPUT(BINDING, NAME)                                                  \
  layout(std430, binding = BINDING) readonly buffer NAME##Buffer { uint NAME##_data[]; };  \
  float load_##NAME(uint i) {                                                              \
    const uint w = NAME##_data[i >> 1];                                                    \
    return uintBitsToFloat((i & 1u) != 0u ? w & 0xffff0000u : w << 16);                    \
  }                                                                                        \
  vec4 load4_##NAME(uint i) {                                                              \
    return vec4(unpack_bf16x2(NAME##_data[i >> 1]), unpack_bf16x2(NAME##_data[(i >> 1) + 1u])); \
  }                                                                                        \
  void load8_##NAME(uint i, out vec4 lo, out vec4 hi) {                                    \
    lo = load4_##NAME(i);                                                                  \
    hi = load4_##NAME(i + 4u);                                                             \
  }

// ggml's block formats start every block with an f16 scale d and then its quants:
//   Q8_0: 32 values in 34 bytes, 32 int8 q; value = d * q.
//   Q4_0: 32 values in 18 bytes, 16 bytes of nibbles: value j < 16 is the low nibble of byte j,
//         value j + 16 its high nibble; value = d * (nibble - 8).
// Blocks are not word-aligned, so bytes come out of the 32-bit words that hold them (no 8-bit
// storage feature needed). Both block sizes are even: a block starts at byte 0 or 2 of a word,
// its scale lies within one word, and four quant bytes from an even offset span one or two words.
// Each format declares load_NAME(i) (one value), load4_NAME(i) (values i..i+3, i a multiple of 4),
// load8_NAME(i, lo, hi) (values i..i+7, i a multiple of 8: one scale, two or three words) and, for
// kernels that walk K 32 values at a time, NAME_chunk(c, scale, offset, lo, hi) (chunk c's
// quants as up to 8 words, read once) with NAME_step(t, lo, hi) (values 4t..4t+3 of the chunk
// before scaling): value 4t + e = scale[t / 4] * NAME_step(t, lo, hi)[e] - offset.
#define DECLARE_BLOCK_BYTES(BINDING, NAME, BLOCK_BYTES)                                    \
  layout(std430, binding = BINDING) readonly buffer NAME##Buffer { uint NAME##_data[]; };  \
  /* The f16 at byte b (even); NAME_scale: a block's first, its scale d. */               \
  float NAME##_f16(uint b) { return unpackHalf2x16((NAME##_data[b >> 2] >> ((b & 3u) * 8u)) & 0xffffu).x; } \
  float NAME##_scale(uint block) { return NAME##_f16(block * BLOCK_BYTES); }               \
  uint NAME##_byte(uint b) { return (NAME##_data[b >> 2] >> ((b & 3u) * 8u)) & 0xffu; }    \
  uint NAME##_quad(uint b) {                                                               \
    const uint shift = (b & 3u) * 8u, w = NAME##_data[b >> 2];                             \
    return shift == 0u ? w : (w >> shift) | (NAME##_data[(b >> 2) + 1u] << (32u - shift)); \
  }                                                                                        \
  /* 32 bytes from an even byte b as eight words: lo the first 16, hi the next. */        \
  void NAME##_words8(uint b, out uvec4 lo, out uvec4 hi) {                                 \
    const uint w = b >> 2;                                                                 \
    const bool even = (b & 3u) == 0u;                                                      \
    uint r[9];                                                                             \
    [[unroll]] for (uint t = 0u; t < 9u; ++t) r[t] = NAME##_data[w + t];                   \
    [[unroll]] for (uint t = 0u; t < 4u; ++t) {                                            \
      lo[t] = even ? r[t] : (r[t] >> 16) | (r[t + 1u] << 16);                              \
      hi[t] = even ? r[t + 4u] : (r[t + 4u] >> 16) | (r[t + 5u] << 16);                    \
    }                                                                                      \
  }                                                                                        \
  void NAME##_octet(uint b, out uint q0, out uint q1) {                                    \
    const uint w = b >> 2, w0 = NAME##_data[w], w1 = NAME##_data[w + 1u];                  \
    if ((b & 3u) == 0u) { q0 = w0; q1 = w1; return; }                                      \
    const uint w2 = NAME##_data[w + 2u];                                                   \
    q0 = (w0 >> 16) | (w1 << 16);                                                          \
    q1 = (w1 >> 16) | (w2 << 16);                                                          \
  }                                                                                        \
  uint NAME##_even_word(bool even, uint r_lo, uint r_hi) {                                 \
    return even ? (r_lo >> 16) | (r_hi << 16) : r_hi;                                      \
  }                                                                                        \
  /* The chunk of an 18-byte block (Q4_0, IQ4_NL: f16 d, 16 bytes of nibbles) from five     \
     aligned words: its scale, and its nibble bytes in lo. */                              \
  void NAME##_chunk18(uint block, out vec2 scale, out float offset, out uvec4 lo, out uvec4 hi) { \
    const uint b = block * 18u, w = b >> 2;                                                \
    const uint r0 = NAME##_data[w], r1 = NAME##_data[w + 1u], r2 = NAME##_data[w + 2u];    \
    const uint r3 = NAME##_data[w + 3u], r4 = NAME##_data[w + 4u];                         \
    const bool even = (b & 3u) == 0u;                                                      \
    lo = uvec4(NAME##_even_word(even, r0, r1), NAME##_even_word(even, r1, r2),             \
               NAME##_even_word(even, r2, r3), NAME##_even_word(even, r3, r4));            \
    hi = uvec4(0u);                                                                        \
    scale = vec2(unpackHalf2x16(even ? r0 & 0xffffu : r0 >> 16).x);                        \
    offset = 0.0;                                                                          \
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
  void NAME##_chunk(uint block, out vec2 scale, out float offset, out uvec4 lo, out uvec4 hi) { \
    const uint b = block * 34u, w = b >> 2;                                                \
    const uint r0 = NAME##_data[w], r1 = NAME##_data[w + 1u], r2 = NAME##_data[w + 2u];    \
    const uint r3 = NAME##_data[w + 3u], r4 = NAME##_data[w + 4u], r5 = NAME##_data[w + 5u]; \
    const uint r6 = NAME##_data[w + 6u], r7 = NAME##_data[w + 7u], r8 = NAME##_data[w + 8u]; \
    const bool even = (b & 3u) == 0u;                                                      \
    lo = uvec4(NAME##_even_word(even, r0, r1), NAME##_even_word(even, r1, r2),             \
               NAME##_even_word(even, r2, r3), NAME##_even_word(even, r3, r4));            \
    hi = uvec4(NAME##_even_word(even, r4, r5), NAME##_even_word(even, r5, r6),             \
               NAME##_even_word(even, r6, r7), NAME##_even_word(even, r7, r8));            \
    scale = vec2(unpackHalf2x16(even ? r0 & 0xffffu : r0 >> 16).x);                        \
    offset = 0.0;                                                                          \
  }                                                                                        \
  vec4 NAME##_step(uint t, uvec4 lo, uvec4 hi) { return int8x4_to_vec4(t < 4u ? lo[t & 3u] : hi[t & 3u]); }

#define DECLARE_Q4_0_INPUT(BINDING, NAME)                                                  \
  DECLARE_BLOCK_BYTES(BINDING, NAME, 18u)                                                  \
  float load_##NAME(uint i) {                                                              \
    const uint j = i & 31u, v = NAME##_byte((i >> 5) * 18u + 2u + (j & 15u));              \
    return NAME##_scale(i >> 5) * (float(j < 16u ? v & 15u : v >> 4) - 8.0);               \
  }                                                                                        \
  vec4 load4_##NAME(uint i) {                                                              \
    const uint j = i & 31u, w = NAME##_quad((i >> 5) * 18u + 2u + (j & 15u));              \
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
  void NAME##_chunk(uint block, out vec2 scale, out float offset, out uvec4 lo, out uvec4 hi) { \
    NAME##_chunk18(block, scale, offset, lo, hi);                                          \
  }                                                                                        \
  vec4 NAME##_step(uint t, uvec4 lo, uvec4 hi) {                                           \
    const uint w = lo[t & 3u];                                                             \
    return nibbles4_minus8(t < 4u ? w : w >> 4);                                           \
  }

// Step t (0..7) of a 32-value chunk packed as Q4_0 packs a block (word t & 3 of lo: the low
// nibbles for t < 4, the high ones after) with, when FIVE, the 32 fifth bits in hi.x (bit 4t + e
// for value 4t + e): the quants of values 4t..4t+3 as four bytes.
uint nibble_step(uint t, uvec4 lo, uvec4 hi, bool five) {
  uint q = (lo[t & 3u] >> (4u * (t >> 2))) & 0x0f0f0f0fu;
  if (five) q |= spread4_to_bytes((hi.x >> (4u * t)) & 15u) << 4;
  return q;
}

// ggml's Q4_1, Q5_0 and Q5_1: blocks of 32 values as Q4_0's, with after d an f16 min m (HAS_MIN:
// Q4_1, Q5_1) and, when FIVE (Q5_0, Q5_1), 4 bytes qh whose bit j is the fifth bit (16) of value
// j; then the 16 bytes of nibbles. A value is d * q + m, Q5_0's d * (q - 16): scale d and offset
// -m or 16 d. Q4_1's 20-byte and Q5_1's 24-byte blocks start on a word, Q5_0's 22 at byte 0 or 2.
#define DECLARE_NIBBLE_BLOCK_INPUT(BINDING, NAME, BYTES, HAS_MIN, FIVE)                    \
  DECLARE_BLOCK_BYTES(BINDING, NAME, BYTES)                                                \
  const uint NAME##_QH = HAS_MIN ? 4u : 2u;                           /* qh's byte (FIVE) */ \
  const uint NAME##_QS = 2u + (HAS_MIN ? 2u : 0u) + (FIVE ? 4u : 0u); /* the nibbles' byte */ \
  /* The offset from the block's first word (d, and m with a min). */                      \
  float NAME##_offset(vec2 dm) { return HAS_MIN ? -dm.y : FIVE ? 16.0 * dm.x : 8.0 * dm.x; } \
  void NAME##_dm(uint block, out float d, out float offset) {                              \
    const vec2 dm = unpackHalf2x16(NAME##_quad(block * BYTES));                            \
    d = dm.x;                                                                              \
    offset = NAME##_offset(dm);                                                            \
  }                                                                                        \
  uint NAME##_fifth(uint block) { return FIVE ? NAME##_quad(block * BYTES + NAME##_QH) : 0u; } \
  /* The quants of values j..j+3 of a block (j a multiple of 4) as four bytes. */          \
  uint NAME##_q4(uint block, uint j) {                                                     \
    const uint w = NAME##_quad(block * BYTES + NAME##_QS + (j & 15u));                     \
    const uint q = (j < 16u ? w : w >> 4) & 0x0f0f0f0fu;                                   \
    return FIVE ? q | spread4_to_bytes((NAME##_fifth(block) >> j) & 15u) << 4 : q;         \
  }                                                                                        \
  float load_##NAME(uint i) {                                                              \
    float d, offset;                                                                       \
    NAME##_dm(i >> 5, d, offset);                                                          \
    return d * float((NAME##_q4(i >> 5, i & 28u) >> ((i & 3u) * 8u)) & 255u) - offset;     \
  }                                                                                        \
  vec4 load4_##NAME(uint i) {                                                              \
    float d, offset;                                                                       \
    NAME##_dm(i >> 5, d, offset);                                                          \
    return d * bytes4(NAME##_q4(i >> 5, i & 31u)) - offset;                                \
  }                                                                                        \
  void load8_##NAME(uint i, out vec4 lo, out vec4 hi) {                                    \
    float d, offset;                                                                       \
    NAME##_dm(i >> 5, d, offset);                                                          \
    lo = d * bytes4(NAME##_q4(i >> 5, i & 31u)) - offset;                                  \
    hi = d * bytes4(NAME##_q4(i >> 5, (i & 31u) + 4u)) - offset;                           \
  }                                                                                        \
  /* A chunk from the block's aligned words, read once (Q5_0's blocks start at byte 0 or 2 of a \
     word; per-field unaligned reads made it the slowest type per byte): s[k] holds the block's \
     bytes 4k..4k+3, and a field at even byte o is one word of s or two halves. */         \
  const uint NAME##_BLOCK_WORDS = (BYTES + (BYTES % 4u == 0u ? 0u : 2u) + 3u) / 4u;        \
  uint NAME##_field(uint s[NAME##_BLOCK_WORDS + 1u], uint o) {                             \
    return (o & 3u) == 0u ? s[o >> 2] : (s[o >> 2] >> 16) | (s[(o >> 2) + 1u] << 16);      \
  }                                                                                        \
  void NAME##_chunk(uint block, out vec2 scale, out float offset, out uvec4 lo, out uvec4 hi) { \
    const uint b = block * BYTES, w = b >> 2;                                              \
    const bool odd = (b & 3u) != 0u;                                                       \
    uint r[NAME##_BLOCK_WORDS + 1u], s[NAME##_BLOCK_WORDS + 1u];                           \
    [[unroll]] for (uint t = 0u; t < NAME##_BLOCK_WORDS; ++t) r[t] = NAME##_data[w + t];   \
    r[NAME##_BLOCK_WORDS] = 0u;                                                            \
    [[unroll]] for (uint t = 0u; t < NAME##_BLOCK_WORDS; ++t) s[t] = odd ? (r[t] >> 16) | (r[t + 1u] << 16) : r[t]; \
    s[NAME##_BLOCK_WORDS] = 0u;                                                            \
    const vec2 dm = unpackHalf2x16(s[0]);                                                  \
    scale = vec2(dm.x);                                                                    \
    offset = NAME##_offset(dm);                                                            \
    lo = uvec4(NAME##_field(s, NAME##_QS), NAME##_field(s, NAME##_QS + 4u), NAME##_field(s, NAME##_QS + 8u), \
               NAME##_field(s, NAME##_QS + 12u));                                          \
    hi = uvec4(FIVE ? NAME##_field(s, NAME##_QH) : 0u, 0u, 0u, 0u);                        \
  }                                                                                        \
  vec4 NAME##_step(uint t, uvec4 lo, uvec4 hi) { return bytes4(nibble_step(t, lo, hi, FIVE)); }

#define DECLARE_Q4_1_INPUT(BINDING, NAME) DECLARE_NIBBLE_BLOCK_INPUT(BINDING, NAME, 20u, true, false)
#define DECLARE_Q5_0_INPUT(BINDING, NAME) DECLARE_NIBBLE_BLOCK_INPUT(BINDING, NAME, 22u, false, true)
#define DECLARE_Q5_1_INPUT(BINDING, NAME) DECLARE_NIBBLE_BLOCK_INPUT(BINDING, NAME, 24u, true, true)

// ggml's IQ4_NL and IQ4_XS: 4-bit indices into 16 fixed levels (util/iq4_blocks.hpp), laid out as
// Q4_0's nibbles. The levels are int8s packed four to a word and picked by selects and shifts, not
// from an array: an indexed constant array is a memory gather per value on CPU drivers (3x slower
// on lavapipe) and may go to local memory on GPUs.
float iq4_level(uint q) {
  const uint w = (q & 8u) != 0u ? ((q & 4u) != 0u ? 0x71594535u : 0x26190d01u)
                                : ((q & 4u) != 0u ? 0xf6eaddcfu : 0xbfad9881u);
  return float(int(w << (24u - 8u * (q & 3u))) >> 24);
}
// The levels of a word's four low nibbles (the word's bytes).
vec4 iq4_levels4(uint q) { return vec4(iq4_level(q), iq4_level(q >> 8), iq4_level(q >> 16), iq4_level(q >> 24)); }

// IQ4_NL: Q4_0's 18-byte blocks, value = d * level.
#define DECLARE_IQ4_NL_INPUT(BINDING, NAME)                                                \
  DECLARE_BLOCK_BYTES(BINDING, NAME, 18u)                                                  \
  /* The indices of values j..j+3 of a block (j a multiple of 4) as four bytes. */         \
  uint NAME##_q4(uint block, uint j) {                                                     \
    const uint w = NAME##_quad(block * 18u + 2u + (j & 15u));                              \
    return (j < 16u ? w : w >> 4) & 0x0f0f0f0fu;                                           \
  }                                                                                        \
  float load_##NAME(uint i) {                                                              \
    return NAME##_scale(i >> 5) * iq4_level(NAME##_q4(i >> 5, i & 28u) >> ((i & 3u) * 8u)); \
  }                                                                                        \
  vec4 load4_##NAME(uint i) { return NAME##_scale(i >> 5) * iq4_levels4(NAME##_q4(i >> 5, i & 31u)); } \
  void load8_##NAME(uint i, out vec4 lo, out vec4 hi) {                                    \
    const float d = NAME##_scale(i >> 5);                                                  \
    lo = d * iq4_levels4(NAME##_q4(i >> 5, i & 31u));                                      \
    hi = d * iq4_levels4(NAME##_q4(i >> 5, (i & 31u) + 4u));                               \
  }                                                                                        \
  void NAME##_chunk(uint block, out vec2 scale, out float offset, out uvec4 lo, out uvec4 hi) { \
    NAME##_chunk18(block, scale, offset, lo, hi);                                          \
  }                                                                                        \
  vec4 NAME##_step(uint t, uvec4 lo, uvec4 hi) { return iq4_levels4(nibble_step(t, lo, hi, false)); }

// IQ4_XS: 136-byte (34-word) super-blocks of 256: word 0 holds f16 d and, above it, the top bit
// pairs of the eight 6-bit sub-block scales; word 1 their low nibbles (sub-block s at bit 4s);
// words 2..33 the indices, sub-block s's at words 2 + 4s .. 5 + 4s as an IQ4_NL block's.
// value = d * (scale_s - 32) * level.
#define DECLARE_IQ4_XS_INPUT(BINDING, NAME)                                                \
  layout(std430, binding = BINDING) readonly buffer NAME##Buffer { uint NAME##_data[]; };  \
  float NAME##_sub_scale(uint block, uint s) {                                             \
    const uint w0 = NAME##_data[block * 34u], w1 = NAME##_data[block * 34u + 1u];          \
    const uint ls = ((w1 >> (4u * s)) & 15u) | ((w0 >> (16u + 2u * s)) & 3u) << 4;         \
    return unpackHalf2x16(w0).x * float(int(ls) - 32);                                     \
  }                                                                                        \
  uint NAME##_q4(uint i) { /* the indices of values i..i+3, i a multiple of 4 */           \
    const uint l = i & 31u;                                                                \
    const uint w = NAME##_data[(i >> 8) * 34u + 2u + 4u * ((i >> 5) & 7u) + ((l & 15u) >> 2)]; \
    return (l < 16u ? w : w >> 4) & 0x0f0f0f0fu;                                           \
  }                                                                                        \
  float load_##NAME(uint i) {                                                              \
    return NAME##_sub_scale(i >> 8, (i >> 5) & 7u) * iq4_level(NAME##_q4(i & ~3u) >> ((i & 3u) * 8u)); \
  }                                                                                        \
  vec4 load4_##NAME(uint i) { return NAME##_sub_scale(i >> 8, (i >> 5) & 7u) * iq4_levels4(NAME##_q4(i)); } \
  void load8_##NAME(uint i, out vec4 lo, out vec4 hi) {                                    \
    const float d = NAME##_sub_scale(i >> 8, (i >> 5) & 7u);                               \
    lo = d * iq4_levels4(NAME##_q4(i));                                                    \
    hi = d * iq4_levels4(NAME##_q4(i + 4u));                                               \
  }                                                                                        \
  void NAME##_chunk(uint c, out vec2 scale, out float offset, out uvec4 lo, out uvec4 hi) { \
    scale = vec2(NAME##_sub_scale(c >> 3, c & 7u));                                        \
    offset = 0.0;                                                                          \
    const uint w = (c >> 3) * 34u + 2u + 4u * (c & 7u);                                    \
    lo = uvec4(NAME##_data[w], NAME##_data[w + 1u], NAME##_data[w + 2u], NAME##_data[w + 3u]); \
    hi = uvec4(0u);                                                                        \
  }                                                                                        \
  vec4 NAME##_step(uint t, uvec4 lo, uvec4 hi) { return iq4_levels4(nibble_step(t, lo, hi, false)); }

// ggml's K formats hold super-blocks of 256 values; each format below declares
//   NAME_qword(i)              the raw quants of values i..i+3 (i a multiple of 4) as four bytes,
//   NAME_sub(i, scale, offset) the scale and offset of value i's sub-block,
//   NAME_chunk, NAME_step      as for Q8_0, chunk c being values 32c..32c+31,
// and DECLARE_K_LOADS builds the other loads from them: value = scale * (q - BIAS) - offset.

// Q4_K and Q5_K: eight sub-blocks of 32 with 6-bit scales and mins packed in 12 bytes (words
// 1..3 of the block): sub-blocks 0-3 in the low 6 bits of bytes 0-3 (scale) and 4-7 (min), 4-7 in
// the nibbles of bytes 8-11 (scale low, min high) with their top two bits in the top bits of
// bytes 0-3 (scale) and 4-7 (min).
void k_scale_min(uvec3 packed, uint s, out uint scale, out uint min_) {
  const uint shift = (s & 3u) * 8u;
  const uint b0 = packed[0] >> shift, b4 = packed[1] >> shift;
  if (s < 4u) {
    scale = b0 & 63u;
    min_ = b4 & 63u;
  } else {
    const uint b8 = packed[2] >> shift;
    scale = (b8 & 15u) | ((b0 >> 6) & 3u) << 4;
    min_ = ((b8 >> 4) & 15u) | ((b4 >> 6) & 3u) << 4;
  }
}

#define DECLARE_K_LOADS(NAME, BIAS)                                                        \
  float load_##NAME(uint i) {                                                              \
    float scale, offset;                                                                   \
    NAME##_sub(i, scale, offset);                                                          \
    return scale * (float((NAME##_qword(i & ~3u) >> ((i & 3u) * 8u)) & 255u) - BIAS) - offset; \
  }                                                                                        \
  vec4 load4_##NAME(uint i) {                                                              \
    float scale, offset;                                                                   \
    NAME##_sub(i, scale, offset);                                                          \
    return scale * (bytes4(NAME##_qword(i)) - BIAS) - offset;                              \
  }                                                                                        \
  void load8_##NAME(uint i, out vec4 lo, out vec4 hi) {                                    \
    float scale, offset;                                                                   \
    NAME##_sub(i, scale, offset);                                                          \
    lo = scale * (bytes4(NAME##_qword(i)) - BIAS) - offset;                                \
    hi = scale * (bytes4(NAME##_qword(i + 4u)) - BIAS) - offset;                           \
  }

// Q4_K: f16 d and dmin (word 0), scales (words 1-3), 128 bytes of nibbles (words 4-35): values
// 32s + l of sub-blocks s = 2j, 2j + 1 are the low and high nibbles of byte 32j + l. Q5_K (44
// words) puts 32 bytes qh (words 4-11) before the nibbles (words 12-43): bit s of qh byte l is
// the fifth bit (16) of value 32s + l. Both block sizes are whole words.
#define DECLARE_Q45_K_INPUT(BINDING, NAME, WORDS, FIVE)                                    \
  layout(std430, binding = BINDING) readonly buffer NAME##Buffer { uint NAME##_data[]; };  \
  /* The same buffer as 16-byte groups: both block sizes are whole groups (9 and 11), so a block's \
     header (d, dmin, scales) and each run of 8 quant words are two or one aligned loads. */ \
  layout(std430, binding = BINDING) readonly buffer NAME##Buffer4 { uvec4 NAME##_data4[]; }; \
  void NAME##_scale_min(uvec4 header, uint s, out float scale, out float offset) {         \
    const vec2 dm = unpackHalf2x16(header.x);                                              \
    uint sc, mn;                                                                           \
    k_scale_min(header.yzw, s, sc, mn);                                                    \
    scale = dm.x * float(sc);                                                              \
    offset = dm.y * float(mn);                                                             \
  }                                                                                        \
  void NAME##_sub(uint i, out float scale, out float offset) {                             \
    NAME##_scale_min(NAME##_data4[(i >> 8) * (WORDS / 4u)], (i >> 5) & 7u, scale, offset); \
  }                                                                                        \
  uint NAME##_join(uint s, uint ql, uint qh) {                                             \
    const uint low = (ql >> ((s & 1u) * 4u)) & 0x0f0f0f0fu;                                \
    return FIVE ? low | ((qh >> s) & 0x01010101u) << 4 : low;                              \
  }                                                                                        \
  uint NAME##_qword(uint i) {                                                              \
    const uint w = (i >> 8) * WORDS, s = (i >> 5) & 7u, l4 = (i & 31u) >> 2;               \
    const uint ql = NAME##_data[w + (FIVE ? 12u : 4u) + 8u * (s >> 1) + l4];               \
    return NAME##_join(s, ql, FIVE ? NAME##_data[w + 4u + l4] : 0u);                       \
  }                                                                                        \
  /* A chunk packed as Q4_0 packs a block, so it stays in few registers: word t of lo holds the \
     quants of step t in its low nibbles and of step t + 4 in its high ones; hi.x holds Q5_K's 32 \
     fifth bits, bit 4t + e for value 4t + e. */                                           \
  /* Chunk pair cp (chunks 2cp, 2cp + 1: the low and high nibbles of the same 32 bytes) read     \
     once: the super-block's header, the pair's quant words, Q5_K's fifth bits. */          \
  void NAME##_pair(uint cp, out uvec4 header, out uvec4 ql_lo, out uvec4 ql_hi, out uvec4 h_lo, out uvec4 h_hi) { \
    const uint g = (cp >> 2) * (WORDS / 4u), q = g + (FIVE ? 3u : 1u) + 2u * (cp & 3u);    \
    header = NAME##_data4[g];                                                              \
    ql_lo = NAME##_data4[q];                                                               \
    ql_hi = NAME##_data4[q + 1u];                                                          \
    h_lo = FIVE ? NAME##_data4[g + 1u] : uvec4(0u);                                        \
    h_hi = FIVE ? NAME##_data4[g + 2u] : uvec4(0u);                                        \
  }                                                                                        \
  /* Sub-block s's chunk from what NAME_pair read. */                                      \
  void NAME##_chunk_of_pair(uint s, uvec4 header, uvec4 ql_lo, uvec4 ql_hi, uvec4 h_lo, uvec4 h_hi, \
                            out vec2 scale, out float offset, out uvec4 lo, out uvec4 hi) { \
    float sc;                                                                              \
    NAME##_scale_min(header, s, sc, offset);                                               \
    scale = vec2(sc);                                                                      \
    const uint shift = (s & 1u) * 4u;                                                      \
    lo = ((ql_lo >> shift) & 0x0f0f0f0fu) | ((ql_hi >> shift) & 0x0f0f0f0fu) << 4;         \
    hi = uvec4(0u);                                                                        \
    if (FIVE) {                                                                            \
      const uvec4 bits_lo = (h_lo >> s) & 0x01010101u, bits_hi = (h_hi >> s) & 0x01010101u; \
      [[unroll]] for (uint t = 0u; t < 4u; ++t) {                                          \
        hi.x |= ((bits_lo[t] * 0x10204080u) >> 28) << (4u * t);                            \
        hi.x |= ((bits_hi[t] * 0x10204080u) >> 28) << (4u * t + 16u);                      \
      }                                                                                    \
    }                                                                                      \
  }                                                                                        \
  void NAME##_chunk(uint c, out vec2 scale, out float offset, out uvec4 lo, out uvec4 hi) { \
    uvec4 header, ql_lo, ql_hi, h_lo, h_hi;                                                \
    NAME##_pair(c >> 1, header, ql_lo, ql_hi, h_lo, h_hi);                                 \
    NAME##_chunk_of_pair(c & 7u, header, ql_lo, ql_hi, h_lo, h_hi, scale, offset, lo, hi); \
  }                                                                                        \
  vec4 NAME##_step(uint t, uvec4 lo, uvec4 hi) { return bytes4(nibble_step(t, lo, hi, FIVE)); } \
  DECLARE_K_LOADS(NAME, 0.0)

#define DECLARE_Q4_K_INPUT(BINDING, NAME) DECLARE_Q45_K_INPUT(BINDING, NAME, 36u, false)
#define DECLARE_Q5_K_INPUT(BINDING, NAME) DECLARE_Q45_K_INPUT(BINDING, NAME, 44u, true)

// Q6_K: 210 bytes (blocks start at byte 0 or 2 of a word): ql[128] at 0, qh[64] at 128, int8
// scales[16] at 192, f16 d at 208. In half h (values 128h..128h+127), value 32j + l takes nibble
// j / 2 of ql[64h + 32 (j % 2) + l] and bits 2j, 2j + 1 of qh[32h + l] above it; it is
// d * scales[8h + 2j + l / 16] * (q - 32).
#define DECLARE_Q6_K_INPUT(BINDING, NAME)                                                  \
  DECLARE_BLOCK_BYTES(BINDING, NAME, 210u)                                                 \
  float NAME##_d(uint block) { return NAME##_f16(block * 210u + 208u); }                   \
  float NAME##_int8(uint b) { return float(int(NAME##_byte(b) << 24) >> 24); }             \
  uint NAME##_join(uint j, uint ql, uint qh) {                                             \
    return ((ql >> ((j >> 1) * 4u)) & 0x0f0f0f0fu) | ((qh >> (2u * j)) & 0x03030303u) << 4; \
  }                                                                                        \
  void NAME##_sub(uint i, out float scale, out float offset) {                             \
    const uint h = (i >> 7) & 1u, j = (i >> 5) & 3u, l = i & 31u;                          \
    scale = NAME##_d(i >> 8) * NAME##_int8((i >> 8) * 210u + 192u + 8u * h + 2u * j + (l >> 4)); \
    offset = 0.0;                                                                          \
  }                                                                                        \
  uint NAME##_qword(uint i) {                                                              \
    const uint b = (i >> 8) * 210u, h = (i >> 7) & 1u, j = (i >> 5) & 3u, l = i & 31u;     \
    return NAME##_join(j, NAME##_quad(b + 64u * h + 32u * (j & 1u) + l), NAME##_quad(b + 128u + 32u * h + l)); \
  }                                                                                        \
  /* Chunk j of a half (0..3) from its 32 bytes of ql and the half's 32 bytes of qh, packed as \
     NAME_chunk gives them (below). */                                                     \
  void NAME##_pack(uint j, uvec4 ql_lo, uvec4 ql_hi, uvec4 qh_lo, uvec4 qh_hi, out uvec4 lo, out uvec4 hi) { \
    const uint shift = (j >> 1) * 4u;                                                      \
    lo = ((ql_lo >> shift) & 0x0f0f0f0fu) | ((ql_hi >> shift) & 0x0f0f0f0fu) << 4;         \
    const uvec4 pairs = ((qh_lo >> (2u * j)) & 0x03030303u) | ((qh_hi >> (2u * j)) & 0x03030303u) << 2; \
    hi = uvec4(pairs.x | pairs.y << 4, pairs.z | pairs.w << 4, 0u, 0u);                    \
  }                                                                                        \
  /* Packed to stay in few registers: word t of lo holds the low nibbles of step t (low) and \
     t + 4 (high); hi.x and hi.y hold the top bit pairs of steps 0, 1, 4, 5 and 2, 3, 6, 7. */ \
  void NAME##_chunk(uint c, out vec2 scale, out float offset, out uvec4 lo, out uvec4 hi) { \
    const uint b = (c >> 3) * 210u, h = (c >> 2) & 1u, j = c & 3u;                         \
    const uint sc = b + 192u + 8u * h + 2u * j;                                            \
    scale = NAME##_d(c >> 3) * vec2(NAME##_int8(sc), NAME##_int8(sc + 1u));                \
    offset = 0.0;                                                                          \
    uvec4 ql_lo, ql_hi, qh_lo, qh_hi;                                                      \
    NAME##_words8(b + 64u * h + 32u * (j & 1u), ql_lo, ql_hi);                             \
    NAME##_words8(b + 128u + 32u * h, qh_lo, qh_hi);                                       \
    NAME##_pack(j, ql_lo, ql_hi, qh_lo, qh_hi, lo, hi);                                    \
  }                                                                                        \
  /* Half super-block hb (values 128hb..128hb+127, four chunks) read once: its 64 bytes of ql, \
     32 of qh, 8 scales and d, which NAME_chunk would read again for every chunk (ql is      \
     shared by chunks j and j + 2, qh by all four). */                                     \
  void NAME##_half(uint hb, out float d, out uvec2 scales, out uvec4 ql[4], out uvec4 qh[2]) { \
    const uint b = (hb >> 1) * 210u, h = hb & 1u;                                          \
    d = NAME##_d(hb >> 1);                                                                 \
    NAME##_words8(b + 64u * h, ql[0], ql[1]);                                              \
    NAME##_words8(b + 64u * h + 32u, ql[2], ql[3]);                                        \
    NAME##_words8(b + 128u + 32u * h, qh[0], qh[1]);                                       \
    NAME##_octet(b + 192u + 8u * h, scales.x, scales.y);                                   \
  }                                                                                        \
  /* Chunk j (0..3) of a half as NAME_chunk gives it. */                                   \
  void NAME##_chunk_of_half(uint j, float d, uvec2 scales, uvec4 ql[4], uvec4 qh[2], out vec2 scale, \
                            out float offset, out uvec4 lo, out uvec4 hi) {                \
    const uint pair = scales[j >> 1] >> (16u * (j & 1u));                                  \
    scale = d * vec2(float(int(pair << 24) >> 24), float(int(pair << 16) >> 24));          \
    offset = 0.0;                                                                          \
    NAME##_pack(j, ql[2u * (j & 1u)], ql[2u * (j & 1u) + 1u], qh[0], qh[1], lo, hi);       \
  }                                                                                        \
  vec4 NAME##_step(uint t, uvec4 lo, uvec4 hi) {                                           \
    const uint low = (lo[t & 3u] >> (4u * (t >> 2))) & 0x0f0f0f0fu;                        \
    const uint top = (hi[(t & 3u) >> 1] >> (4u * (t & 1u) + 2u * (t >> 2))) & 0x03030303u; \
    return bytes4(low | top << 4) - 32.0;                                                  \
  }                                                                                        \
  DECLARE_K_LOADS(NAME, 32.0)

// Q2_K: 84 bytes (21 words, so every block is word-aligned): scales[16] at 0 (a sub-block's scale
// in the low nibble, its min in the high), qs[64] at 16, f16 d and dmin at 80. In half h (values
// 128h..128h+127) value 32j + l has its two bits at bits 2j of qs[32h + l]; it is
// d * scale * q - dmin * min for its sub-block of 16.
#define DECLARE_Q2_K_INPUT(BINDING, NAME)                                                  \
  DECLARE_BLOCK_BYTES(BINDING, NAME, 84u)                                                  \
  void NAME##_sub(uint i, out float scale, out float offset) {                             \
    const uint w = (i >> 8) * 21u, s = (i >> 4) & 15u;                                     \
    const vec2 dm = unpackHalf2x16(NAME##_data[w + 20u]);                                  \
    const uint sc = (NAME##_data[w + (s >> 2)] >> ((s & 3u) * 8u)) & 255u;                 \
    scale = dm.x * float(sc & 15u);                                                        \
    offset = dm.y * float(sc >> 4);                                                        \
  }                                                                                        \
  uint NAME##_qword(uint i) {                                                              \
    const uint w = (i >> 8) * 21u + 4u + 8u * ((i >> 7) & 1u) + ((i & 31u) >> 2);          \
    return (NAME##_data[w] >> (2u * ((i >> 5) & 3u))) & 0x03030303u;                       \
  }                                                                                        \
  /* The chunk's two sub-blocks have a min each where the interface has one offset, so the   \
     chunk carries its two scales and two offsets in hi (as float bits) and NAME_step gives the \
     values themselves (scale 1, offset 0). lo[t] holds the quants of step t in bits 0-1 of each \
     byte and of step t + 4 in bits 2-3. */                                                \
  void NAME##_chunk(uint c, out vec2 scale, out float offset, out uvec4 lo, out uvec4 hi) { \
    const uint w = (c >> 3) * 21u, h = (c >> 2) & 1u, j = c & 3u, s = 2u * (c & 7u);       \
    const vec2 dm = unpackHalf2x16(NAME##_data[w + 20u]);                                  \
    const uint sc = (NAME##_data[w + (s >> 2)] >> ((s & 3u) * 8u)) & 0xffffu;              \
    hi = uvec4(floatBitsToUint(dm.x * float(sc & 15u)), floatBitsToUint(dm.x * float((sc >> 8) & 15u)), \
               floatBitsToUint(dm.y * float((sc >> 4) & 15u)), floatBitsToUint(dm.y * float(sc >> 12))); \
    const uint q = w + 4u + 8u * h;                                                        \
    [[unroll]] for (uint t = 0u; t < 4u; ++t)                                              \
      lo[t] = ((NAME##_data[q + t] >> (2u * j)) & 0x03030303u) |                           \
              ((NAME##_data[q + t + 4u] >> (2u * j)) & 0x03030303u) << 2;                  \
    scale = vec2(1.0);                                                                     \
    offset = 0.0;                                                                          \
  }                                                                                        \
  vec4 NAME##_step(uint t, uvec4 lo, uvec4 hi) {                                           \
    const vec4 q = bytes4((lo[t & 3u] >> (2u * (t >> 2))) & 0x03030303u);                  \
    return uintBitsToFloat(hi[t >> 2]) * q - uintBitsToFloat(hi[2u + (t >> 2)]);           \
  }                                                                                        \
  DECLARE_K_LOADS(NAME, 0.0)

// Q3_K: 110 bytes (blocks start at byte 0 or 2 of a word): hmask[32] at 0, qs[64] at 32 (the two
// low bits as Q2_K's), scales[12] at 96, f16 d at 108. Value v's third bit is bit v / 32 of
// hmask[v % 32]; sub-block s's 6-bit scale has its low nibble in byte s % 8 (low nibble for s < 8,
// high else) and its top two bits at bits 2 (s / 4) of byte 8 + s % 4. A value is
// d * (scale - 32) * (q - 4), q the three bits.
#define DECLARE_Q3_K_INPUT(BINDING, NAME)                                                  \
  DECLARE_BLOCK_BYTES(BINDING, NAME, 110u)                                                 \
  float NAME##_d(uint block) { return NAME##_f16(block * 110u + 108u); }                   \
  float NAME##_scale6(uint block, uint s) {                                                \
    const uint b = block * 110u + 96u;                                                     \
    const uint low = (NAME##_byte(b + (s & 7u)) >> (4u * (s >> 3))) & 15u;                \
    const uint top = (NAME##_byte(b + 8u + (s & 3u)) >> (2u * (s >> 2))) & 3u;             \
    return float(int(low | top << 4) - 32);                                                \
  }                                                                                        \
  void NAME##_sub(uint i, out float scale, out float offset) {                             \
    scale = NAME##_d(i >> 8) * NAME##_scale6(i >> 8, (i >> 4) & 15u);                      \
    offset = 0.0;                                                                          \
  }                                                                                        \
  uint NAME##_qword(uint i) {                                                              \
    const uint b = (i >> 8) * 110u, h = (i >> 7) & 1u, j = (i >> 5) & 3u, l = i & 31u;     \
    const uint low = (NAME##_quad(b + 32u + 32u * h + l) >> (2u * j)) & 0x03030303u;       \
    return low | ((NAME##_quad(b + l) >> (4u * h + j)) & 0x01010101u) << 2;                \
  }                                                                                        \
  /* lo[t]: per byte, the low bits of step t (bits 0-1) and t + 4 (2-3), the third bits of   \
     step t (bit 4) and t + 4 (bit 5). */                                                  \
  void NAME##_chunk(uint c, out vec2 scale, out float offset, out uvec4 lo, out uvec4 hi) { \
    const uint block = c >> 3, b = block * 110u, h = (c >> 2) & 1u, j = c & 3u, s = 2u * (c & 7u); \
    scale = NAME##_d(block) * vec2(NAME##_scale6(block, s), NAME##_scale6(block, s + 1u));  \
    offset = 0.0;                                                                          \
    uvec4 q_lo, q_hi, m_lo, m_hi;                                                          \
    NAME##_words8(b + 32u + 32u * h, q_lo, q_hi);                                          \
    NAME##_words8(b, m_lo, m_hi);                                                          \
    const uint mshift = 4u * h + j;                                                        \
    lo = ((q_lo >> (2u * j)) & 0x03030303u) | ((q_hi >> (2u * j)) & 0x03030303u) << 2 |   \
         ((m_lo >> mshift) & 0x01010101u) << 4 | ((m_hi >> mshift) & 0x01010101u) << 5;     \
    hi = uvec4(0u);                                                                        \
  }                                                                                        \
  vec4 NAME##_step(uint t, uvec4 lo, uvec4 hi) {                                           \
    const uint k = t >> 2, w = lo[t & 3u];                                                 \
    return bytes4(((w >> (2u * k)) & 0x03030303u) | ((w >> (4u + k)) & 0x01010101u) << 2) - 4.0; \
  }                                                                                        \
  DECLARE_K_LOADS(NAME, 4.0)

#endif
