#include "reference/plain_llama.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "infini/error.hpp"
#include "infini/rope_config.hpp"
#include "model/llama_weights_check.hpp"
#include "model/tensor_values.hpp"

namespace infini::model {
namespace {

using Vec = std::vector<double>;

size_t sz(int64_t x) { return static_cast<size_t>(x); }

// nn.Linear without bias: x [n][in] @ W^T, W widened whole as [out][in].
Vec linear(const Vec& x, const TensorView& weight) {
  const Vec W = widen_all(weight);
  const size_t in = sz(weight.shape[0]), out = sz(weight.shape[1]), n = x.size() / in;
  Vec y(n * out, 0.0);
  for (size_t t = 0; t < n; ++t)
    for (size_t o = 0; o < out; ++o)
      for (size_t i = 0; i < in; ++i) y[t * out + o] += x[t * in + i] * W[o * in + i];
  return y;
}

// LlamaRMSNorm: weight * x * rsqrt(mean(x^2) + eps).
Vec rms_norm(const Vec& x, const TensorView& weight, double eps) {
  const Vec w = widen_all(weight);
  const size_t e = w.size(), n = x.size() / e;
  Vec y(x.size());
  for (size_t t = 0; t < n; ++t) {
    double variance = 0;
    for (size_t i = 0; i < e; ++i) variance += x[t * e + i] * x[t * e + i] / static_cast<double>(e);
    const double r = 1.0 / std::sqrt(variance + eps);
    for (size_t i = 0; i < e; ++i) y[t * e + i] = w[i] * (x[t * e + i] * r);
  }
  return y;
}

// cos and sin tables [T][D] in the Hugging Face form: each rotated dim carries its pair's angle
// (cat(freqs, freqs) for neox, repeat_interleave(freqs, 2) for interleaved); pass-through dims get
// cos 1, sin 0.
struct RopeTables {
  Vec cos, sin;
  int rotary_dim = 0;
  rope::RopeLayout layout = rope::RopeLayout::Neox;
};

RopeTables rope_tables(const rope::RopeConfig& config, int64_t head_dim, int64_t T) {
  const rope::RopeFrequencies f = rope::rope_frequencies(config, static_cast<int>(head_dim), T);
  const size_t D = sz(head_dim), d = sz(f.rotary_dim), half = d / 2;
  RopeTables r{Vec(sz(T) * D, 1.0), Vec(sz(T) * D, 0.0), f.rotary_dim, config.layout};
  for (size_t p = 0; p < sz(T); ++p)
    for (size_t i = 0; i < d; ++i) {
      const size_t pair = config.layout == rope::RopeLayout::Neox ? i % half : i / 2;
      const double angle = static_cast<double>(p) * f.inv_freq[pair];
      r.cos[p * D + i] = std::cos(angle) * f.attention_factor;
      r.sin[p * D + i] = std::sin(angle) * f.attention_factor;
    }
  return r;
}

// x * cos + rotate(x) * sin on every head of x [T][heads][D]. rotate_half for neox
// (-x2, x1); rotate_every_two for interleaved ((a, b) -> (-b, a)); zero on pass-through dims.
void apply_rotary(Vec& x, int64_t heads, int64_t head_dim, const RopeTables& r) {
  const size_t D = sz(head_dim), H = sz(heads), T = x.size() / (H * D), d = sz(r.rotary_dim), half = d / 2;
  Vec rot(D);
  for (size_t t = 0; t < T; ++t)
    for (size_t h = 0; h < H; ++h) {
      double* v = &x[(t * H + h) * D];
      std::fill(rot.begin(), rot.end(), 0.0);
      for (size_t i = 0; i < d; ++i) {
        if (r.layout == rope::RopeLayout::Neox)
          rot[i] = i < half ? -v[i + half] : v[i - half];
        else
          rot[i] = i % 2 == 0 ? -v[i + 1] : v[i - 1];
      }
      for (size_t i = 0; i < D; ++i) v[i] = v[i] * r.cos[t * D + i] + rot[i] * r.sin[t * D + i];
    }
}

// softmax(Q K^T / sqrt(D) masked to j <= i) V per query head, the score matrix written out whole
// with -inf above the diagonal; query head h reads KV head h / (Hq / Hkv) (repeat_kv).
Vec causal_self_attention(const Vec& q, const Vec& k, const Vec& v, int64_t T, int64_t Hq, int64_t Hkv, int64_t D) {
  const size_t n = sz(T), hq = sz(Hq), hkv = sz(Hkv), d = sz(D), groups = hq / hkv;
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  Vec out(n * hq * d, 0.0), scores(n * n);
  for (size_t h = 0; h < hq; ++h) {
    const size_t g = h / groups;
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < n; ++j) {
        double dot = 0;
        for (size_t c = 0; c < d; ++c) dot += q[(i * hq + h) * d + c] * k[(j * hkv + g) * d + c];
        scores[i * n + j] = j <= i ? dot * scale : -std::numeric_limits<double>::infinity();
      }
    for (size_t i = 0; i < n; ++i) {
      double* row = &scores[i * n];
      const double mx = *std::max_element(row, row + n);
      double sum = 0;
      for (size_t j = 0; j < n; ++j) sum += (row[j] = std::exp(row[j] - mx));
      for (size_t j = 0; j < n; ++j)
        for (size_t c = 0; c < d; ++c) out[(i * hq + h) * d + c] += row[j] / sum * v[(j * hkv + g) * d + c];
    }
  }
  return out;
}

}  // namespace

