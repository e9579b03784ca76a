#version 450
// The compressive memory read (memory_read.comp's job) on matrix units: A_mem = sigma(X) M /
// max(sigma(X) z, eps) for BR = 64 tokens of one head per workgroup of 4 warps, 16 tokens each.
//
// M and z grow with every segment written, so they are not fed to f16 fragments as they are.
// Since sigma > 0, |M[d][c]| <= z[d] max|W|, and the product is taken as
//   A_mem[c] = sum_d p_d Mn[d][c],   p_d = sigma(x_d) z_d / max(sigma(x) . z, eps),   Mn = M[d] / z_d
// where p lies in [0, 1] (a row sums to 1, like a softmax row) and Mn is bounded by the values
// written: both stay well inside f16 after any number of segments. A row d never written has
// z_d = 0 and M[d] = 0; its Mn is 0. The denominator and p are computed in f32 from X.
//
// p is staged once, Mn DVC = 32 value columns at a time; each pass's product goes through shared
// memory to the epilogue (two invocations per token). (p's fragments are loaded per pass rather than
// kept in an array: as an array they made lavapipe's compile of the emulated variant 20x slower.)
//   GATE  (X = Q, per query head, KV head h / (Hq/Hkv)): out = g A_mem + (1 - g) out, where out
//         holds A_dot and g = sigmoid(beta[h]) (or 1 - that with the opposite gate sign).
//   DELTA (X = K, per KV head): W = V - A_mem.
// D (a multiple of 16) and Dv (of 32) are specialization constants; the host checks both.
//
// MATRIX_UNITS takes the hardware fragments (cooperative matrices); without it they are
// emulated (common/fragments.glsl), for tests on devices without matrix units.
//! variant gate_f32 -DMATRIX_UNITS -DGATE
//! variant gate_f16 -DMATRIX_UNITS -DGATE -DX_F16
//! variant delta_f32 -DMATRIX_UNITS
//! variant delta_f16 -DMATRIX_UNITS -DX_F16
//! variant gate_f32_emulated -DGATE
//! variant gate_f16_emulated -DGATE -DX_F16
//! variant delta_f32_emulated
//! variant delta_f16_emulated -DX_F16
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
layout(constant_id = 1) const uint D = 64;   // head dim of X
layout(constant_id = 2) const uint DV = 64;  // value dim

const uint WARPS = 4u;
const uint BR = WARPS * 16u;  // tokens per workgroup
const uint DVC = 32u;         // value columns per pass
const uint WG = WARPS * FRAG_LANES;
const uint HALF = DVC / 2u;   // columns per invocation and pass: two invocations per token
const uint LDP = D + 8u;      // f16 row strides: multiples of 8 (16-byte rows), off the banks' period
const uint LDM = DVC + 8u;
const uint LDA = DVC + 4u;    // f32 product staging: a multiple of 4

layout(push_constant) uniform Params {
  uint tokens, heads, heads_kv, head_dim, value_dim;
  uint x_token0;      // first token of X (and V) read
  uint memory_flags;  // common/activations.glsl: kGateLocal, kHeadModulo, kEpsAdd
  float memory_eps;
} p;

#ifdef X_F16
DECLARE_F16_INPUT(0, X)
#else
DECLARE_F32_INPUT(0, X)
#endif
layout(std430, binding = 1) readonly buffer MBuffer { float M[]; };  // [Hkv][D][Dv]
layout(std430, binding = 2) readonly buffer ZBuffer { float z[]; };  // [Hkv][D]
#ifdef GATE
layout(std430, binding = 3) readonly buffer Beta { float beta[]; };  // [Hq][Dv]
layout(std430, binding = 4) buffer Out { float out_data[]; };        // [tokens][Hq][Dv], holds A_dot
#else
#ifdef X_F16
DECLARE_F16_INPUT(3, V)
#else
DECLARE_F32_INPUT(3, V)
#endif
layout(std430, binding = 4) writeonly buffer W { float w_data[]; };  // [tokens][Hkv][Dv]
#endif

