#include "reference/plain_llama.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "infini/error.hpp"
#include "infini/rope_config.hpp"
#include "model/llama_weights_check.hpp"
#include "model/tensor_values.hpp"
#include "reference/block_steps.hpp"

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

// One head's vector v [D] rotated at table row p: v * cos + rotate(v) * sin, rotate_half for neox
// (-x2, x1), rotate_every_two for interleaved ((a, b) -> (-b, a)), zero on pass-through dims.
void rotate_at(double* v, size_t D, size_t p, const RopeTables& r) {
  const size_t d = sz(r.rotary_dim), half = d / 2;
  Vec rot(D, 0.0);
  for (size_t i = 0; i < d; ++i) {
    if (r.layout == rope::RopeLayout::Neox)
      rot[i] = i < half ? -v[i + half] : v[i - half];
    else
      rot[i] = i % 2 == 0 ? -v[i + 1] : v[i - 1];
  }
  for (size_t i = 0; i < D; ++i) v[i] = v[i] * r.cos[p * D + i] + rot[i] * r.sin[p * D + i];
}

// rotate_at on every head of x [T][heads][D], token t at row t.
void apply_rotary(Vec& x, int64_t heads, int64_t head_dim, const RopeTables& r) {
  const size_t D = sz(head_dim), H = sz(heads), T = x.size() / (H * D);
  for (size_t t = 0; t < T; ++t)
    for (size_t h = 0; h < H; ++h) rotate_at(&x[(t * H + h) * D], D, t, r);
}

// StreamingLLM's attention over un-rotated q and k: query i attends keys 0..i at positions 0..i
// while i < C; past that the sinks 0..S-1 at positions 0..S-1 and the C-S most recent keys up to
// itself at positions S..C-1 in order, the query at C-1. Every key is rotated anew for every query.
Vec streaming_self_attention(const Vec& q, const Vec& k, const Vec& v, int64_t T, int64_t Hq, int64_t Hkv, int64_t D,
                             int64_t C, int64_t S, const RopeTables& rope) {
  const size_t n = sz(T), hq = sz(Hq), hkv = sz(Hkv), d = sz(D), groups = hq / hkv;
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  Vec out(n * hq * d, 0.0), qi(d), kj(d);
  std::vector<std::pair<size_t, size_t>> keys;  // (key, its position) for the query
  for (size_t i = 0; i < n; ++i) {
    keys.clear();
    size_t q_pos = i;
    if (int64_t(i) < C) {
      for (size_t j = 0; j <= i; ++j) keys.emplace_back(j, j);
    } else {
      q_pos = sz(C - 1);
      for (size_t j = 0; j < sz(S); ++j) keys.emplace_back(j, j);
      const size_t first = i + 1 - sz(C - S);
      for (size_t j = first; j <= i; ++j) keys.emplace_back(j, sz(S) + (j - first));
    }
    for (size_t h = 0; h < hq; ++h) {
      const size_t g = h / groups;
      std::copy_n(&q[(i * hq + h) * d], d, qi.begin());
      rotate_at(qi.data(), d, q_pos, rope);
      Vec scores(keys.size());
      for (size_t e = 0; e < keys.size(); ++e) {
        std::copy_n(&k[(keys[e].first * hkv + g) * d], d, kj.begin());
        rotate_at(kj.data(), d, keys[e].second, rope);
        double dot = 0;
        for (size_t c = 0; c < d; ++c) dot += qi[c] * kj[c];
        scores[e] = dot * scale;
      }
      const double mx = *std::max_element(scores.begin(), scores.end());
      double sum = 0;
      for (double& x : scores) sum += (x = std::exp(x - mx));
      for (size_t e = 0; e < keys.size(); ++e)
        for (size_t c = 0; c < d; ++c) out[(i * hq + h) * d + c] += scores[e] / sum * v[(keys[e].first * hkv + g) * d + c];
    }
  }
  return out;
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

namespace {

// The forward pass; context 0: full causal attention, else StreamingLLM's (context, sinks).
Vec llama_logits(const LlamaWeights& weights, std::span<const int32_t> tokens, int64_t context, int64_t sinks) {
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
  for (double& h : hidden) h *= embedding_scale(c);

  // A sliding context's positions stay below C, and its frequencies are C's (what the device does).
  const RopeTables rope = rope_tables(c.rope, c.head_dim, context > 0 ? context : T);
  for (const LlamaLayerWeights& layer : weights.layers) {
    const Vec normed = rms_norm(hidden, layer.attn_norm, c.rms_eps);
    Vec q = linear(normed, layer.wq), k = linear(normed, layer.wk), v = linear(normed, layer.wv);
    add_bias_rows(q, layer.bq);
    add_bias_rows(k, layer.bk);
    add_bias_rows(v, layer.bv);
    if (layer.q_norm) q = rms_norm(q, *layer.q_norm, c.rms_eps);  // each head's row, before RoPE
    if (layer.k_norm) k = rms_norm(k, *layer.k_norm, c.rms_eps);
    Vec mixed;
    if (context > 0) {
      mixed = streaming_self_attention(q, k, v, T, c.heads, c.heads_kv, c.head_dim, context, sinks, rope);
    } else {
      apply_rotary(q, c.heads, c.head_dim, rope);
      apply_rotary(k, c.heads_kv, c.head_dim, rope);
      mixed = causal_self_attention(q, k, v, T, c.heads, c.heads_kv, c.head_dim);
    }
    const Vec attn = linear(mixed, layer.wo);
    for (size_t i = 0; i < hidden.size(); ++i) hidden[i] += attn[i];

    const Vec post = rms_norm(hidden, layer.ffn_norm, c.rms_eps);
    const Vec gate = linear(post, layer.ffn_gate), up = linear(post, layer.ffn_up);
    Vec act(gate.size());
    for (size_t i = 0; i < act.size(); ++i) act[i] = gated(c.ffn_gate, gate[i], up[i]);
    const Vec mlp = linear(act, layer.ffn_down);
    for (size_t i = 0; i < hidden.size(); ++i) hidden[i] += mlp[i];
  }
  return linear(rms_norm(hidden, weights.output_norm, c.rms_eps), weights.output);
}

}  // namespace

std::vector<double> plain_llama_logits(const LlamaWeights& weights, std::span<const int32_t> tokens) {
  return llama_logits(weights, tokens, 0, 0);
}

std::vector<double> streaming_llama_logits(const LlamaWeights& weights, std::span<const int32_t> tokens,
                                           int64_t context, int64_t sinks) {
  if (context < 1 || sinks < 0 || sinks >= context)
    throw Error("streaming reference: " + std::to_string(sinks) + " sinks do not fit a context of " +
                std::to_string(context));
  return llama_logits(weights, tokens, context, sinks);
}

}  // namespace infini::model
