#version 450
// Causal attention of one or two query rows (decode) on GPUs, split over the keys across
// workgroups (flash decoding): workgroup (s, h, row) takes keys s * keys_per_split onwards, up to
// the row's position, in blocks of KEYS (one key per invocation, an online softmax across the
// blocks), and writes its partial result: the running max m, the sum l of exp(score - m) and the
// unnormalised output. attention_decode_merge.comp combines the partials. The grid covers the
// whole segment whatever the position, so one recording serves every position; splits past the
// position write an empty partial (m = kSoftmaxInit, l = 0, output 0).
//
// Queries are rows of Q (rotated, f32) at segment positions q_pos0 + row; keys and values are the
// segment cache. Query head h reads KV head h / (Hq / Hkv). Head dims are at most 256.
//! variant v32
//! variant v16 -DV_F16
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common/activations.glsl"
#include "common/storage.glsl"

const uint KEYS = 64;           // keys per block: one per invocation
const uint COLS = 256 / KEYS;   // output columns per invocation at most
layout(local_size_x = 64) in;

layout(push_constant) uniform Params {
  uint q_rows, heads_q, heads_kv, head_dim, value_dim;
  uint splits, keys_per_split;  // keys_per_split: a multiple of KEYS
  float scale;
} p;

DECLARE_F32_INPUT(0, Q)
DECLARE_F32_INPUT(1, K)
#ifdef V_F16
DECLARE_F16_INPUT(2, V)
#else
DECLARE_F32_INPUT(2, V)
#endif
// Partials [row][head][split][2 + value_dim]: m, l, output.
layout(std430, binding = 3) writeonly buffer Parts { float parts[]; };
// The position of query row 0 in the segment: from a buffer, so one recording serves every position.
layout(std430, binding = 4) readonly buffer Position { uint q_pos0; };

shared float q_sh[256];
shared float p_sh[KEYS];
shared float red[KEYS];

float reduce_max(float v, uint lane) {
  red[lane] = v;
  barrier();
  [[unroll]] for (uint w = KEYS / 2; w > 0; w >>= 1) {
    if (lane < w) red[lane] = max(red[lane], red[lane + w]);
    barrier();
  }
  const float r = red[0];
  barrier();
  return r;
}

float reduce_sum(float v, uint lane) {
  red[lane] = v;
  barrier();
  [[unroll]] for (uint w = KEYS / 2; w > 0; w >>= 1) {
    if (lane < w) red[lane] += red[lane + w];
    barrier();
  }
  const float r = red[0];
  barrier();
  return r;
}

void main() {
  const uint lane = gl_LocalInvocationID.x;
  const uint s = gl_WorkGroupID.x, h = gl_WorkGroupID.y, row = gl_WorkGroupID.z;
  const uint kvh = h / (p.heads_q / p.heads_kv);
  const uint pos = q_pos0 + row;  // keys 0..pos
  const uint first_key = s * p.keys_per_split;

  for (uint c = lane; c < p.head_dim; c += KEYS) q_sh[c] = load_Q((row * p.heads_q + h) * p.head_dim + c) * p.scale;
  barrier();

  float m = kSoftmaxInit, l = 0.0;
  float o[COLS];
  [[unroll]] for (uint t = 0; t < COLS; ++t) o[t] = 0.0;
  for (uint key0 = first_key; key0 < first_key + p.keys_per_split && key0 <= pos; key0 += KEYS) {
    const uint key = key0 + lane;
    const bool valid = key <= pos;
    float score = kSoftmaxInit;
    if (valid) {
      const uint kb = (key * p.heads_kv + kvh) * p.head_dim;
      float acc = 0.0;
      for (uint c = 0; c < p.head_dim; ++c) acc += q_sh[c] * load_K(kb + c);
      score = acc;
    }
    const float m_new = max(m, reduce_max(score, lane));
    const float alpha = exp(m - m_new);
    const float pr = valid ? exp(score - m_new) : 0.0;
    p_sh[lane] = pr;
    l = l * alpha + reduce_sum(pr, lane);  // the reduction's barriers also publish p_sh
    m = m_new;
    const uint keys = min(KEYS, pos + 1 - key0);
    [[unroll]] for (uint t = 0; t < COLS; ++t) {
      const uint c = lane + t * KEYS;
      if (c < p.value_dim) {
        float acc = o[t] * alpha;
        for (uint j = 0; j < keys; ++j) acc += p_sh[j] * load_V(((key0 + j) * p.heads_kv + kvh) * p.value_dim + c);
        o[t] = acc;
      }
    }
    barrier();  // p_sh is rewritten by the next block
  }

  const uint base = ((row * p.heads_q + h) * p.splits + s) * (2 + p.value_dim);
  if (lane == 0) {
    parts[base] = m;
    parts[base + 1] = l;
  }
  [[unroll]] for (uint t = 0; t < COLS; ++t) {
    const uint c = lane + t * KEYS;
    if (c < p.value_dim) parts[base + 2 + c] = o[t];
  }
}
