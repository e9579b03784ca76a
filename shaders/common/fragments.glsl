// 16 x 16 fragments for matrix units (cooperative matrices), as macros, so that one kernel source
// runs on the hardware fragments (-DMATRIX_UNITS, f16 inputs, f32 sums: VK_KHR_cooperative_matrix
// where the build's glslang compiles it, which adds -DMATRIX_UNITS_KHR, else VK_NV_cooperative_matrix)
// or emulates them in plain arithmetic on any device with f16 arithmetic, which is how kernels
// built on them are tested where no matrix units exist.
//
//   FRAG_A, FRAG_B, FRAG_C    a 16 x 16 operand (f16) and accumulator (f32) of a warp
//   FRAG_ZERO(c)              c = 0
//   FRAG_LOAD_A(f, ARRAY, at, ld, cols), FRAG_LOAD_B(...)
//                             f (an A or a B operand) = the 16 x 16 block of shared array ARRAY
//                             (float16_t) at element `at`: row i, column j at at + i * ld + j, or
//                             at + j * ld + i if `cols` (a constant)
//   FRAG_MUL_ADD(c, a, A_ARRAY, b, B_ARRAY)
//                             c += a * b, where a and b were loaded from A_ARRAY and B_ARRAY, which
//                             must not have changed since (the emulation reads them there)
//   FRAG_LOAD_PACKED_A/B(f, ARRAY, at, ld, cols), FRAG_MUL_ADD_PACKED(c, a, A_ARRAY, b, B_ARRAY)
//                             the same for a shared uint array holding 2 halves per element, so
//                             that a kernel stages 8 values with 4 stores (adjacent, which GPU
//                             compilers merge) instead of 8; `at` and `ld` still count halves.
//                             (A uvec4 array would be one store, but Mesa 22.3's lavapipe
//                             computes wrong products from it after about 15 steps of a loop with
//                             barriers; Mesa 25 is right. uint arrays are right on both.)
//   FRAG_STORE(c, ARRAY, at, ld)
//                             row i, column j of c to ARRAY[at + i * ld + j] (shared or storage)
//   FRAG_LOAD_ACC(c, ARRAY, at, ld)
//                             the reverse: c from a float array (a matmul that adds to C)
//   WARP_ID                   the warp (subgroup) this invocation belongs to (see Warps below)
//
// Cooperative loads and stores need `at` and `ld` to keep rows 16-byte aligned: multiples of 8 for
// f16, of 4 for f32.
//
// Warps: kernels lay their workgroups out as warps of FRAG_LANES = 32 invocations (staging, softmax
// rows), and warp w's fragments are held by subgroup w. NV needs subgroups of exactly 32 lanes.
// KHR also runs on narrower ones (8 on lavapipe, 8 or 16 on Intel): there a workgroup of W warps
// has 32 W / lanes subgroups and only the first W hold fragments, so kernels put their fragment
// code under `if (WARP_ID < WARPS)` (uniform in each subgroup) with no barrier inside, and write
// fragments out through shared memory or FRAG_STORE, never by lane. The host checks the lanes.
#ifndef INFINI_FRAGMENTS_GLSL
#define INFINI_FRAGMENTS_GLSL

const uint FRAG_LANES = 32u;

// FRAG_UNROLL marks a loop over fragments, unrolled on NVIDIA's fragments (NV), so that each
// fragment of an array indexed by the loop is its own registers: the loops' bounds are
// specialization constants, which the front end cannot unroll, and a fragment array indexed in a
// loop the driver keeps lives in local memory (the H200's flat 34 TFLOP/s across tilings would fit
// that; not yet measured with the loops unrolled). KHR fragments keep the loops until a GPU measures
// the difference there: on lavapipe (the only KHR device the tests have) unrolled loops made a
// kernel's compile 3x longer (64 s against 23 s for the Q5_K matmul on Mesa 26). Emulated
// fragments keep them too.
#if defined(MATRIX_UNITS) && !defined(MATRIX_UNITS_KHR)
#define FRAG_UNROLL [[unroll]]
#else
#define FRAG_UNROLL
#endif