std::vector<double> plain_llama_logits(const LlamaWeights& weights, std::span<const int32_t> tokens) {
  check_llama_weights(weights);
  const LlamaConfig& c = weights.config;
  for (const int32_t id : tokens)
    if (id < 0 || id >= c.vocab)
      throw Error("token id " + std::to_string(id) + " is out of range for vocab size " + std::to_string(c.vocab));
  const int64_t T = static_cast<int64_t>(tokens.size());
  if (T == 0) return {};

  // Embedding lookup: row `id` of token_embd, widened alone (the table can be large).
  const size_t E = sz(c.embd);
  Vec hidden(sz(T) * E);
  for (size_t t = 0; t < sz(T); ++t) widen(weights.token_embd, int64_t{tokens[t]} * c.embd, c.embd, &hidden[t * E]);

  const RopeTables rope = rope_tables(c.rope, c.head_dim, T);
  for (const LlamaLayerWeights& layer : weights.layers) {
    const Vec normed = rms_norm(hidden, layer.attn_norm, c.rms_eps);
    Vec q = linear(normed, layer.wq), k = linear(normed, layer.wk), v = linear(normed, layer.wv);
    add_bias_rows(q, layer.bq);
    add_bias_rows(k, layer.bk);
    add_bias_rows(v, layer.bv);
    if (layer.q_norm) q = rms_norm(q, *layer.q_norm, c.rms_eps);  // each head's row, before RoPE
    if (layer.k_norm) k = rms_norm(k, *layer.k_norm, c.rms_eps);
    apply_rotary(q, c.heads, c.head_dim, rope);
    apply_rotary(k, c.heads_kv, c.head_dim, rope);
    const Vec attn = linear(causal_self_attention(q, k, v, T, c.heads, c.heads_kv, c.head_dim), layer.wo);
    for (size_t i = 0; i < hidden.size(); ++i) hidden[i] += attn[i];

    const Vec post = rms_norm(hidden, layer.ffn_norm, c.rms_eps);
    const Vec gate = linear(post, layer.ffn_gate), up = linear(post, layer.ffn_up);
    Vec act(gate.size());
    for (size_t i = 0; i < act.size(); ++i) act[i] = gate[i] / (1.0 + std::exp(-gate[i])) * up[i];  // silu(g) * u
    const Vec mlp = linear(act, layer.ffn_down);
    for (size_t i = 0; i < hidden.size(); ++i) hidden[i] += mlp[i];
  }
  return linear(rms_norm(hidden, weights.output_norm, c.rms_eps), weights.output);
}

}  // namespace infini::model
