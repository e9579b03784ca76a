#version 450
// Matrix multiply on matrix units (cooperative matrices): C[m][n] = sum_k A[m][k] * B[n][k],
// f16 inputs, f32 sums. A (f32 or f16) and B (f16 or a block format) are converted to f16 on the
// way into shared-memory tiles; each subgroup ("warp") multiplies 16x16x16 fragments of them.
//
// Layout: a workgroup computes a BM x BN tile of C with WARPS_M x WARPS_N warps of 32
// invocations, each warp FRAGS_M x FRAGS_N fragments of 16 x 16 (BM = WARPS_M * FRAGS_M * 16).
// Per step of BK (a multiple of 16) values of k, the workgroup stages A as [BM][BK] and B as
// [BN][BK] (k contiguous, rows padded to LDS halves), then each warp loads FRAGS_M fragments of A
// (row-major) and FRAGS_N of B (the tile read column-major is B^T) per 16 k and multiply-adds.
// The host calls it only where K, the row strides of A and B and their offsets are multiples of 8,
// so every 8 values of k are one 16-byte load (past K they are zeros).
//
// Staging: 8 values of k are packed into one 16-byte word of f16 (f16 inputs are copied as they
// are) and stored as four adjacent 32-bit values, not eight halves. The next step's words are read from device
// memory into registers before this step's products, so their latency overlaps the matrix units'
// work instead of stalling between the two barriers. With STAGES 2 the tiles have two buffers:
// the next step's words go into the other one after this step's products, and one barrier per
// step orders both (the stores wait for their loads while the matrix units work).
//
// Stores: a tile wholly inside C whose stride and offset are multiples of 4 goes straight from the
// accumulators to C; any other tile goes fragment by fragment through shared memory, whose
// values the workgroup then writes where they are inside C. The choice is the same for the whole
// workgroup, so every barrier is reached by all its invocations. A call that adds to C starts a
// whole tile's sums from C's values, and adds them to a partial tile's values as it stores them.
//
// MATRIX_UNITS uses the hardware fragments (cooperative matrices, KHR or NV). Without it the same kernel
// emulates them (common/fragments.glsl), so the tiling, staging, conversion, bounds and stores can
// be tested on devices without matrix units; that is slow and only ever asked for by name.
//! variant a32_b16 -DMATRIX_UNITS -DB_F16
//! variant a16_b16 -DMATRIX_UNITS -DA_F16 -DB_F16
//! variant a32_bbf16 -DMATRIX_UNITS -DB_BF16
//! variant a32_bq8_0 -DMATRIX_UNITS -DB_Q8_0
//! variant a32_bq4_0 -DMATRIX_UNITS -DB_Q4_0
//! variant a32_bq4_1 -DMATRIX_UNITS -DB_Q4_1
//! variant a32_bq5_0 -DMATRIX_UNITS -DB_Q5_0
//! variant a32_bq5_1 -DMATRIX_UNITS -DB_Q5_1
//! variant a32_biq4_nl -DMATRIX_UNITS -DB_IQ4_NL
//! variant a32_biq4_xs -DMATRIX_UNITS -DB_IQ4_XS
//! variant a32_bq2_k -DMATRIX_UNITS -DB_Q2_K
//! variant a32_bq3_k -DMATRIX_UNITS -DB_Q3_K
//! variant a32_bq4_k -DMATRIX_UNITS -DB_Q4_K
//! variant a32_bq5_k -DMATRIX_UNITS -DB_Q5_K
//! variant a32_bq6_k -DMATRIX_UNITS -DB_Q6_K
//! variant a32_b16_emulated -DB_F16
//! variant a16_b16_emulated -DA_F16 -DB_F16
//! variant a32_bbf16_emulated -DB_BF16
//! variant a32_bq8_0_emulated -DB_Q8_0
//! variant a32_bq4_0_emulated -DB_Q4_0
//! variant a32_bq4_1_emulated -DB_Q4_1
//! variant a32_bq5_0_emulated -DB_Q5_0
//! variant a32_bq5_1_emulated -DB_Q5_1
//! variant a32_biq4_nl_emulated -DB_IQ4_NL
//! variant a32_biq4_xs_emulated -DB_IQ4_XS
//! variant a32_bq2_k_emulated -DB_Q2_K
//! variant a32_bq3_k_emulated -DB_Q3_K
//! variant a32_bq4_k_emulated -DB_Q4_K
//! variant a32_bq5_k_emulated -DB_Q5_K
//! variant a32_bq6_k_emulated -DB_Q6_K
#extension GL_EXT_control_flow_attributes : require
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#if defined(MATRIX_UNITS) && defined(MATRIX_UNITS_KHR)
#extension GL_KHR_cooperative_matrix : require
#elif defined(MATRIX_UNITS)
#extension GL_NV_cooperative_matrix : require
#endif
#ifdef MATRIX_UNITS
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#pragma use_vulkan_memory_model
#endif
#include "../common/storage.glsl"
#include "../common/fragments.glsl"