// Packed tiles: 8 values as f16, one 16-byte word (lo then hi), and its store into a shared uint
// tile at half `at` (a multiple of 8) as four adjacent 32-bit stores.
uvec4 pack_half8(vec4 lo, vec4 hi) {
  return uvec4(packHalf2x16(lo.xy), packHalf2x16(lo.zw), packHalf2x16(hi.xy), packHalf2x16(hi.zw));
}
#define PACKED_STORE8(TILE, at, word) \
  [[unroll]] for (uint q_ = 0u; q_ < 4u; ++q_) TILE[((at) >> 1u) + q_] = (word)[q_]

#if defined(MATRIX_UNITS) && defined(MATRIX_UNITS_KHR)
// KHR devices offer their own fragment shapes (NVIDIA and AMD 16x16x16, lavapipe 8x8x8, Intel
// 8x16x16): a 16 x 16 fragment is a grid of the device's blocks, FM x FK (A), FK x FN (B) and
// FM x FN (C), row-major in `t`. The pipeline cache sets these three constants from the device.
layout(constant_id = 20) const uint FRAG_FM = 16;
layout(constant_id = 21) const uint FRAG_FN = 16;
layout(constant_id = 22) const uint FRAG_FK = 16;
const uint FRAG_TM = 16u / FRAG_FM, FRAG_TN = 16u / FRAG_FN, FRAG_TK = 16u / FRAG_FK;
struct FragmentA {
  coopmat<float16_t, gl_ScopeSubgroup, FRAG_FM, FRAG_FK, gl_MatrixUseA> t[FRAG_TM * FRAG_TK];
};
struct FragmentB {
  coopmat<float16_t, gl_ScopeSubgroup, FRAG_FK, FRAG_FN, gl_MatrixUseB> t[FRAG_TK * FRAG_TN];
};
struct FragmentC {
  coopmat<float, gl_ScopeSubgroup, FRAG_FM, FRAG_FN, gl_MatrixUseAccumulator> t[FRAG_TM * FRAG_TN];
};
#define FRAG_A FragmentA
#define FRAG_B FragmentB
#define FRAG_C FragmentC
#define WARP_ID gl_SubgroupID
#define FRAG_LAYOUT(cols) ((cols) ? gl_CooperativeMatrixLayoutColumnMajor : gl_CooperativeMatrixLayoutRowMajor)
#define FRAG_ZERO(c)                                                                     \
  [[unroll]] for (uint b_ = 0u; b_ < FRAG_TM * FRAG_TN; ++b_)                             \
    c.t[b_] = coopmat<float, gl_ScopeSubgroup, FRAG_FM, FRAG_FN, gl_MatrixUseAccumulator>(0.0)
// The R x C blocks of f (BR x BC of them) from ARRAY; SHIFT 1 for a packed uint array, whose
// elements (the unit of a load's offset and stride) hold two halves.
#define FRAG_LOAD_BLOCKS(f, ARRAY, at, ld, cols, R, C, BR, BC, SHIFT)                     \
  [[unroll]] for (uint bi_ = 0u; bi_ < BR; ++bi_)                                         \
    [[unroll]] for (uint bj_ = 0u; bj_ < BC; ++bj_)                                       \
      coopMatLoad(f.t[bi_ * BC + bj_], ARRAY,                                            \
                  ((at) + ((cols) ? bj_ * C * (ld) + bi_ * R : bi_ * R * (ld) + bj_ * C)) >> SHIFT, \
                  (ld) >> SHIFT, FRAG_LAYOUT(cols))
