#version 450
// memory_read.comp for CPU drivers (lavapipe): the same reads with no shared memory and no
// barriers, which llvmpipe runs as loops over the SIMD lanes. An invocation takes one token of one
// head and four value columns: it recomputes sigma(x) and the denominator itself (D extra
// products, cheap next to the D x 4 of the numerator), and the M and z it loads are the same for
// every lane of the workgroup.
//   GATE  (X = Q): out = g A_mem + (1 - g) out, out holding A_dot, g = sigmoid(beta[h][column]) (or 1 - g);
//   DELTA (X = K): W = V - A_mem.
//! variant gate_f32 -DGATE
//! variant gate_f16 -DGATE -DX_F16
//! variant delta_f32
//! variant delta_f16 -DX_F16
#extension GL_GOOGLE_include_directive : require
#include "../common/activations.glsl"
#include "../common/storage.glsl"
layout(local_size_x_id = 0) in;  // lanes: tokens
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
layout(std430, binding = 1) readonly buffer MBuffer { vec4 M4[]; };  // [Hkv][D][Dv / 4]
layout(std430, binding = 2) readonly buffer ZBuffer { float z[]; };  // [Hkv][D]
#ifdef GATE
layout(std430, binding = 3) readonly buffer Beta { vec4 beta4[]; };  // [Hq][Dv / 4]
layout(std430, binding = 4) buffer Out { vec4 out4[]; };             // [tokens][Hq][Dv / 4], holds A_dot
#else
#ifdef X_F16
DECLARE_F16_INPUT(3, V)
#else
DECLARE_F32_INPUT(3, V)
#endif
layout(std430, binding = 4) writeonly buffer W { vec4 w4[]; };  // [tokens][Hkv][Dv / 4]
#endif
void main() {
  const uint tok = gl_GlobalInvocationID.x;
  const uint h = gl_WorkGroupID.y;
  const uint c = gl_WorkGroupID.z;  // value columns 4c .. 4c+3
  if (tok >= p.tokens) return;
#ifdef GATE
  const uint kvh = memory_kv_head(h, p.heads, p.heads_kv, p.memory_flags);
#else
  const uint kvh = h;
#endif
  const uint dv4 = p.value_dim / 4;
  const uint x0 = ((p.x_token0 + tok) * p.heads + h) * p.head_dim;
  float den = 0.0;
  vec4 num = vec4(0.0);
  for (uint d = 0; d < p.head_dim; ++d) {
    const float s = elu_plus_one(load_X(x0 + d));
    den += s * z[kvh * p.head_dim + d];
    num += s * M4[(kvh * p.head_dim + d) * dv4 + c];
  }
  const vec4 a_mem = num / memory_denominator(den, p.memory_eps, p.memory_flags);
#ifdef GATE
  const vec4 b = beta4[h * dv4 + c];
  const vec4 g = vec4(memory_weight(b.x, p.memory_flags), memory_weight(b.y, p.memory_flags),
                      memory_weight(b.z, p.memory_flags), memory_weight(b.w, p.memory_flags));
  const uint i = (tok * p.heads + h) * dv4 + c;
  out4[i] = g * a_mem + (1.0 - g) * out4[i];
#else
  const uint v0 = ((p.x_token0 + tok) * p.heads + h) * p.value_dim + 4 * c;
  const vec4 v = vec4(load_V(v0), load_V(v0 + 1), load_V(v0 + 2), load_V(v0 + 3));
  w4[(tok * p.heads + h) * dv4 + c] = v - a_mem;
#endif
}
