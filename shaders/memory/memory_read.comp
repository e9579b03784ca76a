#version 450
// Reads the compressive memory: A_mem = sigma(X) M / max(sigma(X) z, eps) for every token and
// head of X, with M, z the state from before this segment.
//   GATE  (X = Q, per query head, its memory's KV head by memory_flags): out = g A_mem + (1 - g) out,
//         where out holds A_dot and g = sigmoid(beta[h][column]) (or 1 - that with kGateLocal).
//   DELTA (X = K, per KV head): W = V - A_mem, the part of V the memory does not yet hold.
// A workgroup takes TT tokens of one head; sigma(X) rows sit in shared memory and each
// invocation walks one value column of M for all TT tokens.
//! variant gate_f32 -DGATE
//! variant gate_f16 -DGATE -DX_F16
//! variant delta_f32
//! variant delta_f16 -DX_F16
#extension GL_GOOGLE_include_directive : require
#include "../common/activations.glsl"
#include "../common/storage.glsl"

layout(local_size_x = 64) in;
const uint TT = 8;
const uint MAX_HEAD_DIM = 256;

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

shared float sx[TT * MAX_HEAD_DIM];
shared float inv_den[TT];

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint t0 = gl_WorkGroupID.x * TT;
  const uint h = gl_WorkGroupID.y;
#ifdef GATE
  const uint kvh = memory_kv_head(h, p.heads, p.heads_kv, p.memory_flags);
#else
  const uint kvh = h;
#endif
  for (uint e = tid; e < TT * p.head_dim; e += gl_WorkGroupSize.x) {
    const uint tt = e / p.head_dim, d = e % p.head_dim, tok = t0 + tt;
    sx[tt * MAX_HEAD_DIM + d] =
        tok < p.tokens ? elu_plus_one(load_X(((p.x_token0 + tok) * p.heads + h) * p.head_dim + d)) : 0.0;
  }
  barrier();
  if (tid < TT) {
    float den = 0.0;
    for (uint d = 0; d < p.head_dim; ++d) den += sx[tid * MAX_HEAD_DIM + d] * z[kvh * p.head_dim + d];
    inv_den[tid] = 1.0 / memory_denominator(den, p.memory_eps, p.memory_flags);
  }
  barrier();

  for (uint dv = tid; dv < p.value_dim; dv += gl_WorkGroupSize.x) {
    float num[TT];
    for (uint tt = 0; tt < TT; ++tt) num[tt] = 0.0;
    for (uint d = 0; d < p.head_dim; ++d) {
      const float mv = M[(kvh * p.head_dim + d) * p.value_dim + dv];
      for (uint tt = 0; tt < TT; ++tt) num[tt] += sx[tt * MAX_HEAD_DIM + d] * mv;
    }
    for (uint tt = 0; tt < TT; ++tt) {
      const uint tok = t0 + tt;
      if (tok >= p.tokens) break;
      const float a_mem = num[tt] * inv_den[tt];
#ifdef GATE
      const float g = memory_weight(beta[h * p.value_dim + dv], p.memory_flags);
      const uint i = (tok * p.heads + h) * p.value_dim + dv;
      out_data[i] = g * a_mem + (1.0 - g) * out_data[i];
#else
      const uint i = ((p.x_token0 + tok) * p.heads + h) * p.value_dim + dv;
      w_data[(tok * p.heads + h) * p.value_dim + dv] = load_V(i) - a_mem;
#endif
    }
  }
}
