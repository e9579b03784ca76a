#version 450
// Matrix-vector multiply for a few rows of A (decode, and the last rows of a piece) on GPUs:
// C[m][n] = sum_k A[m][k] * B[n][k] for m < ROWS (1..8), fp32 accumulation.
//
// With few rows the work is reading B (the weights) once, so the kernel is built to stream B at
// memory bandwidth: each workgroup computes COLS columns of C (COLS rows of B), and its WG
// invocations split K between them, invocation i reading values 4i..4i+3 of every 4*WG, so the
// invocations of a subgroup read consecutive 16-byte (f32) or 8-byte (f16) words. A's few rows
// are read the same way and stay in cache. The partial sums are added with subgroupAdd and the
// subgroups' sums through shared memory; devices without subgroup arithmetic get the _shared
// variants, which add in shared memory alone. The grid has ceil(N / COLS) workgroups, enough to
// fill any GPU for the matrices of a model. K, the row strides and the offsets are multiples of
// 4 (the host checks); block-format weights are read a 32-value chunk per invocation instead
// (Q6_K a half super-block of 128 values).
// WORDS is how many such loads (words or chunks) of each column an invocation issues before it
// uses any: invocation i reads words i, i + WG, .. i + (WORDS - 1) WG of every WORDS * WG, so a
// subgroup's loads stay consecutive while more bytes are in flight per invocation, which is what
// streaming from a GPU's memory (rather than its cache) asks for.
//
// Decode runs a transformer block's small steps around the projections in the same pass, so a
// GPU pays one launch and one barrier for them (specialization constants, each off by default):
//   NORM_A: A's rows are RMS-normalised on the way in, A[m][k] * w[k] / sqrt(mean_k A[m][k]^2 + eps)
//           (binding 3: w): C = r_m * sum_k A[m][k] w[k] B[n][k], r_m from the row's squares,
//           which every workgroup sums as it reads A (A's row is a few KiB and stays in cache).
//   GLU:    C = silu(A B^T) * (A U^T) (binding 4: U, the FFN's up weights, in B's format and
//           layout): a gated FFN's gate and up projections and its SwiGLU in one pass.
//   BIAS:   C = A B^T + bias[n] (binding 5), a projection's bias (qwen2's Q, K, V).
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
//! variant a32_b32_shared -DNO_SUBGROUPS
//! variant a32_b16_shared -DB_F16 -DNO_SUBGROUPS
//! variant a16_b16_shared -DA_F16 -DB_F16 -DNO_SUBGROUPS
//! variant a32_bbf16_shared -DB_BF16 -DNO_SUBGROUPS
//! variant a32_bq8_0_shared -DB_Q8_0 -DNO_SUBGROUPS
//! variant a32_bq4_0_shared -DB_Q4_0 -DNO_SUBGROUPS
//! variant a32_bq4_1_shared -DB_Q4_1 -DNO_SUBGROUPS
//! variant a32_bq5_0_shared -DB_Q5_0 -DNO_SUBGROUPS
//! variant a32_bq5_1_shared -DB_Q5_1 -DNO_SUBGROUPS
//! variant a32_biq4_nl_shared -DB_IQ4_NL -DNO_SUBGROUPS
//! variant a32_biq4_xs_shared -DB_IQ4_XS -DNO_SUBGROUPS
//! variant a32_bq2_k_shared -DB_Q2_K -DNO_SUBGROUPS
//! variant a32_bq3_k_shared -DB_Q3_K -DNO_SUBGROUPS
//! variant a32_bq4_k_shared -DB_Q4_K -DNO_SUBGROUPS
//! variant a32_bq5_k_shared -DB_Q5_K -DNO_SUBGROUPS
//! variant a32_bq6_k_shared -DB_Q6_K -DNO_SUBGROUPS
#extension GL_EXT_control_flow_attributes : require
#extension GL_GOOGLE_include_directive : require
#ifndef NO_SUBGROUPS
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif
#include "../common/storage.glsl"

