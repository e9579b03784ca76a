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
// segment cache. Query head h reads KV head h / (Hq / Hkv). Head dims are at most 256. Without
// FRESH, a sliding context (SINKS, WINDOW: common/sliding_window.glsl) scores its sinks with QS.
//
// FRESH: the piece's own RoPE and cache append in the same pass, which decode on a GPU would
// otherwise pay a launch and a barrier for (rope.comp and cache_append.comp, the same results).
// Q, K and V are then the piece's raw rows (the input type); every workgroup rotates its query
// row as it loads it, and reads the piece's own keys and values (positions q_pos0 onwards) from
// the raw rows, rotating the keys, while keys before q_pos0 come from the cache. Workgroup
// (0, 0, 0) alone writes the piece's rows into the caches: rotated K (f32), raw K and raw V. No
// workgroup reads a cache row the pass writes. f16 rows are copied as whole words, so the caller
// takes this variant for f16 only when a row of K and of V holds an even number of values.
//
// MERGE (built with FRESH only, whose Q is the raw rows the gate reads): the merge of the
// partials (common/decode_merge.glsl, GATE with the memory's read and gate) in the same pass
// too, by the last workgroup of each (head, row) to finish: each
// workgroup makes its partial visible, then counts itself in `arrivals`; the one that counts
// last reads every partial and writes the output, and sets the count back to 0 for the next
// replay. That saves the merge's launch and barrier. Its barriers and atomic are device-scope, so
// the caller takes it only where those are valid.
//! variant v32
//! variant v16 -DV_F16
//! variant v32_fresh_merge -DFRESH -DMERGE
//! variant v16_fresh_merge -DV_F16 -DFRESH -DMERGE
//! variant v32_fresh_merge_gate -DFRESH -DMERGE -DGATE
//! variant v16_fresh_merge_gate -DV_F16 -DFRESH -DMERGE -DGATE
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "../common/activations.glsl"
#include "../common/rope.glsl"
#include "../common/storage.glsl"

layout(constant_id = 0) const uint SINKS = 0;  // 0 in the FRESH variants
layout(constant_id = 1) const uint WINDOW = 0;
#include "../common/sliding_window.glsl"

const uint KEYS = 64;           // keys per block: one per invocation
const uint COLS = 256 / KEYS;   // output columns per invocation at most
layout(local_size_x = 64) in;

layout(push_constant) uniform Params {
  uint q_rows, heads_q, heads_kv, head_dim, value_dim;
  uint splits, keys_per_split;  // keys_per_split: a multiple of KEYS
  float scale;
  uint rotary_dim, interleaved;      // FRESH: RoPE
  uint q_token0, k_token0, v_token0; // FRESH: the piece's first row in Q, K and V
  uint memory_flags;                 // MERGE with GATE: common/activations.glsl's kGateLocal, ...
  float memory_eps;                  // MERGE with GATE
} p;

#ifndef FRESH
DECLARE_F32_INPUT(0, Q)
DECLARE_F32_INPUT(5, QS)  // Q rotated for the sinks
DECLARE_F32_INPUT(1, K)
#ifdef V_F16
DECLARE_F16_INPUT(2, V)
#else
DECLARE_F32_INPUT(2, V)
#endif
#endif
// Partials [row][head][split][2 + value_dim]: m, l, output.
#ifdef MERGE
layout(std430, binding = 3) coherent buffer Parts { float parts[]; };
#else
layout(std430, binding = 3) writeonly buffer Parts { float parts[]; };
#endif
// The position of query row 0 in the segment: from a buffer, so one recording serves every position.
layout(std430, binding = 4) readonly buffer Position { uint q_pos0; };

#ifdef FRESH
#ifdef V_F16
DECLARE_F16_INPUT(0, Q)
DECLARE_F16_INPUT(6, Kin)
DECLARE_F16_INPUT(7, Vin)
DECLARE_F16_BUFFER(2, V)
DECLARE_F16_BUFFER(8, Kraw)
const uint kValuesPerWord = 2;
#else
DECLARE_F32_INPUT(0, Q)
DECLARE_F32_INPUT(6, Kin)
DECLARE_F32_INPUT(7, Vin)
DECLARE_F32_BUFFER(2, V)
DECLARE_F32_BUFFER(8, Kraw)
const uint kValuesPerWord = 1;
#endif
DECLARE_F32_BUFFER(1, K)
layout(std430, binding = 5) readonly buffer Table { vec2 cos_sin[]; };  // [position][rotary_dim / 2]
DECLARE_ROPE(Q)
DECLARE_ROPE(Kin)
#endif

#ifdef MERGE
layout(std430, binding = 9) writeonly buffer Out { float out_data[]; };  // f32 [q_rows][Hq][Dv]
layout(std430, binding = 10) coherent buffer Arrivals { uint arrivals[]; };  // [q_rows][Hq], 0 between passes
#ifdef GATE
layout(std430, binding = 11) readonly buffer MBuffer { float mem[]; };  // [Hkv][D][Dv]
layout(std430, binding = 12) readonly buffer ZBuffer { float z[]; };    // [Hkv][D]
layout(std430, binding = 13) readonly buffer Beta { float beta[]; };    // [Hq][Dv]
const uint kMaxHeadDim = 256;
shared float sigma_q[kMaxHeadDim];
float merge_query(uint i) { return load_Q(i); }
#endif
#include "../common/decode_merge.glsl"
shared uint merges;  // 1 in the workgroup that merges
#endif