shared float16_t p_tile[BR * LDP];
shared float16_t mn_tile[D * LDM];
shared float a_tile[BR * LDA];
shared float den_part[2u * BR];

void main() {
  const uint tid = gl_LocalInvocationIndex;
  const uint warp = WARP_ID;
  const uint r = tid / 2u, half_ = tid % 2u;  // the token this invocation finishes, and its half of the columns
  const uint t0 = gl_WorkGroupID.x * BR;
  const uint h = gl_WorkGroupID.y;
#ifdef GATE
  const uint kvh = memory_kv_head(h, p.heads, p.heads_kv, p.memory_flags);
#else
  const uint kvh = h;
#endif
  const uint tok = t0 + r;

  // sigma(x) . z, each half of the dims by one of the token's two invocations.
  float den = 0.0;
  if (tok < p.tokens) {
    const uint x0 = ((p.x_token0 + tok) * p.heads + h) * D;
    for (uint d = half_ * (D / 2u); d < (half_ + 1u) * (D / 2u); ++d) den += elu_plus_one(load_X(x0 + d)) * z[kvh * D + d];
  }
  den_part[half_ * BR + r] = den;
  barrier();
  for (uint e = tid; e < BR * D; e += WG) {
    const uint rr = e / D, d = e % D, t = t0 + rr;
    float pv = 0.0;
    if (t < p.tokens)
      pv = elu_plus_one(load_X(((p.x_token0 + t) * p.heads + h) * D + d)) * z[kvh * D + d] /
           memory_denominator(den_part[rr] + den_part[BR + rr], p.memory_eps, p.memory_flags);
    p_tile[rr * LDP + d] = float16_t(pv);
  }
  barrier();

  for (uint c0 = 0u; c0 < DV; c0 += DVC) {
    for (uint e = tid; e < D * DVC; e += WG) {
      const uint d = e / DVC, c = e % DVC;
      const float zd = z[kvh * D + d];
      mn_tile[d * LDM + c] = float16_t(zd > 0.0 ? M[(kvh * D + d) * DV + c0 + c] / zd : 0.0);
    }
    barrier();
    if (warp < WARPS) {
      FRAG_C acc[DVC / 16u];
      FRAG_UNROLL for (uint j = 0u; j < DVC / 16u; ++j) FRAG_ZERO(acc[j]);
      FRAG_UNROLL for (uint i = 0u; i < D / 16u; ++i) {
        FRAG_A p_frag;
        FRAG_LOAD_A(p_frag, p_tile, warp * 16u * LDP + i * 16u, LDP, false);
        FRAG_UNROLL for (uint j = 0u; j < DVC / 16u; ++j) {
          FRAG_B m_frag;
          FRAG_LOAD_B(m_frag, mn_tile, i * 16u * LDM + j * 16u, LDM, false);
          FRAG_MUL_ADD(acc[j], p_frag, p_tile, m_frag, mn_tile);
        }
      }
      FRAG_UNROLL for (uint j = 0u; j < DVC / 16u; ++j) FRAG_STORE(acc[j], a_tile, warp * 16u * LDA + j * 16u, LDA);
    }
    barrier();  // the next pass stages Mn only after every warp's product, and stores only after this epilogue
    if (tok < p.tokens)
      [[unroll]] for (uint c = 0u; c < HALF; ++c) {
        const uint col = c0 + half_ * HALF + c;
        const float a_mem = a_tile[r * LDA + half_ * HALF + c];
#ifdef GATE
        const uint i = (tok * p.heads + h) * DV + col;
        const float g = memory_weight(beta[h * DV + col], p.memory_flags);
        out_data[i] = g * a_mem + (1.0 - g) * out_data[i];
#else
        w_data[(tok * p.heads + h) * DV + col] = load_V(((p.x_token0 + tok) * p.heads + h) * DV + col) - a_mem;
#endif
      }
  }
}
