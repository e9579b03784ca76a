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
// Stores: a tile wholly inside C whose stride and offset are multiples of 4 goes straight from the
// accumulators to C; any other tile goes fragment by fragment through shared memory, whose
// values each lane then writes where they are inside C. The choice is the same for the whole
// workgroup, so every barrier is reached by all its invocations.
//
// MATRIX_UNITS (VK_NV_cooperative_matrix) uses the hardware fragments. Without it the same kernel
// emulates them (common/fragments.glsl), so the tiling, staging, conversion, bounds and stores can
// be tested on devices without matrix units; that is slow and only ever asked for by name.
//! variant a32_b16 -DMATRIX_UNITS -DB_F16
//! variant a16_b16 -DMATRIX_UNITS -DA_F16 -DB_F16
//! variant a32_bq8 -DMATRIX_UNITS -DB_Q8_0
//! variant a32_bq4 -DMATRIX_UNITS -DB_Q4_0
//! variant a32_bq4k -DMATRIX_UNITS -DB_Q4_K
//! variant a32_bq5k -DMATRIX_UNITS -DB_Q5_K
//! variant a32_bq6k -DMATRIX_UNITS -DB_Q6_K
//! variant a32_b16_emulated -DB_F16
//! variant a16_b16_emulated -DA_F16 -DB_F16
//! variant a32_bq8_emulated -DB_Q8_0
//! variant a32_bq4_emulated -DB_Q4_0
//! variant a32_bq4k_emulated -DB_Q4_K
//! variant a32_bq5k_emulated -DB_Q5_K
//! variant a32_bq6k_emulated -DB_Q6_K
#extension GL_EXT_control_flow_attributes : require
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#ifdef MATRIX_UNITS
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#endif
#include "common/storage.glsl"
#include "common/fragments.glsl"

layout(local_size_x_id = 0) in;  // WARPS_M * WARPS_N * 32
layout(constant_id = 1) const uint WARPS_M = 2;
layout(constant_id = 2) const uint WARPS_N = 2;
layout(constant_id = 3) const uint FRAGS_M = 4;
layout(constant_id = 4) const uint FRAGS_N = 4;
layout(constant_id = 5) const uint BK = 32;

const uint BM = WARPS_M * FRAGS_M * 16u;
const uint BN = WARPS_N * FRAGS_N * 16u;
const uint WORKGROUP = WARPS_M * WARPS_N * FRAG_LANES;
const uint LDS = BK + 8u;      // tile row stride in halves: a multiple of 8 (16-byte rows), off the banks' period
const uint STAGE_LD = 20u;     // staging row stride in floats: a multiple of 4
const uint CHUNKS = BK / 8u;   // 8-value loads per tile row

layout(push_constant) uniform Params {
  uint M, N, K;
  uint lda, ldb, ldc;
  uint a_off, b_off, c_off;
} p;

// Eight consecutive values of A or B from element i (a multiple of 8).
#ifdef A_F16
layout(std430, binding = 0) readonly buffer ABuffer { uvec4 a_data[]; };
void load8_a(uint i, out vec4 lo, out vec4 hi) {
  const uvec4 w = a_data[i >> 3];
  lo = vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y));
  hi = vec4(unpackHalf2x16(w.z), unpackHalf2x16(w.w));
}
#else
layout(std430, binding = 0) readonly buffer ABuffer { vec4 a_data[]; };
void load8_a(uint i, out vec4 lo, out vec4 hi) {
  lo = a_data[i >> 2];
  hi = a_data[(i >> 2) + 1u];
}
#endif
#include "common/block_weights.glsl"
#if defined(B_BLOCKS)
void load8_b(uint i, out vec4 lo, out vec4 hi) { load8_B(i, lo, hi); }
#else
layout(std430, binding = 1) readonly buffer BBuffer { uvec4 b_data[]; };
void load8_b(uint i, out vec4 lo, out vec4 hi) {
  const uvec4 w = b_data[i >> 3];
  lo = vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y));
  hi = vec4(unpackHalf2x16(w.z), unpackHalf2x16(w.w));
}
#endif
layout(std430, binding = 2) writeonly buffer CBuffer { float c_data[]; };

shared float16_t tile_a[BM * LDS];
shared float16_t tile_b[BN * LDS];
shared float stage[WARPS_M * WARPS_N * 16u * STAGE_LD];