shared float q_sh[256];
#ifndef FRESH
shared float qs_sh[256];
#endif
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

#ifdef FRESH
  const uint q_head = ((p.q_token0 + row) * p.heads_q + h) * p.head_dim;
  for (uint c = lane; c < p.head_dim; c += KEYS)
    q_sh[c] = rope_Q(q_head, c, pos, p.rotary_dim, p.interleaved) * p.scale;
  const uint cache_end = q_pos0;  // keys from here on are the piece's own
#else
  for (uint c = lane; c < p.head_dim; c += KEYS) q_sh[c] = load_Q((row * p.heads_q + h) * p.head_dim + c) * p.scale;
  if (SINKS > 0u)
    for (uint c = lane; c < p.head_dim; c += KEYS) qs_sh[c] = load_QS((row * p.heads_q + h) * p.head_dim + c) * p.scale;
  const uint cache_end = pos + 1;
#endif
  barrier();

  float m = kSoftmaxInit, l = 0.0;
  float o[COLS];
  [[unroll]] for (uint t = 0; t < COLS; ++t) o[t] = 0.0;
  for (uint key0 = first_key; key0 < first_key + p.keys_per_split && key0 <= pos; key0 += KEYS) {
    const uint key = key0 + lane;
    const bool sink = attends_sink(key, pos);
    const bool valid = sink || attends_window(key, pos);
    float score = kSoftmaxInit;
    if (valid && key < cache_end) {
      const uint kb = (key * p.heads_kv + kvh) * p.head_dim;
      float acc = 0.0;
#ifndef FRESH
      if (sink)
        for (uint c = 0; c < p.head_dim; ++c) acc += qs_sh[c] * load_K(kb + c);
      else
#endif
        for (uint c = 0; c < p.head_dim; ++c) acc += q_sh[c] * load_K(kb + c);
      score = acc;
    }
#ifdef FRESH
    if (valid && key >= cache_end) {
      const uint kb = ((p.k_token0 + key - q_pos0) * p.heads_kv + kvh) * p.head_dim;
      float acc = 0.0;
      for (uint c = 0; c < p.head_dim; ++c) acc += q_sh[c] * rope_Kin(kb, c, key, p.rotary_dim, p.interleaved);
      score = acc;
    }
#endif
    const float m_new = max(m, reduce_max(score, lane));
    const float alpha = exp(m - m_new);
    const float pr = valid ? exp(score - m_new) : 0.0;
    p_sh[lane] = pr;
    l = l * alpha + reduce_sum(pr, lane);  // the reduction's barriers also publish p_sh
    m = m_new;
    const uint keys = min(KEYS, pos + 1 - key0);
    const uint cached = min(keys, cache_end - min(cache_end, key0));  // keys read from the cache
    [[unroll]] for (uint t = 0; t < COLS; ++t) {
      const uint c = lane + t * KEYS;
      if (c < p.value_dim) {
        float acc = o[t] * alpha;
        for (uint j = 0; j < cached; ++j) acc += p_sh[j] * load_V(((key0 + j) * p.heads_kv + kvh) * p.value_dim + c);
#ifdef FRESH
        for (uint j = cached; j < keys; ++j)
          acc += p_sh[j] * load_Vin(((p.v_token0 + key0 + j - q_pos0) * p.heads_kv + kvh) * p.value_dim + c);
#endif
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

#ifdef FRESH
  if (s == 0u && h == 0u && row == 0u) {
    // The piece's rows into the caches, at positions q_pos0 onwards.
    const uint k_values = p.heads_kv * p.head_dim, v_values = p.heads_kv * p.value_dim;
    for (uint e = lane; e < p.q_rows * k_values; e += KEYS) {
      const uint t = e / k_values, within = e % k_values, c = within % p.head_dim;
      K_data[(q_pos0 + t) * k_values + within] =
          rope_Kin((p.k_token0 + t) * k_values + within - c, c, q_pos0 + t, p.rotary_dim, p.interleaved);
    }
    const uint k_words = k_values / kValuesPerWord, v_words = v_values / kValuesPerWord;
    for (uint w = lane; w < p.q_rows * k_words; w += KEYS)
      Kraw_data[q_pos0 * k_words + w] = Kin_data[p.k_token0 * k_words + w];
    for (uint w = lane; w < p.q_rows * v_words; w += KEYS)
      V_data[q_pos0 * v_words + w] = Vin_data[p.v_token0 * v_words + w];
  }
#endif

#ifdef MERGE
  // A last-workgroup reduction (device-scope barriers: the caller takes this variant only where
  // they are valid): every lane's partial writes (coherent) are complete before lane 0 counts
  // the workgroup in; the workgroup that completes the count then reads every partial.
  memoryBarrierBuffer();
  barrier();
  const uint slot = row * p.heads_q + h;
  if (lane == 0u) merges = atomicAdd(arrivals[slot], 1u) == p.splits - 1u ? 1u : 0u;
  barrier();
  if (merges == 0u) return;
  memoryBarrierBuffer();
  const MergeShape shape = {p.heads_q, p.heads_kv, p.head_dim, p.value_dim, p.splits, p.q_token0, p.memory_flags, p.memory_eps};
  merge_partials(h, row, lane, KEYS, shape);
  if (lane == 0u) arrivals[slot] = 0u;
#endif
}
