#version 450
// Matrix multiply for CPU Vulkan drivers whose workgroup is one subgroup (llvmpipe's 8 lanes):
// C[m][n] = sum_k A[m][k] * B[n][k], fp32 accumulation, no shared memory.
//
// On llvmpipe (Mesa 22.3) every storage-buffer load in a loop is a loop over the 8 lanes, costing
// about the same for one component as for four, so the number of loads, not of FMAs, sets the
// speed (matmul_regs.comp reaches about a quarter of the FMA peak). Here the TM rows of A that a
// workgroup needs are the same for all its lanes: each lane loads a different 8-value slice of
// them (64 k per row per round) and the others take it with subgroupShuffle from a lane fixed at
// compile time, which llvmpipe turns into one vector permute (subgroupBroadcast would be a lane
// loop again). That cuts A's loads eightfold; B (one weight row per output column, different per
// lane) is read 8 values per load. Rows and columns past the edge are clamped (loads stay in
// bounds) and not stored. K, the row strides and the offsets are multiples of 8 (the host
// checks). Requires local_size_x == gl_SubgroupSize == 8.
//! variant a32_b32
//! variant a32_b16 -DB_F16
//! variant a16_b16 -DA_F16 -DB_F16
//! variant a32_bbf16 -DB_BF16
//! variant a32_bq8_0 -DB_Q8_0
//! variant a32_bq4_0 -DB_Q4_0
//! variant a32_bq4_1 -DB_Q4_1
//! variant a32_bq5_0 -DB_Q5_0
//! variant a32_bq5_1 -DB_Q5_1
//! variant a32_biq4_nl -DB_IQ4_NL
//! variant a32_biq4_xs -DB_IQ4_XS
//! variant a32_bq2_k -DB_Q2_K
//! variant a32_bq3_k -DB_Q3_K
//! variant a32_bq4_k -DB_Q4_K
//! variant a32_bq5_k -DB_Q5_K
//! variant a32_bq6_k -DB_Q6_K
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_GOOGLE_include_directive : require
#include "../common/storage.glsl"

#define LANES 8
layout(local_size_x = LANES) in;
layout(constant_id = 0) const uint TM = 32;  // rows of C per workgroup (shared by its lanes)
layout(constant_id = 1) const uint TN = 8;   // columns of C per lane

layout(push_constant) uniform Params {
  uint M, N, K;
  uint lda, ldb, ldc;
  uint a_off, b_off, c_off;
  uint accumulate;  // 1: C += A B^T, 0: C = A B^T
} p;

// Loads of eight consecutive values starting at element i (i a multiple of 8), as two vec4.
#ifdef A_F16
layout(std430, binding = 0) readonly buffer ABuffer { uvec4 a_data[]; };
void load_a8(uint i, out vec4 lo, out vec4 hi) {
  const uvec4 w = a_data[i >> 3];
  lo = vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y));
  hi = vec4(unpackHalf2x16(w.z), unpackHalf2x16(w.w));
}
#else
layout(std430, binding = 0) readonly buffer ABuffer { vec4 a_data[]; };
void load_a8(uint i, out vec4 lo, out vec4 hi) { lo = a_data[i >> 2]; hi = a_data[(i >> 2) + 1]; }
#endif
#include "../common/block_weights.glsl"
#if defined(B_BLOCKS)
void load_b8(uint i, out vec4 lo, out vec4 hi) { load8_B(i, lo, hi); }
#elif defined(B_HALVES)
layout(std430, binding = 1) readonly buffer BBuffer { uvec4 b_data[]; };
void load_b8(uint i, out vec4 lo, out vec4 hi) {
  const uvec4 w = b_data[i >> 3];
  lo = vec4(unpack_B2(w.x), unpack_B2(w.y));
  hi = vec4(unpack_B2(w.z), unpack_B2(w.w));
}
#else
layout(std430, binding = 1) readonly buffer BBuffer { vec4 b_data[]; };
void load_b8(uint i, out vec4 lo, out vec4 hi) { lo = b_data[i >> 2]; hi = b_data[(i >> 2) + 1]; }
#endif
#include "../common/matmul_output.glsl"

