// The merge of decode's split-key partials, shared by attention_decode_merge.comp and the decode
// kernel's variant that merges in its last workgroup (attention_decode.comp's MERGE).
//
// For one (row, head), with M the largest partial max: A_dot = sum_s exp(m_s - M) o_s /
// sum_s exp(m_s - M) l_s. Empty partials (l = 0, m = kSoftmaxInit) weigh nothing. With GATE, the
// compressive memory's read and gate in the same pass (memory_read.comp's GATE, the same
// formulas): s = sigma(q) of the head's query row, A_mem = s Mem / max(s . z, eps) (or s . z + eps),
// and the output is g A_mem + (1 - g) A_dot, g = sigmoid(beta[h][column]) (1 - g with kGateLocal).
//
// The kernel declares parts[] ([row][head][split][2 + Dv]: m, l, output), out_data[] (f32
// [row][Hq][Dv]) and, with GATE, merge_query(i) (element i of the raw Q rows), mem[] ([Hkv][D][Dv]),
// z[] ([Hkv][D]), beta[] ([Hq][Dv]) and the shared sigma_q[kMaxHeadDim]. Every invocation of the
// workgroup must call it (a barrier inside, with GATE).
#ifndef INFINI_DECODE_MERGE_GLSL
#define INFINI_DECODE_MERGE_GLSL

struct MergeShape {
  uint heads_q, heads_kv, head_dim, value_dim, splits;
  uint x_token0;      // GATE: the first query row's token in Q
  uint memory_flags;  // GATE: common/activations.glsl's kGateLocal, kHeadModulo, kEpsAdd
  float memory_eps;   // GATE
};

void merge_partials(uint h, uint row, uint lane, uint lanes, MergeShape m) {
  const uint stride = 2 + m.value_dim;
  const uint first = (row * m.heads_q + h) * m.splits * stride;
  float big = kSoftmaxInit;
  for (uint s = 0; s < m.splits; ++s) big = max(big, parts[first + s * stride]);
  float l = 0.0;
  for (uint s = 0; s < m.splits; ++s) l += exp(parts[first + s * stride] - big) * parts[first + s * stride + 1];
#ifdef GATE
  const uint kvh = memory_kv_head(h, m.heads_q, m.heads_kv, m.memory_flags);
  const uint x0 = ((m.x_token0 + row) * m.heads_q + h) * m.head_dim;
  for (uint d = lane; d < m.head_dim; d += lanes) sigma_q[d] = elu_plus_one(merge_query(x0 + d));
  barrier();
  float den = 0.0;  // every lane sums it: D products, a small part of each lane's D x columns
  for (uint d = 0; d < m.head_dim; ++d) den += sigma_q[d] * z[kvh * m.head_dim + d];
  const float inv_den = 1.0 / memory_denominator(den, m.memory_eps, m.memory_flags);
#endif
  for (uint c = lane; c < m.value_dim; c += lanes) {
    float o = 0.0;
    for (uint s = 0; s < m.splits; ++s) o += exp(parts[first + s * stride] - big) * parts[first + s * stride + 2 + c];
    float a = o / l;
#ifdef GATE
    float num = 0.0;
    for (uint d = 0; d < m.head_dim; ++d) num += sigma_q[d] * mem[(kvh * m.head_dim + d) * m.value_dim + c];
    const float g = memory_weight(beta[h * m.value_dim + c], m.memory_flags);
    a = g * (num * inv_den) + (1.0 - g) * a;
#endif
    out_data[(row * m.heads_q + h) * m.value_dim + c] = a;
  }
}

#endif