layout(local_size_x_id = 0) in;  // WARPS_M * WARPS_N * 32
layout(constant_id = 1) const uint WARPS_M = 2;
layout(constant_id = 2) const uint WARPS_N = 2;
layout(constant_id = 3) const uint FRAGS_M = 4;
layout(constant_id = 4) const uint FRAGS_N = 4;
layout(constant_id = 5) const uint BK = 32;
layout(constant_id = 6) const uint STAGES = 1;  // tile buffers: 1 or 2

const uint BM = WARPS_M * FRAGS_M * 16u;
const uint BN = WARPS_N * FRAGS_N * 16u;
const uint WORKGROUP = WARPS_M * WARPS_N * FRAG_LANES;
const uint LDS = BK + 8u;      // tile row stride in halves: a multiple of 8 (16-byte rows), off the banks' period
const uint STAGE_LD = 20u;     // staging row stride in floats: a multiple of 4
const uint CHUNKS = BK / 8u;   // 8-value words per tile row
// Words of A and B each invocation stages per step.
const uint A_WORDS = (BM * CHUNKS + WORKGROUP - 1u) / WORKGROUP;
const uint B_WORDS = (BN * CHUNKS + WORKGROUP - 1u) / WORKGROUP;

layout(push_constant) uniform Params {
  uint M, N, K;
  uint lda, ldb, ldc;
  uint a_off, b_off, c_off;
  uint accumulate;  // 1: C += A B^T, 0: C = A B^T
} p;

// Eight consecutive values of A or B from element i (a multiple of 8), packed as f16.
#ifdef A_F16
layout(std430, binding = 0) readonly buffer ABuffer { uvec4 a_data[]; };
uvec4 load8_a(uint i) { return a_data[i >> 3]; }
#else
layout(std430, binding = 0) readonly buffer ABuffer { vec4 a_data[]; };
uvec4 load8_a(uint i) { return pack_half8(a_data[i >> 2], a_data[(i >> 2) + 1u]); }
#endif
#include "../common/block_weights.glsl"
#if defined(B_BLOCKS)
uvec4 load8_b(uint i) {
  vec4 lo, hi;
  load8_B(i, lo, hi);
  return pack_half8(lo, hi);
}
#elif defined(B_BF16)
// bfloat16 weights enter the tiles as f16: exact for the values f16 holds, |w| from 2^-14 to
// 65504 (a bfloat16 has 8 significant bits, f16 11), as A's f32 activations are rounded too.
layout(std430, binding = 1) readonly buffer BBuffer { uvec4 b_data[]; };
uvec4 load8_b(uint i) {
  const uvec4 w = b_data[i >> 3];
  return pack_half8(vec4(unpack_B2(w.x), unpack_B2(w.y)), vec4(unpack_B2(w.z), unpack_B2(w.w)));
}
#else
layout(std430, binding = 1) readonly buffer BBuffer { uvec4 b_data[]; };
uvec4 load8_b(uint i) { return b_data[i >> 3]; }
#endif
#include "../common/matmul_output.glsl"