// Eight values of k from k0 + 8 * chunk of row `row` (of the tile) of A or B, as f16, into its tile.
void stage_a(uint row, uint chunk, uint k0) {
  const uint gr = gl_WorkGroupID.y * BM + row, gk = k0 + chunk * 8u;
  vec4 lo = vec4(0.0), hi = vec4(0.0);
  if (gr < p.M && gk < p.K) load8_a(p.a_off + gr * p.lda + gk, lo, hi);
  const uint at = row * LDS + chunk * 8u;
  [[unroll]] for (uint e = 0u; e < 4u; ++e) {
    tile_a[at + e] = float16_t(lo[e]);
    tile_a[at + 4u + e] = float16_t(hi[e]);
  }
}

void stage_b(uint row, uint chunk, uint k0) {
  const uint gr = gl_WorkGroupID.x * BN + row, gk = k0 + chunk * 8u;
  vec4 lo = vec4(0.0), hi = vec4(0.0);
  if (gr < p.N && gk < p.K) load8_b(p.b_off + gr * p.ldb + gk, lo, hi);
  const uint at = row * LDS + chunk * 8u;
  [[unroll]] for (uint e = 0u; e < 4u; ++e) {
    tile_b[at + e] = float16_t(lo[e]);
    tile_b[at + 4u + e] = float16_t(hi[e]);
  }
}

void main() {
  const uint tid = gl_LocalInvocationIndex;
  const uint warp = WARP_ID;
  const uint warp_m = warp / WARPS_N, warp_n = warp % WARPS_N;
  const uint row0 = gl_WorkGroupID.y * BM, col0 = gl_WorkGroupID.x * BN;

  FRAG_C acc[FRAGS_M * FRAGS_N];
  for (uint f = 0u; f < FRAGS_M * FRAGS_N; ++f) FRAG_ZERO(acc[f]);

  for (uint k0 = 0u; k0 < p.K; k0 += BK) {
    for (uint e = tid; e < BM * CHUNKS; e += WORKGROUP) stage_a(e / CHUNKS, e % CHUNKS, k0);
    for (uint e = tid; e < BN * CHUNKS; e += WORKGROUP) stage_b(e / CHUNKS, e % CHUNKS, k0);
    barrier();
    for (uint kk = 0u; kk < BK; kk += 16u) {
      FRAG_A a[FRAGS_M];
      FRAG_B b[FRAGS_N];
      for (uint i = 0u; i < FRAGS_M; ++i) FRAG_LOAD(a[i], tile_a, ((warp_m * FRAGS_M + i) * 16u) * LDS + kk, LDS, false);
      for (uint j = 0u; j < FRAGS_N; ++j) FRAG_LOAD(b[j], tile_b, ((warp_n * FRAGS_N + j) * 16u) * LDS + kk, LDS, true);
      for (uint i = 0u; i < FRAGS_M; ++i)
        for (uint j = 0u; j < FRAGS_N; ++j) FRAG_MUL_ADD(acc[i * FRAGS_N + j], a[i], tile_a, b[j], tile_b);
    }
    barrier();
  }

  const bool whole = row0 + BM <= p.M && col0 + BN <= p.N && p.ldc % 4u == 0u && p.c_off % 4u == 0u;
  if (whole) {
    for (uint i = 0u; i < FRAGS_M; ++i)
      for (uint j = 0u; j < FRAGS_N; ++j) {
        const uint r = row0 + (warp_m * FRAGS_M + i) * 16u, c = col0 + (warp_n * FRAGS_N + j) * 16u;
        FRAG_STORE(acc[i * FRAGS_N + j], c_data, p.c_off + r * p.ldc + c, p.ldc);
      }
    return;
  }
  const uint base = warp * 16u * STAGE_LD, lane = LANE_ID;
  for (uint i = 0u; i < FRAGS_M; ++i)
    for (uint j = 0u; j < FRAGS_N; ++j) {
      FRAG_STORE(acc[i * FRAGS_N + j], stage, base, STAGE_LD);
      barrier();
      const uint r0 = row0 + (warp_m * FRAGS_M + i) * 16u, c0 = col0 + (warp_n * FRAGS_N + j) * 16u;
      [[unroll]] for (uint e = 0u; e < 8u; ++e) {
        const uint r = (lane * 8u + e) / 16u, c = (lane * 8u + e) % 16u;
        if (r0 + r < p.M && c0 + c < p.N) c_data[p.c_off + (r0 + r) * p.ldc + c0 + c] = stage[base + r * STAGE_LD + c];
      }
      barrier();
    }
}
