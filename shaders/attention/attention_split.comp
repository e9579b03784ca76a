#version 450
// Causal softmax attention of a few query rows (decode) for CPU Vulkan drivers: same interface
// and result as attention_rows.comp. With one query row, attention_rows.comp would leave all
// but one SIMD lane idle; here the lanes of a workgroup split the keys of one (row, head) instead,
// each keeping its own online softmax over blocks of four keys, and the lanes' partial results
// are merged once at the end (the split-KV scheme of flash decoding, inside one workgroup).
// A sliding context (SINKS, WINDOW: common/sliding_window.glsl) walks its sinks first with QS.
//! variant v32
//! variant v16 -DV_F16
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "../common/activations.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint D4 = 32;   // head_dim / 4
layout(constant_id = 2) const uint DV4 = 32;  // value_dim / 4
layout(constant_id = 3) const uint SINKS = 0;
layout(constant_id = 4) const uint WINDOW = 0;
#include "../common/sliding_window.glsl"

layout(push_constant) uniform Params {
  uint q_rows;
  uint heads_q, heads_kv, head_dim, value_dim;
  float scale;
} p;

layout(std430, binding = 0) readonly buffer QBuffer { vec4 q_data[]; };
layout(std430, binding = 1) readonly buffer KBuffer { vec4 k_data[]; };
#ifdef V_F16
layout(std430, binding = 2) readonly buffer VBuffer { uvec2 v_data[]; };
vec4 load_v(uint i) {
  const uvec2 w = v_data[i];
  return vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y));
}
#else
layout(std430, binding = 2) readonly buffer VBuffer { vec4 v_data[]; };
vec4 load_v(uint i) { return v_data[i]; }
#endif
layout(std430, binding = 3) writeonly buffer Out { vec4 out_data[]; };
// The position of query row 0 in the segment (the open segment's length when the piece runs)
// comes from a buffer, not a push constant: one recording serves every position.
layout(std430, binding = 4) readonly buffer Position { uint q_pos0; };
layout(std430, binding = 5) readonly buffer QSBuffer { vec4 qs_data[]; };  // Q rotated for the sinks

const uint kBlock = 4;
const uint WG = gl_WorkGroupSize.x;
shared float part_m[WG], part_l[WG];
shared vec4 part_o[WG * DV4];

void main() {
  const uint lane = gl_LocalInvocationID.x;
  const uint row = gl_WorkGroupID.x, h = gl_WorkGroupID.y;
  const uint kvh = h / (p.heads_q / p.heads_kv);
  const uint pos = q_pos0 + row;  // keys 0..pos
  const uint k_base = kvh * D4, k_stride = p.heads_kv * D4;
  const uint v_base = kvh * DV4, v_stride = p.heads_kv * DV4;

  vec4 q[D4];
  const uint q_base = row * p.heads_q * D4 + h * D4;
  vec4 o[DV4];
  [[unroll]] for (uint c = 0; c < DV4; ++c) o[c] = vec4(0.0);
  float m = kSoftmaxInit, l = 0.0;

  // Pass 0: the sinks with QS; pass 1: the other keys with Q (the only pass without sinks).
  for (uint pass = SINKS > 0u ? 0u : 1u; pass < 2u; ++pass) {
    const bool sinks = pass == 0u;
    [[unroll]] for (uint c = 0; c < D4; ++c) q[c] = (sinks ? qs_data[q_base + c] : q_data[q_base + c]) * p.scale;
    const uint key_begin = sinks ? 0u : window_begin(pos) / kBlock * kBlock;
    const uint key_last = sinks ? min(SINKS - 1u, pos) : pos;
    // Lane L takes the pass's key blocks L, L + WG, ...; keys past its last are clamped for the
    // loads and masked.
    for (uint j0 = key_begin + lane * kBlock; j0 <= key_last; j0 += WG * kBlock) {
      vec4 s = vec4(0.0);
      [[unroll]] for (uint j = 0; j < kBlock; ++j) {
        const uint kb = min(j0 + j, key_last) * k_stride + k_base;
        [[unroll]] for (uint c = 0; c < D4; ++c) s[j] += dot(q[c], k_data[kb + c]);
      }
      bvec4 valid;
      [[unroll]] for (uint j = 0; j < kBlock; ++j) valid[j] = sinks ? attends_sink(j0 + j, pos) : attends_window(j0 + j, pos);
      const vec4 sm = mix(vec4(kSoftmaxInit), s, valid);
      const float m_new = max(m, max(max(sm.x, sm.y), max(sm.z, sm.w)));
      const float alpha = exp(m - m_new);
      const vec4 pr = mix(vec4(0.0), exp(sm - vec4(m_new)), valid);
      l = l * alpha + (pr.x + pr.y + pr.z + pr.w);
      m = m_new;
      [[unroll]] for (uint c = 0; c < DV4; ++c) o[c] *= alpha;
      [[unroll]] for (uint j = 0; j < kBlock; ++j) {
        const uint vb = min(j0 + j, key_last) * v_stride + v_base;
        [[unroll]] for (uint c = 0; c < DV4; ++c) o[c] += pr[j] * load_v(vb + c);
      }
    }
  }

  // Merge: a lane with no keys has l = 0 and m = kSoftmaxInit, so its weight below is 0.
  part_m[lane] = m;
  part_l[lane] = l;
  [[unroll]] for (uint c = 0; c < DV4; ++c) part_o[lane * DV4 + c] = o[c];
  barrier();
  float mx = kSoftmaxInit;
  for (uint i = 0; i < WG; ++i) mx = max(mx, part_m[i]);
  float total = 0.0;
  for (uint i = 0; i < WG; ++i) total += part_l[i] * exp(part_m[i] - mx);
  const uint out_base = row * p.heads_q * DV4 + h * DV4;
  for (uint c = lane; c < DV4; c += WG) {
    vec4 acc = vec4(0.0);
    for (uint i = 0; i < WG; ++i) acc += part_o[i * DV4 + c] * exp(part_m[i] - mx);
    out_data[out_base + c] = acc / total;
  }
}