#define FRAG_LOAD_A(f, ARRAY, at, ld, cols) FRAG_LOAD_BLOCKS(f, ARRAY, at, ld, cols, FRAG_FM, FRAG_FK, FRAG_TM, FRAG_TK, 0u)
#define FRAG_LOAD_B(f, ARRAY, at, ld, cols) FRAG_LOAD_BLOCKS(f, ARRAY, at, ld, cols, FRAG_FK, FRAG_FN, FRAG_TK, FRAG_TN, 0u)
#define FRAG_LOAD_PACKED_A(f, ARRAY, at, ld, cols) FRAG_LOAD_BLOCKS(f, ARRAY, at, ld, cols, FRAG_FM, FRAG_FK, FRAG_TM, FRAG_TK, 1u)
#define FRAG_LOAD_PACKED_B(f, ARRAY, at, ld, cols) FRAG_LOAD_BLOCKS(f, ARRAY, at, ld, cols, FRAG_FK, FRAG_FN, FRAG_TK, FRAG_TN, 1u)
#define FRAG_MUL_ADD(c, a, A_ARRAY, b, B_ARRAY)                                           \
  [[unroll]] for (uint bi_ = 0u; bi_ < FRAG_TM; ++bi_)                                    \
    [[unroll]] for (uint bj_ = 0u; bj_ < FRAG_TN; ++bj_)                                  \
      [[unroll]] for (uint bk_ = 0u; bk_ < FRAG_TK; ++bk_)                                \
        c.t[bi_ * FRAG_TN + bj_] = coopMatMulAdd(a.t[bi_ * FRAG_TK + bk_], b.t[bk_ * FRAG_TN + bj_], c.t[bi_ * FRAG_TN + bj_])
#define FRAG_MUL_ADD_PACKED(c, a, A_ARRAY, b, B_ARRAY) FRAG_MUL_ADD(c, a, A_ARRAY, b, B_ARRAY)
#define FRAG_STORE(c, ARRAY, at, ld)                                                     \
  [[unroll]] for (uint bi_ = 0u; bi_ < FRAG_TM; ++bi_)                                    \
    [[unroll]] for (uint bj_ = 0u; bj_ < FRAG_TN; ++bj_)                                  \
      coopMatStore(c.t[bi_ * FRAG_TN + bj_], ARRAY, (at) + bi_ * FRAG_FM * (ld) + bj_ * FRAG_FN, ld, \
                   gl_CooperativeMatrixLayoutRowMajor)
#define FRAG_LOAD_ACC(c, ARRAY, at, ld)                                                  \
  [[unroll]] for (uint bi_ = 0u; bi_ < FRAG_TM; ++bi_)                                    \
    [[unroll]] for (uint bj_ = 0u; bj_ < FRAG_TN; ++bj_)                                  \
      coopMatLoad(c.t[bi_ * FRAG_TN + bj_], ARRAY, (at) + bi_ * FRAG_FM * (ld) + bj_ * FRAG_FN, ld, \
                  gl_CooperativeMatrixLayoutRowMajor)
