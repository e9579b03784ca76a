#version 450
// memory_update.comp for CPU drivers (lavapipe): no shared memory, no barriers. An invocation owns
// four value columns of one row d of M (one KV head) and walks the segment's tokens:
//   M[kv][d][4c..4c+3] += sum over t of sigma(K[t][kv][d]) W[t][kv][4c..4c+3]
//   z[kv][d]           += sum over t of sigma(K[t][kv][d])   (invocations of column block 0)
// The lanes of a workgroup are consecutive rows d, so the W they load is the same for all.
//! variant k32_w32
//! variant k16_w32 -DK_F16
//! variant k16_w16 -DK_F16 -DW_F16
#extension GL_GOOGLE_include_directive : require
#include "../common/activations.glsl"
#include "../common/storage.glsl"
layout(local_size_x_id = 0) in;  // lanes: rows d
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
layout(std430, binding = 2) buffer MBuffer { vec4 M4[]; };  // [Hkv][D][Dv / 4]
layout(std430, binding = 3) buffer ZBuffer { float z[]; };  // [Hkv][D]
void main() {
  const uint d = gl_GlobalInvocationID.x;
  const uint c = gl_WorkGroupID.y;
  const uint kvh = gl_WorkGroupID.z;
  if (d >= p.head_dim) return;
  vec4 acc = vec4(0.0);
  float z_acc = 0.0;
  for (uint t = 0; t < p.tokens; ++t) {
    const float s = elu_plus_one(load_K((t * p.heads_kv + kvh) * p.head_dim + d));
    const uint w0 = (t * p.heads_kv + kvh) * p.value_dim + 4 * c;
    acc += s * vec4(load_W(w0), load_W(w0 + 1), load_W(w0 + 2), load_W(w0 + 3));
    z_acc += s;
  }
  M4[(kvh * p.head_dim + d) * (p.value_dim / 4) + c] += acc;
  if (c == 0u) z[kvh * p.head_dim + d] += z_acc;
}