shared uint tile_a[STAGES * BM * LDS / 2u];  // f16 pairs; buffer s from half s * BM * LDS
shared uint tile_b[STAGES * BN * LDS / 2u];
shared float stage[WARPS_M * WARPS_N * 16u * STAGE_LD];

// Word `chunk` (values k0 + 8 chunk ..) of row `row` of the A or B tile; zeros outside A or B.
uvec4 fetch_a(uint row, uint chunk, uint k0) {
  const uint gr = gl_WorkGroupID.y * BM + row, gk = k0 + chunk * 8u;
  if (gr >= p.M || gk >= p.K) return uvec4(0u);  // a branch: nothing is read there
  return load8_a(p.a_off + gr * p.lda + gk);
}

uvec4 fetch_b(uint row, uint chunk, uint k0) {
  const uint gr = gl_WorkGroupID.x * BN + row, gk = k0 + chunk * 8u;
  if (gr >= p.N || gk >= p.K) return uvec4(0u);  // a branch: nothing is read there
  return load8_b(p.b_off + gr * p.ldb + gk);
}

// Invocation tid stages words tid + s * WORKGROUP of each tile; word w is row w / CHUNKS, values
// 8 (w % CHUNKS) .. of the step. FETCH_WORDS reads a step's words into registers, STORE_WORDS
// writes them to tile buffer `buf` as four adjacent uint stores each.
#define FETCH_WORDS(k0)                                                                           \
  [[unroll]] for (uint s = 0u; s < A_WORDS; ++s) {                                                \
    const uint w = tid + s * WORKGROUP;                                                           \
    if (w < BM * CHUNKS) next_a[s] = fetch_a(w / CHUNKS, w % CHUNKS, k0);                         \
  }                                                                                               \
  [[unroll]] for (uint s = 0u; s < B_WORDS; ++s) {                                                \
    const uint w = tid + s * WORKGROUP;                                                           \
    if (w < BN * CHUNKS) next_b[s] = fetch_b(w / CHUNKS, w % CHUNKS, k0);                         \
  }
#define STORE_TILE_WORD(TILE, base, w, word) PACKED_STORE8(TILE, (base) + ((w) / CHUNKS) * LDS + ((w) % CHUNKS) * 8u, word)
#define STORE_WORDS(buf)                                                                                          \
  [[unroll]] for (uint s = 0u; s < A_WORDS; ++s)                                                                  \
    if (tid + s * WORKGROUP < BM * CHUNKS) STORE_TILE_WORD(tile_a, (buf) * BM * LDS, tid + s * WORKGROUP, next_a[s]); \
  [[unroll]] for (uint s = 0u; s < B_WORDS; ++s)                                                                  \
    if (tid + s * WORKGROUP < BN * CHUNKS) STORE_TILE_WORD(tile_b, (buf) * BN * LDS, tid + s * WORKGROUP, next_b[s])

