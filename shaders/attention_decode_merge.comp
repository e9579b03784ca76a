#version 450
// Combines the partials of attention_decode.comp: for each (row, head), with M the largest
// partial max, out = sum_s exp(m_s - M) o_s / sum_s exp(m_s - M) l_s. Empty partials (l = 0,
// m = kSoftmaxInit) weigh nothing. Output (A_dot) is f32 [q_rows][Hq][Dv].
#extension GL_GOOGLE_include_directive : require
#include "common/activations.glsl"

layout(local_size_x = 64) in;

layout(push_constant) uniform Params {
  uint heads_q, value_dim, splits;
} p;

layout(std430, binding = 0) readonly buffer Parts { float parts[]; };
layout(std430, binding = 1) writeonly buffer Out { float out_data[]; };

void main() {
  const uint lane = gl_LocalInvocationID.x;
  const uint h = gl_WorkGroupID.y, row = gl_WorkGroupID.z;
  const uint stride = 2 + p.value_dim;
  const uint first = (row * p.heads_q + h) * p.splits * stride;
  float big = kSoftmaxInit;
  for (uint s = 0; s < p.splits; ++s) big = max(big, parts[first + s * stride]);
  float l = 0.0;
  for (uint s = 0; s < p.splits; ++s) l += exp(parts[first + s * stride] - big) * parts[first + s * stride + 1];
  for (uint c = lane; c < p.value_dim; c += gl_WorkGroupSize.x) {
    float o = 0.0;
    for (uint s = 0; s < p.splits; ++s) o += exp(parts[first + s * stride] - big) * parts[first + s * stride + 2 + c];
    out_data[(row * p.heads_q + h) * p.value_dim + c] = o / l;
  }
}
