#version 450
// Combines the partials of attention_decode.comp: for each (row, head), with M the largest
// partial max, A_dot = sum_s exp(m_s - M) o_s / sum_s exp(m_s - M) l_s. Empty partials (l = 0,
// m = kSoftmaxInit) weigh nothing. Output is f32 [q_rows][Hq][Dv].
//
// GATE: the compressive memory's read and gate in the same pass, which decode on a GPU would
// otherwise pay a launch and a barrier for (memory_read.comp's GATE, the same formulas): with
// s = sigma(q) of the head's raw query row, A_mem = s Mem / max(s . z, eps), and the output is
// g A_mem + (1 - g) A_dot, g = sigmoid(beta[h]) (1 - g when gate_local). The workgroup keeps s in
// shared memory; every lane takes value columns.
//! variant plain
//! variant gate_f32 -DGATE
//! variant gate_f16 -DGATE -DX_F16
#extension GL_GOOGLE_include_directive : require
#include "common/activations.glsl"
#include "common/storage.glsl"

layout(local_size_x = 64) in;

layout(push_constant) uniform Params {
  uint heads_q, value_dim, splits;
  uint heads_kv, head_dim;  // GATE
  uint x_token0;            // GATE: the first query row's token in X
  uint gate_local;          // GATE: 1 when g weights A_dot instead of A_mem
} p;

layout(std430, binding = 0) readonly buffer Parts { float parts[]; };
layout(std430, binding = 1) writeonly buffer Out { float out_data[]; };
#ifdef GATE
#ifdef X_F16
DECLARE_F16_INPUT(2, X)
#else
DECLARE_F32_INPUT(2, X)
#endif
layout(std430, binding = 3) readonly buffer MBuffer { float mem[]; };  // [Hkv][D][Dv]
layout(std430, binding = 4) readonly buffer ZBuffer { float z[]; };    // [Hkv][D]
layout(std430, binding = 5) readonly buffer Beta { float beta[]; };    // [Hq]
const uint kMaxHeadDim = 256;
shared float sigma_q[kMaxHeadDim];
#endif

void main() {
  const uint lane = gl_LocalInvocationID.x;
  const uint h = gl_WorkGroupID.y, row = gl_WorkGroupID.z;
  const uint stride = 2 + p.value_dim;
  const uint first = (row * p.heads_q + h) * p.splits * stride;
  float big = kSoftmaxInit;
  for (uint s = 0; s < p.splits; ++s) big = max(big, parts[first + s * stride]);
  float l = 0.0;
  for (uint s = 0; s < p.splits; ++s) l += exp(parts[first + s * stride] - big) * parts[first + s * stride + 1];
#ifdef GATE
  const uint kvh = h / (p.heads_q / p.heads_kv);
  const uint x0 = ((p.x_token0 + row) * p.heads_q + h) * p.head_dim;
  for (uint d = lane; d < p.head_dim; d += gl_WorkGroupSize.x) sigma_q[d] = elu_plus_one(load_X(x0 + d));
  barrier();
  float den = 0.0;  // every lane sums it: D products, a small part of each lane's D x columns
  for (uint d = 0; d < p.head_dim; ++d) den += sigma_q[d] * z[kvh * p.head_dim + d];
  float g = sigmoid(beta[h]);
  if (p.gate_local != 0u) g = 1.0 - g;
#endif
  for (uint c = lane; c < p.value_dim; c += gl_WorkGroupSize.x) {
    float o = 0.0;
    for (uint s = 0; s < p.splits; ++s) o += exp(parts[first + s * stride] - big) * parts[first + s * stride + 2 + c];
    float a = o / l;
#ifdef GATE
    float num = 0.0;
    for (uint d = 0; d < p.head_dim; ++d) num += sigma_q[d] * mem[(kvh * p.head_dim + d) * p.value_dim + c];
    a = g * (num / max(den, kMemoryEps)) + (1.0 - g) * a;
#endif
    out_data[(row * p.heads_q + h) * p.value_dim + c] = a;
  }
}
