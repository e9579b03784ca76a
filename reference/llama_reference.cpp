#include "reference/llama_reference.hpp"

#include <cmath>
#include <string>

#include "infini/error.hpp"
#include "model/llama_weights_check.hpp"
#include "model/tensor_values.hpp"
#include "reference/block_steps.hpp"

namespace infini::model {
namespace {

using Vec = std::vector<double>;

size_t sz(int64_t x) { return static_cast<size_t>(x); }

// y = W x for each of `rows` rows of x [rows][in]; W is {in, out}: `out` rows of `in` values.
// Each weight row is widened once and applied to every token.
Vec project(const TensorView& w, const Vec& x, int64_t rows) {
  const size_t in = sz(w.shape[0]), out = sz(w.shape[1]), n = sz(rows);
  Vec y(n * out), row(in);
  for (size_t o = 0; o < out; ++o) {
    widen(w, static_cast<int64_t>(o * in), static_cast<int64_t>(in), row.data());
    for (size_t t = 0; t < n; ++t) {
      double dot = 0;
      for (size_t i = 0; i < in; ++i) dot += row[i] * x[t * in + i];
      y[t * out + o] = dot;
    }
  }
  return y;
}

// x / sqrt(mean(x^2) + eps) * weight, row by row.
Vec rms_norm(const Vec& x, int64_t rows, const TensorView& weight, double eps) {
  const Vec w = widen_all(weight);
  const size_t e = w.size();
  Vec y(x.size());
  for (size_t t = 0; t < sz(rows); ++t) {
    double sum_sq = 0;
    for (size_t i = 0; i < e; ++i) sum_sq += x[t * e + i] * x[t * e + i];
    const double inv = 1.0 / std::sqrt(sum_sq / static_cast<double>(e) + eps);
    for (size_t i = 0; i < e; ++i) y[t * e + i] = x[t * e + i] * inv * w[i];
  }
  return y;
}

void add(Vec& x, const Vec& y) {
  for (size_t i = 0; i < x.size(); ++i) x[i] += y[i];
}

int to_int(int64_t x) { return static_cast<int>(x); }

}  // namespace

LlamaReference::LlamaReference(const LlamaWeights& weights, const InfiniOptions& options)
    : weights_(weights), options_(options) {
  check_llama_weights(weights_);
  const LlamaConfig& c = weights_.config;
  if (options_.segment <= 0)
    throw Error("llama reference: segment length must be positive, got " + std::to_string(options_.segment));
  options_.rope = c.rope;
  shape_ = AttentionShape{to_int(c.heads), to_int(c.heads_kv), to_int(c.head_dim), to_int(c.head_dim)};
  freqs_ = rope::rope_frequencies(c.rope, shape_.head_dim, options_.segment);
  for (const LlamaLayerWeights& l : weights_.layers)
    betas_.push_back(l.mem_gate ? widen_all(*l.mem_gate) : Vec(sz(gate_values(shape_, options_.gate_shape)), 0.0));
  reset();
}

void LlamaReference::reset() {
  layers_.clear();
  for (const Vec& beta : betas_) layers_.emplace_back(shape_, options_, beta, freqs_);
  tokens_seen_ = 0;
}

std::vector<double> LlamaReference::prefill(std::span<const int32_t> tokens) { return forward(tokens, false); }

std::vector<double> LlamaReference::decode_token(int32_t token) {
  return forward(std::span<const int32_t>(&token, 1), true);
}

std::vector<double> LlamaReference::forward(std::span<const int32_t> tokens, bool decode) {
  const LlamaConfig& c = weights_.config;
  // Every id is checked before any state changes, so a bad one leaves the stream as it was.
  for (const int32_t id : tokens)
    if (id < 0 || id >= c.vocab)
      throw Error("token id " + std::to_string(id) + " is out of range for vocab size " + std::to_string(c.vocab));

  const int64_t T = static_cast<int64_t>(tokens.size());
  const size_t E = sz(c.embd);
  Vec x(sz(T) * E);
  for (size_t t = 0; t < sz(T); ++t) widen(weights_.token_embd, int64_t{tokens[t]} * c.embd, c.embd, &x[t * E]);
  for (double& v : x) v *= embedding_scale(c);

  for (size_t l = 0; l < layers_.size(); ++l) {
    const LlamaLayerWeights& w = weights_.layers[l];
    Vec h = rms_norm(x, T, w.attn_norm, c.rms_eps);
    Vec q = project(w.wq, h, T), k = project(w.wk, h, T), v = project(w.wv, h, T);
    add_bias_rows(q, w.bq);
    add_bias_rows(k, w.bk);
    add_bias_rows(v, w.bv);
    if (w.q_norm) q = rms_norm(q, T * c.heads, *w.q_norm, c.rms_eps);  // per head, before RoPE (qwen3)
    if (w.k_norm) k = rms_norm(k, T * c.heads_kv, *w.k_norm, c.rms_eps);
    // [T][Hq][Dv] with heads side by side: the concatenation W_O expects.
    const Vec a = decode ? layers_[l].decode_token(q, k, v) : layers_[l].prefill(q, k, v, T);
    add(x, project(w.wo, a, T));

    h = rms_norm(x, T, w.ffn_norm, c.rms_eps);
    Vec gate = project(w.ffn_gate, h, T);
    const Vec up = project(w.ffn_up, h, T);
    for (size_t i = 0; i < gate.size(); ++i) gate[i] = gated(c.ffn_gate, gate[i], up[i]);
    add(x, project(w.ffn_down, gate, T));
  }
  tokens_seen_ += T;
  return project(weights_.output, rms_norm(x, T, weights_.output_norm, c.rms_eps), T);
}

}  // namespace infini::model
