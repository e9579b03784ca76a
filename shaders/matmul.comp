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
//! variant a32_bq8 -DB_Q8_0
//! variant a32_bq4 -DB_Q4_0
//! variant a32_bq4k -DB_Q4_K
//! variant a32_bq5k -DB_Q5_K
//! variant a32_bq6k -DB_Q6_K
#extension GL_EXT_control_flow_attributes : require
#extension GL_GOOGLE_include_directive : require
#include "common/storage.glsl"

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
} p;

#ifdef A_F16
DECLARE_F16_INPUT(0, A)
#else
DECLARE_F32_INPUT(0, A)
#endif
#include "common/block_weights.glsl"
#if defined(B_BLOCKS)
#elif defined(B_F16)
DECLARE_F16_INPUT(1, B)
#else
DECLARE_F32_INPUT(1, B)
#endif
layout(std430, binding = 2) writeonly buffer CBuffer { float C_data[]; };

// Stored k-major so the inner loop reads consecutive rows/columns of the tile.
shared float tile_a[BK * BM];
shared float tile_b[BK * BN];

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

  for (uint k0 = 0; k0 < p.K; k0 += BK) {
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
    barrier();
  }

  for (uint i = 0; i < TM; ++i) {
    const uint r = row0 + ty * TM + i;
    if (r >= p.M) break;
    for (uint j = 0; j < TN; ++j) {
      const uint c = col0 + tx * TN + j;
      if (c < p.N) C_data[p.c_off + r * p.ldc + c] = acc[i * TN + j];
    }
  }
}
