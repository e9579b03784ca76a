#version 450
// Causal softmax attention inside one segment for CPU Vulkan drivers (llvmpipe, SwiftShader):
// same interface and result as attention_segment.comp, different shape of work.
//
// CPU drivers run a workgroup's invocations as the lanes of SIMD registers, and turn every
// buffer or shared-memory load into a loop over the lanes. What is cheap there is arithmetic on
// registers, so this kernel uses no shared memory and no barriers, and reuses every loaded value
// many times: an invocation owns R query rows (rows lane, lane + WG, ...), keeps their scaled Q
// and their output accumulators in registers, and walks the keys four at a time. Each key's
// vec4 of K or V feeds R rows; the four scores of a block share one online-softmax rescale.
// Every loop has a constant trip count after specialization and is unrolled, so the register
// arrays are never indexed dynamically.
//
// Queries are rows 0..q_rows-1 of Q (rotated, f32) at segment positions q_pos0 + row; keys and
// values are the segment cache, positions 0..q_pos0 + q_rows - 1. D and Dv are multiples of 4.
// A sliding context (SINKS, WINDOW: common/sliding_window.glsl) walks its sinks first with QS in
// the registers, then the window with Q.
//! variant v32
//! variant v16 -DV_F16
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "../common/activations.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint R = 4;     // query rows per invocation
layout(constant_id = 2) const uint D4 = 32;   // head_dim / 4
layout(constant_id = 3) const uint DV4 = 32;  // value_dim / 4
layout(constant_id = 4) const uint SINKS = 0;
layout(constant_id = 5) const uint WINDOW = 0;
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

const uint kBlock = 4;  // keys per online-softmax step (one vec4 of scores per row)

void main() {
  const uint wg = gl_WorkGroupSize.x;
  const uint lane = gl_LocalInvocationID.x;
  const uint h = gl_WorkGroupID.y;
  const uint kvh = h / (p.heads_q / p.heads_kv);
  const uint row0 = gl_WorkGroupID.x * wg * R;
  const uint key_end = q_pos0 + min(row0 + wg * R, p.q_rows);  // keys the workgroup needs
  const uint k_base = kvh * D4, k_stride = p.heads_kv * D4;
  const uint v_base = kvh * DV4, v_stride = p.heads_kv * DV4;

  vec4 q[R][D4];
  vec4 o[R][DV4];
  float m[R], l[R];
  uint pos[R];
  [[unroll]] for (uint r = 0; r < R; ++r) {
    pos[r] = q_pos0 + row0 + r * wg + lane;
    [[unroll]] for (uint c = 0; c < DV4; ++c) o[r][c] = vec4(0.0);
    m[r] = kSoftmaxInit;
    l[r] = 0.0;
  }

  // Pass 0: the sinks with QS; pass 1: the other keys with Q (the only pass without sinks).
  for (uint pass = SINKS > 0u ? 0u : 1u; pass < 2u; ++pass) {
    const bool sinks = pass == 0u;
    [[unroll]] for (uint r = 0; r < R; ++r) {
      // Rows past the end read the last row (loads stay in bounds) and are not stored.
      const uint base = min(row0 + r * wg + lane, p.q_rows - 1) * p.heads_q * D4 + h * D4;
      [[unroll]] for (uint c = 0; c < D4; ++c) q[r][c] = (sinks ? qs_data[base + c] : q_data[base + c]) * p.scale;
    }
    const uint key_begin = sinks ? 0u : window_begin(q_pos0 + row0) / kBlock * kBlock;
    const uint key_stop = sinks ? min(SINKS, key_end) : key_end;  // one past the pass's last key
    for (uint j0 = key_begin; j0 < key_stop; j0 += kBlock) {
      // Scores of keys j0..j0+3 for every row; keys past the pass's end repeat its last key, masked below.
      vec4 s[R];
      [[unroll]] for (uint r = 0; r < R; ++r) s[r] = vec4(0.0);
      [[unroll]] for (uint j = 0; j < kBlock; ++j) {
        const uint kb = min(j0 + j, key_stop - 1) * k_stride + k_base;
        [[unroll]] for (uint c = 0; c < D4; ++c) {
          const vec4 kc = k_data[kb + c];
          [[unroll]] for (uint r = 0; r < R; ++r) s[r][j] += dot(q[r][c], kc);
        }
      }
      vec4 pr[R];
      [[unroll]] for (uint r = 0; r < R; ++r) {
        bvec4 valid;
        [[unroll]] for (uint j = 0; j < kBlock; ++j)
          valid[j] = sinks ? attends_sink(j0 + j, pos[r]) : attends_window(j0 + j, pos[r]);
        const vec4 sm = mix(vec4(kSoftmaxInit), s[r], valid);
        const float m_new = max(m[r], max(max(sm.x, sm.y), max(sm.z, sm.w)));
        const float alpha = exp(m[r] - m_new);
        pr[r] = mix(vec4(0.0), exp(sm - vec4(m_new)), valid);
        l[r] = l[r] * alpha + (pr[r].x + pr[r].y + pr[r].z + pr[r].w);
        m[r] = m_new;
        [[unroll]] for (uint c = 0; c < DV4; ++c) o[r][c] *= alpha;
      }
      [[unroll]] for (uint j = 0; j < kBlock; ++j) {
        const uint vb = min(j0 + j, key_stop - 1) * v_stride + v_base;
        [[unroll]] for (uint c = 0; c < DV4; ++c) {
          const vec4 vc = load_v(vb + c);
          [[unroll]] for (uint r = 0; r < R; ++r) o[r][c] += pr[r][j] * vc;
        }
      }
    }
  }

  [[unroll]] for (uint r = 0; r < R; ++r) {
    const uint row = row0 + r * wg + lane;
    if (row >= p.q_rows) continue;
    const float inv_l = 1.0 / l[r];
    const uint base = row * p.heads_q * DV4 + h * DV4;
    [[unroll]] for (uint c = 0; c < DV4; ++c) out_data[base + c] = o[r][c] * inv_l;
  }
}