#elif defined(MATRIX_UNITS)
#define FRAG_A fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define FRAG_B fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define FRAG_C fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>
#define WARP_ID gl_SubgroupID
#define FRAG_ZERO(c) c = FRAG_C(0.0)
#define FRAG_LOAD_A(f, ARRAY, at, ld, cols) coopMatLoadNV(f, ARRAY, at, ld, cols)
#define FRAG_LOAD_B(f, ARRAY, at, ld, cols) coopMatLoadNV(f, ARRAY, at, ld, cols)
#define FRAG_MUL_ADD(c, a, A_ARRAY, b, B_ARRAY) c = coopMatMulAddNV(a, b, c)
// A load from an array of another type counts `at` and `ld` in that type's elements.
#define FRAG_LOAD_PACKED_A(f, ARRAY, at, ld, cols) coopMatLoadNV(f, ARRAY, (at) >> 1u, (ld) >> 1u, cols)
#define FRAG_LOAD_PACKED_B(f, ARRAY, at, ld, cols) coopMatLoadNV(f, ARRAY, (at) >> 1u, (ld) >> 1u, cols)
#define FRAG_MUL_ADD_PACKED(c, a, A_ARRAY, b, B_ARRAY) c = coopMatMulAddNV(a, b, c)
#define FRAG_STORE(c, ARRAY, at, ld) coopMatStoreNV(c, ARRAY, at, ld, false)
#define FRAG_LOAD_ACC(c, ARRAY, at, ld) coopMatLoadNV(c, ARRAY, at, ld, false)
#else
// An operand is its place in the shared array; lane l of an accumulator holds elements 8l..8l+7
// of the row-major 16 x 16 block. The multiply-add's loop over them is kept a loop: unrolled, it
// made lavapipe's compile of a kernel of many fragment products take 10-15x longer.
struct FragmentPlace {
  uint at, ld;
  bool cols;
};
struct FragmentSums {
  float v[8];
};
#define FRAG_A FragmentPlace
#define FRAG_B FragmentPlace
#define FRAG_C FragmentSums
#define WARP_ID (gl_LocalInvocationIndex / FRAG_LANES)
#define LANE_ID (gl_LocalInvocationIndex % FRAG_LANES)
#define FRAG_ZERO(c) [[unroll]] for (uint e_ = 0u; e_ < 8u; ++e_) c.v[e_] = 0.0
#define FRAG_LOAD_A(f, ARRAY, at_, ld_, cols_) f = FragmentPlace(at_, ld_, cols_)
#define FRAG_LOAD_B(f, ARRAY, at_, ld_, cols_) f = FragmentPlace(at_, ld_, cols_)
#define FRAG_LOAD_PACKED_A(f, ARRAY, at_, ld_, cols_) f = FragmentPlace(at_, ld_, cols_)
#define FRAG_LOAD_PACKED_B(f, ARRAY, at_, ld_, cols_) f = FragmentPlace(at_, ld_, cols_)
#define FRAG_AT(f, i, j) ((f).at + ((f).cols ? (j) * (f).ld + (i) : (i) * (f).ld + (j)))
#define FRAG_HALF(ARRAY, i) float(ARRAY[i])
#define FRAG_PACKED_HALF(ARRAY, i) unpackHalf2x16(ARRAY[(i) >> 1u] >> (((i) & 1u) * 16u)).x
#define FRAG_PRODUCTS(c, a, A_ARRAY, b, B_ARRAY, READ)                                  \
  [[dont_unroll]] for (uint e_ = 0u; e_ < 8u; ++e_) {                                    \
    const uint r_ = (LANE_ID * 8u + e_) / 16u, c_ = (LANE_ID * 8u + e_) % 16u;           \
    float s_ = 0.0;                                                                     \
    for (uint k_ = 0u; k_ < 16u; ++k_)                                                  \
      s_ += READ(A_ARRAY, FRAG_AT(a, r_, k_)) * READ(B_ARRAY, FRAG_AT(b, k_, c_));      \
    c.v[e_] += s_;                                                                      \
  }
#define FRAG_MUL_ADD(c, a, A_ARRAY, b, B_ARRAY) FRAG_PRODUCTS(c, a, A_ARRAY, b, B_ARRAY, FRAG_HALF)
#define FRAG_MUL_ADD_PACKED(c, a, A_ARRAY, b, B_ARRAY) FRAG_PRODUCTS(c, a, A_ARRAY, b, B_ARRAY, FRAG_PACKED_HALF)
#define FRAG_STORE(c, ARRAY, at_, ld_)                                                  \
  [[unroll]] for (uint e_ = 0u; e_ < 8u; ++e_) {                                        \
    const uint r_ = (LANE_ID * 8u + e_) / 16u, c_ = (LANE_ID * 8u + e_) % 16u;           \
    ARRAY[(at_) + r_ * (ld_) + c_] = c.v[e_];                                           \
  }
#define FRAG_LOAD_ACC(c, ARRAY, at_, ld_)                                               \
  [[unroll]] for (uint e_ = 0u; e_ < 8u; ++e_) {                                        \
    const uint r_ = (LANE_ID * 8u + e_) / 16u, c_ = (LANE_ID * 8u + e_) % 16u;           \
    c.v[e_] = ARRAY[(at_) + r_ * (ld_) + c_];                                           \
  }
#endif

#endif
