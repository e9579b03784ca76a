#version 450
// Tiled matrix multiply: C[m][n] = sum_k A[m][k] * B[n][k]   (C = A * B^T)
// Both inputs are k-contiguous, which is how activations [tokens][features] and weights
// [out][in] are stored, so the same kernel serves every projection. fp32 accumulation.
//
// A workgroup computes a BM x BN tile of C; each invocation a TM x TN micro-tile.
// Tile sizes are specialization constants; the host guarantees WG = (BM/TM) * (BN/TN).
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
//! variant a32_b16_half -DB_F16 -DHALF_MATH
//! variant a16_b16_half -DA_F16 -DB_F16 -DHALF_MATH
// HALF_MATH (devices with shaderFloat16): the tiles hold f16 pairs along k, half the shared memory
// and half the shared loads, and each pair of products is one packed f16x2 multiply; the products
// are added in f32, so only the inputs' and the products' roundings are f16 (f16 weights lose
// nothing; f32 activations are rounded to f16).
#extension GL_EXT_control_flow_attributes : require
#extension GL_GOOGLE_include_directive : require
#include "../common/storage.glsl"
#ifdef HALF_MATH
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#endif

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint BM = 64;
layout(constant_id = 2) const uint BN = 64;
layout(constant_id = 3) const uint BK = 16;
layout(constant_id = 4) const uint TM = 4;
layout(constant_id = 5) const uint TN = 4;

layout(push_constant) uniform Params {
  uint M, N, K;
  uint lda, ldb, ldc;        // row strides in elements
  uint a_off, b_off, c_off;  // element offsets of the first row
  uint accumulate;           // 1: C += A B^T (a residual added in the same pass), 0: C = A B^T
} p;

#ifdef A_F16
DECLARE_F16_INPUT(0, A)
#else
DECLARE_F32_INPUT(0, A)
#endif
#include "../common/block_weights.glsl"
#if defined(B_BLOCKS)
#elif defined(B_F16)
DECLARE_F16_INPUT(1, B)
#elif defined(B_BF16)
DECLARE_BF16_INPUT(1, B)
#else
DECLARE_F32_INPUT(1, B)
#endif
#include "../common/matmul_output.glsl"

// Stored k-major so the inner loop reads consecutive rows/columns of the tile.
#ifdef HALF_MATH
shared f16vec2 tile_a[BK / 2 * BM];
shared f16vec2 tile_b[BK / 2 * BN];
#else
shared float tile_a[BK * BM];
shared float tile_b[BK * BN];
#endif

void main() {
  const uint wg_size = (BM / TM) * (BN / TN);
  const uint tid = gl_LocalInvocationID.x;
  const uint threads_n = BN / TN;
  const uint tx = tid % threads_n;
  const uint ty = tid / threads_n;
  const uint row0 = gl_WorkGroupID.y * BM;
  const uint col0 = gl_WorkGroupID.x * BN;

  float acc[TM * TN];
  for (uint i = 0; i < TM * TN; ++i) acc[i] = 0.0;

  // All of k, or this workgroup's slice of it (split-K); a step never crosses a slice's end.
  const uint k_end = k_slice_end(BK);
  for (uint k0 = k_slice_begin(BK); k0 < k_end; k0 += BK) {
#ifdef HALF_MATH
    // Pairs of k per element; BK is even.
    const uint PK = BK / 2;
    for (uint e = tid; e < BM * PK; e += wg_size) {
      const uint r = e / PK, kp = e % PK;
      const uint gr = row0 + r, gk = k0 + 2u * kp;
      const bool row_in = gr < p.M;
      const uint at = p.a_off + gr * p.lda + gk;
      tile_a[kp * BM + r] = f16vec2(row_in && gk < p.K ? load_A(at) : 0.0, row_in && gk + 1u < p.K ? load_A(at + 1u) : 0.0);
    }
    for (uint e = tid; e < BN * PK; e += wg_size) {
      const uint c = e / PK, kp = e % PK;
      const uint gc = col0 + c, gk = k0 + 2u * kp;
      const bool col_in = gc < p.N;
      const uint at = p.b_off + gc * p.ldb + gk;
      tile_b[kp * BN + c] = f16vec2(col_in && gk < p.K ? load_B(at) : 0.0, col_in && gk + 1u < p.K ? load_B(at + 1u) : 0.0);
    }
    barrier();

    for (uint kp = 0; kp < PK; ++kp) {
      f16vec2 a[TM];
      f16vec2 b[TN];
      for (uint i = 0; i < TM; ++i) a[i] = tile_a[kp * BM + ty * TM + i];
      for (uint j = 0; j < TN; ++j) b[j] = tile_b[kp * BN + tx * TN + j];
      for (uint i = 0; i < TM; ++i)
        for (uint j = 0; j < TN; ++j) {
          const vec2 prod = vec2(a[i] * b[j]);
          acc[i * TN + j] += prod.x + prod.y;
        }
    }
#else
    // Cooperative loads; consecutive invocations read consecutive k (coalesced).
    for (uint e = tid; e < BM * BK; e += wg_size) {
      const uint r = e / BK, kk = e % BK;
      const uint gr = row0 + r, gk = k0 + kk;
      tile_a[kk * BM + r] = (gr < p.M && gk < p.K) ? load_A(p.a_off + gr * p.lda + gk) : 0.0;
    }
    for (uint e = tid; e < BN * BK; e += wg_size) {
      const uint c = e / BK, kk = e % BK;
      const uint gc = col0 + c, gk = k0 + kk;
      tile_b[kk * BN + c] = (gc < p.N && gk < p.K) ? load_B(p.b_off + gc * p.ldb + gk) : 0.0;
    }
    barrier();

    for (uint kk = 0; kk < BK; ++kk) {
      float a[TM];
      float b[TN];
      for (uint i = 0; i < TM; ++i) a[i] = tile_a[kk * BM + ty * TM + i];
      for (uint j = 0; j < TN; ++j) b[j] = tile_b[kk * BN + tx * TN + j];
      for (uint i = 0; i < TM; ++i)
        for (uint j = 0; j < TN; ++j) acc[i * TN + j] = fma(a[i], b[j], acc[i * TN + j]);
    }
#endif
    barrier();
  }

  const uint c_base = c_slice_offset();
  for (uint i = 0; i < TM; ++i) {
    const uint r = row0 + ty * TM + i;
    if (r >= p.M) break;
    for (uint j = 0; j < TN; ++j) {
      const uint c = col0 + tx * TN + j;
      if (c < p.N) store_c(c_base + r * p.ldc + c, acc[i * TN + j]);
    }
  }
}