void main() {
  const uint lane = gl_SubgroupInvocationID;
  const uint row0 = gl_WorkGroupID.y * TM;                 // the same for every lane
  const uint col0 = (gl_WorkGroupID.x * LANES + lane) * TN;

  uint a_row[TM], b_row[TN];
  [[unroll]] for (uint i = 0; i < TM; ++i) a_row[i] = p.a_off + min(row0 + i, p.M - 1) * p.lda;
  [[unroll]] for (uint j = 0; j < TN; ++j) b_row[j] = p.b_off + min(col0 + j, p.N - 1) * p.ldb;

  vec4 acc[TM][TN];
  [[unroll]] for (uint i = 0; i < TM; ++i)
    [[unroll]] for (uint j = 0; j < TN; ++j) acc[i][j] = vec4(0.0);

  // One round covers 8 * LANES values of k: lane l holds k0 + 8l .. k0 + 8l + 7 of each A row.
  // No branch depends on k: llvmpipe cannot tell that such a branch is uniform and would mask
  // every later instruction. Past K, A reads as zero and B repeats its last eight values.
  const uint k_last = p.K - 8;
  for (uint k0 = 0; k0 < p.K; k0 += 8 * LANES) {
    const uint mine = k0 + 8 * lane;
    const bvec4 inside = bvec4(mine < p.K);
    vec4 a_lo[TM], a_hi[TM];
    [[unroll]] for (uint i = 0; i < TM; ++i) {
      load_a8(a_row[i] + min(mine, k_last), a_lo[i], a_hi[i]);
      a_lo[i] = mix(vec4(0.0), a_lo[i], inside);  // a select, not a branch
      a_hi[i] = mix(vec4(0.0), a_hi[i], inside);
    }
#if defined(B_BLOCKS)
    // Block formats: the round's two 32-value chunks of each column read once (its scales and
    // quants), each giving four steps of eight values from registers; load_b8 would read the
    // block header and quants again every eight values. K is whole chunks, so a chunk past K
    // (K an odd number of chunks) is clamped to the last one, where A reads as zero.
    [[unroll]] for (uint half_round = 0; half_round < 2; ++half_round) {
      const uint chunk = min(k0 + 32 * half_round, p.K - 32);
      vec2 scale[TN];
      float offset[TN];
      uvec4 q_lo[TN], q_hi[TN];
      [[unroll]] for (uint j = 0; j < TN; ++j) B_chunk((b_row[j] + chunk) >> 5, scale[j], offset[j], q_lo[j], q_hi[j]);
      [[unroll]] for (uint step = 0; step < 4; ++step) {
        const uint s = 4 * half_round + step;
        vec4 b_lo[TN], b_hi[TN];
        [[unroll]] for (uint j = 0; j < TN; ++j) {
          b_lo[j] = scale[j][step >> 1] * B_step(2 * step, q_lo[j], q_hi[j]) - offset[j];
          b_hi[j] = scale[j][step >> 1] * B_step(2 * step + 1, q_lo[j], q_hi[j]) - offset[j];
        }
        [[unroll]] for (uint i = 0; i < TM; ++i) {
          const vec4 lo = subgroupShuffle(a_lo[i], s), hi = subgroupShuffle(a_hi[i], s);
          [[unroll]] for (uint j = 0; j < TN; ++j) acc[i][j] = fma(hi, b_hi[j], fma(lo, b_lo[j], acc[i][j]));
        }
      }
    }
#else
    [[unroll]] for (uint s = 0; s < LANES; ++s) {
      const uint k = min(k0 + 8 * s, k_last);
      vec4 b_lo[TN], b_hi[TN];
      [[unroll]] for (uint j = 0; j < TN; ++j) load_b8(b_row[j] + k, b_lo[j], b_hi[j]);
      [[unroll]] for (uint i = 0; i < TM; ++i) {
        const vec4 lo = subgroupShuffle(a_lo[i], s), hi = subgroupShuffle(a_hi[i], s);
        [[unroll]] for (uint j = 0; j < TN; ++j) acc[i][j] = fma(hi, b_hi[j], fma(lo, b_lo[j], acc[i][j]));
      }
    }
#endif
  }

  if (col0 >= p.N) return;
  [[unroll]] for (uint i = 0; i < TM; ++i) {
    if (row0 + i >= p.M) break;
    [[unroll]] for (uint j = 0; j < TN; ++j) {
      const vec4 v = acc[i][j];
      if (col0 + j < p.N) store_c(p.c_off + (row0 + i) * p.ldc + col0 + j, (v.x + v.y) + (v.z + v.w));
    }
  }
}