void main() {
  const uint tid = gl_LocalInvocationIndex;
  const uint warp = WARP_ID;
  const uint warp_m = warp / WARPS_N, warp_n = warp % WARPS_N;
  const bool holds = warp < WARPS_M * WARPS_N;  // false only in the extra subgroups of narrow ones
  const uint row0 = gl_WorkGroupID.y * BM, col0 = gl_WorkGroupID.x * BN;

  // A tile wholly inside C, with a 16-byte stride and offset, is stored straight from the
  // fragments (and, when the call adds to C, its sums start from C's values); any other goes
  // through shared memory. The choice is the same for the whole workgroup.
  const uint c_base = c_slice_offset();  // C, or this slice's partial product (split-K)
  const bool whole = row0 + BM <= p.M && col0 + BN <= p.N && p.ldc % 4u == 0u && c_base % 4u == 0u;
  FRAG_C acc[FRAGS_M * FRAGS_N];
  FRAG_UNROLL for (uint f = 0u; f < FRAGS_M * FRAGS_N; ++f) FRAG_ZERO(acc[f]);
  if (holds && whole && p.accumulate != 0u)
    FRAG_UNROLL for (uint i = 0u; i < FRAGS_M; ++i)
      FRAG_UNROLL for (uint j = 0u; j < FRAGS_N; ++j) {
        const uint r = row0 + (warp_m * FRAGS_M + i) * 16u, c = col0 + (warp_n * FRAGS_N + j) * 16u;
        FRAG_LOAD_ACC(acc[i * FRAGS_N + j], c_data, c_base + r * p.ldc + c, p.ldc);
      }

  // All of k, or this workgroup's slice of it (split-K); a step never crosses a slice's end.
  const uint k_begin = k_slice_begin(BK), k_end = k_slice_end(BK);
  uvec4 next_a[A_WORDS], next_b[B_WORDS];
  FETCH_WORDS(k_begin);
  if (STAGES == 2u) {
    STORE_WORDS(0u);
    barrier();
  }
  uint buf = 0u;  // the tile buffer of this step
  for (uint k0 = k_begin; k0 < k_end; k0 += BK) {
    if (STAGES == 1u) {
      STORE_WORDS(0u);
      barrier();
    }
    // The next step's words, in flight while the matrix units work on this one.
    const bool more = k0 + BK < k_end;
    if (more) {
      FETCH_WORDS(k0 + BK);
    }
    const uint a0 = buf * BM * LDS, b0 = buf * BN * LDS;
    if (holds)
      FRAG_UNROLL for (uint kk = 0u; kk < BK; kk += 16u) {
        FRAG_A a[FRAGS_M];
        FRAG_B b[FRAGS_N];
        FRAG_UNROLL for (uint i = 0u; i < FRAGS_M; ++i)
          FRAG_LOAD_PACKED_A(a[i], tile_a, a0 + ((warp_m * FRAGS_M + i) * 16u) * LDS + kk, LDS, false);
        FRAG_UNROLL for (uint j = 0u; j < FRAGS_N; ++j)
          FRAG_LOAD_PACKED_B(b[j], tile_b, b0 + ((warp_n * FRAGS_N + j) * 16u) * LDS + kk, LDS, true);
        FRAG_UNROLL for (uint i = 0u; i < FRAGS_M; ++i)
          FRAG_UNROLL for (uint j = 0u; j < FRAGS_N; ++j) FRAG_MUL_ADD_PACKED(acc[i * FRAGS_N + j], a[i], tile_a, b[j], tile_b);
      }
    // Two buffers: the next step's words into the other one, which every warp finished reading
    // before the last barrier; the barrier below then orders this step's reads before the
    // next step's stores into this one.
    if (STAGES == 2u && more) {
      STORE_WORDS(buf ^ 1u);
      buf ^= 1u;
    }
    barrier();
  }

  if (whole) {
    if (holds)
      FRAG_UNROLL for (uint i = 0u; i < FRAGS_M; ++i)
        FRAG_UNROLL for (uint j = 0u; j < FRAGS_N; ++j) {
          const uint r = row0 + (warp_m * FRAGS_M + i) * 16u, c = col0 + (warp_n * FRAGS_N + j) * 16u;
          FRAG_STORE(acc[i * FRAGS_N + j], c_data, c_base + r * p.ldc + c, p.ldc);
        }
    return;
  }
  // Fragment (i, j) of every warp to shared memory, then the workgroup writes the values inside C.
  FRAG_UNROLL for (uint i = 0u; i < FRAGS_M; ++i)
    FRAG_UNROLL for (uint j = 0u; j < FRAGS_N; ++j) {
      if (holds) FRAG_STORE(acc[i * FRAGS_N + j], stage, warp * 16u * STAGE_LD, STAGE_LD);
      barrier();
      for (uint e = tid; e < WARPS_M * WARPS_N * 256u; e += WORKGROUP) {
        const uint w = e / 256u, r = (e % 256u) / 16u, c = e % 16u;
        const uint r0 = row0 + ((w / WARPS_N) * FRAGS_M + i) * 16u, c0 = col0 + ((w % WARPS_N) * FRAGS_N + j) * 16u;
        if (r0 + r < p.M && c0 + c < p.N) store_c(c_base + (r0 + r) * p.ldc + c0 + c, stage[w * 16u * STAGE_LD + r * STAGE_LD + c]);
      }
      barrier();
    }
}