layout(local_size_x_id = 0) in;             // invocations per workgroup: a power of two
const uint WG = gl_WorkGroupSize.x;
layout(constant_id = 1) const uint ROWS = 1;  // rows of A and C (M)
layout(constant_id = 2) const uint COLS = 2;  // columns of C per workgroup
layout(constant_id = 3) const bool NORM_A = false;
layout(constant_id = 4) const bool GLU = false;
layout(constant_id = 5) const bool BIAS = false;
layout(constant_id = 6) const uint WORDS = 1;  // loads in flight per invocation and column

layout(push_constant) uniform Params {
  uint M, N, K;
  uint lda, ldb, ldc;
  uint a_off, b_off, c_off;
  uint accumulate;  // 1: C += A B^T, 0: C = A B^T
  uint bias_off;    // element offset of column 0's bias
  float eps;        // NORM_A's epsilon
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
// Read chunk by chunk with B_chunk and B_step (common/storage.glsl); U likewise.
DECLARE_BLOCK_WEIGHTS(4, U)
#elif defined(B_HALVES)
layout(std430, binding = 1) readonly buffer BBuffer { uvec2 b_data[]; };
layout(std430, binding = 4) readonly buffer UBuffer { uvec2 u_data[]; };
vec4 load_b4(uint i) { const uvec2 w = b_data[i >> 2]; return vec4(unpack_B2(w.x), unpack_B2(w.y)); }
vec4 load_u4(uint i) { const uvec2 w = u_data[i >> 2]; return vec4(unpack_B2(w.x), unpack_B2(w.y)); }
#else
layout(std430, binding = 1) readonly buffer BBuffer { vec4 b_data[]; };
layout(std430, binding = 4) readonly buffer UBuffer { vec4 u_data[]; };
vec4 load_b4(uint i) { return b_data[i >> 2]; }
vec4 load_u4(uint i) { return u_data[i >> 2]; }
#endif
layout(std430, binding = 3) readonly buffer NormBuffer { vec4 norm_w[]; };
layout(std430, binding = 5) readonly buffer BiasBuffer { float bias[]; };
#include "../common/matmul_output.glsl"

// The sums each workgroup reduces: C's ROWS x COLS, with GLU as many of A U^T, with NORM_A one
// sum of squares per row of A.
const uint SUMS = ROWS * COLS * 2 + ROWS;
#ifdef NO_SUBGROUPS
shared float partial[WG];
#else
// One slot per subgroup and sum; subgroups have at least 4 invocations on every device.
shared float partial[SUMS][WG / 4];
#endif

float silu(float g) { return g / (1.0 + exp(-g)); }

// Output (i, j) from its workgroup-wide sums: the norm's scale, the bias, the gate.
void finish(uint i, uint j, float c, float up, float squares) {
  const uint col = gl_WorkGroupID.x * COLS + j;
  if (col >= p.N) return;
  if (NORM_A) {
    const float r = inversesqrt(squares / float(p.K) + p.eps);
    c *= r;
    up *= r;
  }
  if (BIAS) c += bias[p.bias_off + col];
  if (GLU) c = silu(c) * up;
  store_c(p.c_off + i * p.ldc + col, c);
}

float sum4(vec4 v) { return (v.x + v.y) + (v.z + v.w); }

void main() {
  const uint col0 = gl_WorkGroupID.x * COLS;
  const uint lane = gl_LocalInvocationID.x;

  // Columns past N are clamped (loads stay in bounds) and not stored.
  uint b_row[COLS];
  [[unroll]] for (uint j = 0; j < COLS; ++j) b_row[j] = p.b_off + min(col0 + j, p.N - 1) * p.ldb;

  vec4 acc[ROWS][COLS], acc_up[ROWS][COLS], squares[ROWS];
  [[unroll]] for (uint i = 0; i < ROWS; ++i) {
    squares[i] = vec4(0.0);
    [[unroll]] for (uint j = 0; j < COLS; ++j) acc[i][j] = acc_up[i][j] = vec4(0.0);
  }

  // A's four values at k of row i, scaled by the norm's weights (their squares summed first).
#define LOAD_A(a, i, k)                       \
  vec4 a = load_a4(p.a_off + (i) * p.lda + (k)); \
  if (NORM_A) {                               \
    squares[i] = fma(a, a, squares[i]);       \
    a *= norm_w[(k) >> 2];                    \
  }

#if defined(B_BLOCKS)
  // A decoded 32-value chunk of each column (of B, and of U with GLU) at k: its eight steps of
  // four values against A's rows.
#define CHUNK_PRODUCTS(k, scale, offset, lo, hi, u_scale, u_offset, u_lo, u_hi)                      \
  [[unroll]] for (uint t = 0; t < 8; ++t) {                                                          \
    vec4 b[COLS], u[COLS];                                                                           \
    [[unroll]] for (uint j = 0; j < COLS; ++j) {                                                     \
      b[j] = scale[j][t >> 2] * B_step(t, lo[j], hi[j]) - offset[j];                                 \
      if (GLU) u[j] = u_scale[j][t >> 2] * U_step(t, u_lo[j], u_hi[j]) - u_offset[j];                \
    }                                                                                                \
    [[unroll]] for (uint i = 0; i < ROWS; ++i) {                                                     \
      LOAD_A(a, i, (k) + 4 * t)                                                                      \
      [[unroll]] for (uint j = 0; j < COLS; ++j) {                                                   \
        acc[i][j] = fma(a, b[j], acc[i][j]);                                                         \
        if (GLU) acc_up[i][j] = fma(a, u[j], acc_up[i][j]);                                          \
      }                                                                                              \
    }                                                                                                \
  }
#if defined(B_Q6_K)
  // Q6_K: each invocation takes whole half super-blocks (128 values, four chunks), whose words it
  // reads once: chunk by chunk, the half's high bits (qh) are read four times and its low nibbles
  // (ql) twice, with unaligned 32-bit loads (its blocks are 210 bytes); read so, this format ran
  // 4x slower than Q4_K on an H200.
  for (uint k0 = lane * 128; k0 < p.K; k0 += WG * 128 * WORDS) {
    [[unroll]] for (uint s = 0; s < WORDS; ++s) {
      const uint k = k0 + s * WG * 128;
      if (WORDS > 1 && k >= p.K) break;
      float d[COLS], u_d[COLS];
      uvec2 scales[COLS], u_scales[COLS];
      uvec4 ql[COLS][4], qh[COLS][2], u_ql[COLS][4], u_qh[COLS][2];
      [[unroll]] for (uint j = 0; j < COLS; ++j) {
        B_half((b_row[j] + k) >> 7, d[j], scales[j], ql[j], qh[j]);
        if (GLU) U_half((b_row[j] + k) >> 7, u_d[j], u_scales[j], u_ql[j], u_qh[j]);
      }
      [[unroll]] for (uint c = 0; c < 4; ++c) {
        vec2 scale[COLS], u_scale[COLS];
        float offset[COLS], u_offset[COLS];
        uvec4 lo[COLS], hi[COLS], u_lo[COLS], u_hi[COLS];
        [[unroll]] for (uint j = 0; j < COLS; ++j) {
          B_chunk_of_half(c, d[j], scales[j], ql[j], qh[j], scale[j], offset[j], lo[j], hi[j]);
          if (GLU) U_chunk_of_half(c, u_d[j], u_scales[j], u_ql[j], u_qh[j], u_scale[j], u_offset[j], u_lo[j], u_hi[j]);
        }
        CHUNK_PRODUCTS(k + 32 * c, scale, offset, lo, hi, u_scale, u_offset, u_lo, u_hi)
      }
    }
  }
#else
  // Block formats: each invocation takes whole 32-value chunks (lane, lane + WG, ...), reading a
  // chunk's scales and quants once and decoding its eight steps of four values in registers.
  // Four values at a time would reload and decode the block header (and for K formats unpack
  // the 6-bit scales) every four values: ALU work, on a GPU, that rivals the bytes read.
  // Consecutive invocations take consecutive chunks, so a subgroup still reads one run of B.
  for (uint k0 = lane * 32; k0 < p.K; k0 += WG * 32 * WORDS) {
    vec2 scale[WORDS][COLS], u_scale[WORDS][COLS];
    float offset[WORDS][COLS], u_offset[WORDS][COLS];
    uvec4 lo[WORDS][COLS], hi[WORDS][COLS], u_lo[WORDS][COLS], u_hi[WORDS][COLS];
    [[unroll]] for (uint s = 0; s < WORDS; ++s) {
      const uint k = min(k0 + s * WG * 32, p.K - 32);  // a chunk past K reads the last (and is not used)
      [[unroll]] for (uint j = 0; j < COLS; ++j) {
        B_chunk((b_row[j] + k) >> 5, scale[s][j], offset[s][j], lo[s][j], hi[s][j]);
        if (GLU) U_chunk((b_row[j] + k) >> 5, u_scale[s][j], u_offset[s][j], u_lo[s][j], u_hi[s][j]);
      }
    }
    [[unroll]] for (uint s = 0; s < WORDS; ++s) {
      const uint k = k0 + s * WG * 32;
      if (WORDS > 1 && k >= p.K) break;
      CHUNK_PRODUCTS(k, scale[s], offset[s], lo[s], hi[s], u_scale[s], u_offset[s], u_lo[s], u_hi[s])
    }
  }
#endif
#else
  for (uint k0 = lane * 4; k0 < p.K; k0 += WG * 4 * WORDS) {
    vec4 b[WORDS][COLS], u[WORDS][COLS];
    [[unroll]] for (uint s = 0; s < WORDS; ++s) {
      const uint k = min(k0 + s * WG * 4, p.K - 4);  // a word past K reads the last (and is not used)
      [[unroll]] for (uint j = 0; j < COLS; ++j) {
        b[s][j] = load_b4(b_row[j] + k);
        if (GLU) u[s][j] = load_u4(b_row[j] + k);
      }
    }
    [[unroll]] for (uint s = 0; s < WORDS; ++s) {
      const uint k = k0 + s * WG * 4;
      if (WORDS > 1 && k >= p.K) break;
      [[unroll]] for (uint i = 0; i < ROWS; ++i) {
        LOAD_A(a, i, k)
        [[unroll]] for (uint j = 0; j < COLS; ++j) {
          acc[i][j] = fma(a, b[s][j], acc[i][j]);
          if (GLU) acc_up[i][j] = fma(a, u[s][j], acc_up[i][j]);
        }
      }
    }
  }
#endif

#ifdef NO_SUBGROUPS
  // Sums in shared memory alone: one tree per sum.
  float sums[3];
  [[unroll]] for (uint i = 0; i < ROWS; ++i) {
    [[unroll]] for (uint j = 0; j < COLS; ++j) {
      const vec4 parts[3] = vec4[3](acc[i][j], acc_up[i][j], squares[i]);
      [[unroll]] for (uint s = 0; s < 3; ++s) {
        sums[s] = 0.0;
        if ((s == 1 && !GLU) || (s == 2 && !NORM_A)) continue;
        partial[lane] = sum4(parts[s]);
        barrier();
        for (uint half_size = WG / 2; half_size > 0; half_size /= 2) {
          if (lane < half_size) partial[lane] += partial[lane + half_size];
          barrier();
        }
        sums[s] = partial[0];
        barrier();
      }
      if (lane == 0) finish(i, j, sums[0], sums[1], sums[2]);
    }
  }
#else
  [[unroll]] for (uint i = 0; i < ROWS; ++i) {
    [[unroll]] for (uint j = 0; j < COLS; ++j) {
      const float sum = subgroupAdd(sum4(acc[i][j]));
      if (subgroupElect()) partial[i * COLS + j][gl_SubgroupID] = sum;
      if (GLU) {
        const float up = subgroupAdd(sum4(acc_up[i][j]));
        if (subgroupElect()) partial[ROWS * COLS + i * COLS + j][gl_SubgroupID] = up;
      }
    }
    if (NORM_A) {
      const float sq = subgroupAdd(sum4(squares[i]));
      if (subgroupElect()) partial[2 * ROWS * COLS + i][gl_SubgroupID] = sq;
    }
  }
  barrier();
  // The first invocations each finish outputs (one each unless the workgroup is smaller than
  // ROWS x COLS).
  for (uint o = lane; o < ROWS * COLS; o += WG) {
    const uint i = o / COLS, j = o % COLS;
    float c = 0.0, up = 0.0, sq = 0.0;
    for (uint s = 0; s < gl_NumSubgroups; ++s) {
      c += partial[o][s];
      if (GLU) up += partial[ROWS * COLS + o][s];
      if (NORM_A) sq += partial[2 * ROWS * COLS + i][s];
    }
    finish(i, j, c, up, sq);
  }
#endif
}
