#version 450
// The compressive memory write (memory_update.comp's job) on matrix units:
//   M[kv] += sigma(K)^T W     (W = V for the linear rule, V - retrieval for the delta rule)
//   z[kv] += sum over tokens of sigma(K)
// A workgroup of 4 warps owns a DT = 32 by DVT = 64 block of M (warp w: rows 16 (w / 2), columns
// 32 (w % 2)) and walks the segment's tokens TC = 32 at a time: sigma(K) and W are staged as f16
// (sigma(K)^T is the staged tile read by columns), the sums stay in f32 fragments over the whole
// segment and are added to M once. z adds the unrounded sigma(K) in f32: every invocation stages
// the same dim of every token chunk (WG is a multiple of DT), so it sums that dim as it goes, and
// the workgroups of the first value block add the four partial sums of each dim to z.
// D and Dv are specialization constants; blocks past them are padded with zeros.
//
// MATRIX_UNITS takes the hardware fragments (cooperative matrices); without it they are
// emulated (common/fragments.glsl), for tests on devices without matrix units.
//! variant k32_w32 -DMATRIX_UNITS
//! variant k16_w32 -DMATRIX_UNITS -DK_F16
//! variant k16_w16 -DMATRIX_UNITS -DK_F16 -DW_F16
//! variant k32_w32_emulated
//! variant k16_w32_emulated -DK_F16
//! variant k16_w16_emulated -DK_F16 -DW_F16
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
#include "../common/activations.glsl"
#include "../common/storage.glsl"
#include "../common/fragments.glsl"

layout(local_size_x_id = 0) in;  // WARPS * 32
layout(constant_id = 1) const uint D = 64;   // head dim
layout(constant_id = 2) const uint DV = 64;  // value dim

const uint WARPS = 4u;
const uint WG = WARPS * FRAG_LANES;
const uint DT = 32u;   // rows d of M per workgroup
const uint DVT = 64u;  // value columns of M per workgroup
const uint TC = 32u;   // tokens per chunk
const uint LDK = DT + 8u;   // f16 row strides: multiples of 8 (16-byte rows)
const uint LDW = DVT + 8u;
const uint LDS = DVT + 4u;  // f32 staging of the sums: a multiple of 4

layout(push_constant) uniform Params {
  uint tokens, heads_kv, head_dim, value_dim;
} p;

#ifdef K_F16
DECLARE_F16_INPUT(0, K)
#else
DECLARE_F32_INPUT(0, K)
#endif
#ifdef W_F16
DECLARE_F16_INPUT(1, W)
#else
DECLARE_F32_INPUT(1, W)
#endif
layout(std430, binding = 2) buffer MBuffer { float M[]; };  // [Hkv][D][Dv]
layout(std430, binding = 3) buffer ZBuffer { float z[]; };  // [Hkv][D]

shared float16_t k_tile[TC * LDK];  // sigma(K): row = token, column = dim
shared float16_t w_tile[TC * LDW];
shared float m_tile[DT * LDS];
shared float z_part[WG];

void main() {
  const uint tid = gl_LocalInvocationIndex;
  const uint warp = WARP_ID;
  const uint wr = warp / 2u, wc = warp % 2u;
  const uint c0 = gl_WorkGroupID.x * DVT;
  const uint d0 = gl_WorkGroupID.y * DT;
  const uint kvh = gl_WorkGroupID.z;

  FRAG_C acc[2];
  FRAG_ZERO(acc[0]);
  FRAG_ZERO(acc[1]);
  float z_acc = 0.0;  // dim d0 + tid % DT, the one this invocation stages

  for (uint t0 = 0u; t0 < p.tokens; t0 += TC) {
    for (uint e = tid; e < TC * DT; e += WG) {
      const uint tt = e / DT, i = e % DT, t = t0 + tt, d = d0 + i;
      const float s = (t < p.tokens && d < D) ? elu_plus_one(load_K((t * p.heads_kv + kvh) * D + d)) : 0.0;
      k_tile[tt * LDK + i] = float16_t(s);
      z_acc += s;
    }
    for (uint e = tid; e < TC * DVT; e += WG) {
      const uint tt = e / DVT, c = e % DVT, t = t0 + tt, col = c0 + c;
      w_tile[tt * LDW + c] = float16_t((t < p.tokens && col < DV) ? load_W((t * p.heads_kv + kvh) * DV + col) : 0.0);
    }
    barrier();
    if (warp < WARPS)
      [[unroll]] for (uint ks = 0u; ks < TC / 16u; ++ks) {
        FRAG_A k_frag;  // rows d, columns t: the tile read by columns
        FRAG_LOAD_A(k_frag, k_tile, ks * 16u * LDK + wr * 16u, LDK, true);
        [[unroll]] for (uint j = 0u; j < 2u; ++j) {
          FRAG_B w_frag;
          FRAG_LOAD_B(w_frag, w_tile, ks * 16u * LDW + wc * 32u + j * 16u, LDW, false);
          FRAG_MUL_ADD(acc[j], k_frag, k_tile, w_frag, w_tile);
        }
      }
    barrier();
  }

  if (warp < WARPS) {
    FRAG_STORE(acc[0], m_tile, wr * 16u * LDS + wc * 32u, LDS);
    FRAG_STORE(acc[1], m_tile, wr * 16u * LDS + wc * 32u + 16u, LDS);
  }
  z_part[tid] = z_acc;
  barrier();
  for (uint e = tid; e < DT * DVT; e += WG) {
    const uint i = e / DVT, c = e % DVT, d = d0 + i, col = c0 + c;
    if (d < D && col < DV) M[(kvh * D + d) * DV + col] += m_tile[i * LDS + c];
  }
  if (gl_WorkGroupID.x == 0u && tid < DT && d0 + tid < D) {
    float zs = 0.0;
    for (uint k = tid; k < WG; k += DT) zs += z_part[k];
    z[kvh * D + d0 + tid] += zs;
  }
}
