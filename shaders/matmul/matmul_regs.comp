#version 450
// Register-blocked matrix multiply for CPU Vulkan drivers (llvmpipe, SwiftShader):
// C[m][n] = sum_k A[m][k] * B[n][k], fp32 accumulation, no shared memory.
//
// CPU drivers run invocations as SIMD lanes and turn every buffer or shared-memory load into a
// loop over the lanes, while arithmetic on registers is cheap. So each invocation computes a
// TM x TN block of C straight from device memory, four k at a time: TM + TN vec4 loads feed
// 4 * TM * TN FMAs. Shared-memory tiles (matmul.comp) would add loads, not remove them. Rows and
// columns past the edge are clamped (loads stay in bounds) and not stored. K, the row strides and
// the offsets are multiples of 4 (the host checks); of 32 for block-format weights, read block by
// block.
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
#extension GL_GOOGLE_include_directive : require
#include "../common/storage.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint TM = 4;  // rows of C per invocation
layout(constant_id = 2) const uint TN = 4;  // columns of C per invocation

layout(push_constant) uniform Params {
  uint M, N, K;
  uint lda, ldb, ldc;
  uint a_off, b_off, c_off;
  uint accumulate;  // 1: C += A B^T, 0: C = A B^T
} p;

#ifdef A_F16
layout(std430, binding = 0) readonly buffer ABuffer { uvec2 a_data[]; };
vec4 load_a4(uint i) { const uvec2 w = a_data[i >> 2]; return vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y)); }
#else
layout(std430, binding = 0) readonly buffer ABuffer { vec4 a_data[]; };
vec4 load_a4(uint i) { return a_data[i >> 2]; }
#endif
#include "../common/block_weights.glsl"
#if defined(B_BLOCKS)
vec4 load_b4(uint i) { return load4_B(i); }
#elif defined(B_HALVES)
layout(std430, binding = 1) readonly buffer BBuffer { uvec2 b_data[]; };
vec4 load_b4(uint i) { const uvec2 w = b_data[i >> 2]; return vec4(unpack_B2(w.x), unpack_B2(w.y)); }
#else
layout(std430, binding = 1) readonly buffer BBuffer { vec4 b_data[]; };
vec4 load_b4(uint i) { return b_data[i >> 2]; }
#endif
#include "../common/matmul_output.glsl"

void main() {
  const uint col0 = gl_GlobalInvocationID.x * TN;
  const uint row0 = gl_GlobalInvocationID.y * TM;
  if (col0 >= p.N || row0 >= p.M) return;

  uint a_row[TM], b_row[TN];
  [[unroll]] for (uint i = 0; i < TM; ++i) a_row[i] = p.a_off + min(row0 + i, p.M - 1) * p.lda;
  [[unroll]] for (uint j = 0; j < TN; ++j) b_row[j] = p.b_off + min(col0 + j, p.N - 1) * p.ldb;

  vec4 acc[TM][TN];
  [[unroll]] for (uint i = 0; i < TM; ++i)
    [[unroll]] for (uint j = 0; j < TN; ++j) acc[i][j] = vec4(0.0);

#if defined(B_Q6_K)
  // Q6_K: half a super-block (128 values) of one column at a time, its words read once (31 loads
  // where chunk by chunk takes 84), then its four chunks' steps from registers. A's values are
  // the same for every lane (lanes are columns), so reloading them per column costs little.
  for (uint k = 0; k < p.K; k += 128) {
    [[unroll]] for (uint j = 0; j < TN; ++j) {
      float d;
      uvec2 scales;
      uvec4 ql[4], qh[2];
      B_half((b_row[j] + k) >> 7, d, scales, ql, qh);
      [[unroll]] for (uint c = 0; c < 4; ++c) {
        vec2 scale;
        float offset;
        uvec4 lo, hi;
        B_chunk_of_half(c, d, scales, ql, qh, scale, offset, lo, hi);
        [[unroll]] for (uint t = 0; t < 8; ++t) {
          const vec4 b = scale[t >> 2] * B_step(t, lo, hi);
          [[unroll]] for (uint i = 0; i < TM; ++i) acc[i][j] = fma(load_a4(a_row[i] + k + 32 * c + 4 * t), b, acc[i][j]);
        }
      }
    }
  }
#elif defined(B_Q4_K) || defined(B_Q5_K)
  // Q4_K, Q5_K: a pair of chunks (64 values, the low and high nibbles of the same 32 bytes) of one
  // column at a time, the super-block's header and the pair's words read once for both.
  for (uint k = 0; k < p.K; k += 64) {
    [[unroll]] for (uint j = 0; j < TN; ++j) {
      uvec4 header, ql_lo, ql_hi, h_lo, h_hi;
      B_pair((b_row[j] + k) >> 6, header, ql_lo, ql_hi, h_lo, h_hi);
      [[unroll]] for (uint c = 0; c < 2; ++c) {
        vec2 scale;
        float offset;
        uvec4 lo, hi;
        B_chunk_of_pair((((b_row[j] + k) >> 5) & 7u) + c, header, ql_lo, ql_hi, h_lo, h_hi, scale, offset, lo, hi);
        [[unroll]] for (uint t = 0; t < 8; ++t) {
          const vec4 b = scale[t >> 2] * B_step(t, lo, hi) - offset;
          [[unroll]] for (uint i = 0; i < TM; ++i) acc[i][j] = fma(load_a4(a_row[i] + k + 32 * c + 4 * t), b, acc[i][j]);
        }
      }
    }
  }
#elif defined(B_BLOCKS)
  // 32 values at a time: the words that hold each column's chunk once (scales and quants), then
  // the eight steps of four k from registers. Reading four values at a time would load the
  // scales and one or two words per step.
  for (uint k = 0; k < p.K; k += 32) {
    vec2 scale[TN];
    float offset[TN];
    uvec4 lo[TN], hi[TN];
    [[unroll]] for (uint j = 0; j < TN; ++j) B_chunk((b_row[j] + k) >> 5, scale[j], offset[j], lo[j], hi[j]);
    [[unroll]] for (uint t = 0; t < 8; ++t) {
      vec4 a[TM], b[TN];
      [[unroll]] for (uint i = 0; i < TM; ++i) a[i] = load_a4(a_row[i] + k + 4 * t);
      [[unroll]] for (uint j = 0; j < TN; ++j) b[j] = scale[j][t >> 2] * B_step(t, lo[j], hi[j]) - offset[j];
      [[unroll]] for (uint i = 0; i < TM; ++i)
        [[unroll]] for (uint j = 0; j < TN; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
    }
  }
#else
  for (uint k = 0; k < p.K; k += 4) {
    vec4 a[TM], b[TN];
    [[unroll]] for (uint i = 0; i < TM; ++i) a[i] = load_a4(a_row[i] + k);
    [[unroll]] for (uint j = 0; j < TN; ++j) b[j] = load_b4(b_row[j] + k);
    [[unroll]] for (uint i = 0; i < TM; ++i)
      [[unroll]] for (uint j = 0; j < TN; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
  }
#endif

  [[unroll]] for (uint i = 0; i < TM; ++i) {
    if (row0 + i >= p.M) break;
    [[unroll]] for (uint j = 0; j < TN; ++j) {
      const vec4 v = acc[i][j];
      if (col0 + j < p.N) store_c(p.c_off + (row0 + i) * p.ldc + col0 + j, (v.x + v.y) + (v.z + v.w));
    }
  }
}
