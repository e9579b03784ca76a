#include "support/tiny_llama.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "util/half.hpp"
#include "util/scalar_bytes.hpp"

namespace infini::testing {
namespace {

using infini::ElementType;
using model::TensorView;

size_t sz(int64_t x) { return static_cast<size_t>(x); }

std::vector<double> uniform(size_t n, std::mt19937_64& rng, double lo, double hi) {
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> x(n);
  for (double& e : x) e = dist(rng);
  return x;
}

// HF (neox) row order -> GGUF (interleaved) row order inside each head: GGUF dim 2i + j is HF dim
// j * d/2 + i for the d rotated dims; the pass-through dims stay where they are.
std::vector<double> permute_rows(const std::vector<double>& w, int64_t heads, int64_t head_dim, int64_t in,
                                 int rotary_dim) {
  const size_t D = sz(head_dim), d = rotary_dim ? sz(rotary_dim) : D, half = d / 2, n = sz(in);
  std::vector<double> out(w);
  for (size_t h = 0; h < sz(heads); ++h)
    for (size_t i = 0; i < half; ++i)
      for (size_t j = 0; j < 2; ++j) {
        const size_t to = h * D + 2 * i + j, from = h * D + j * half + i;
        std::copy_n(w.begin() + static_cast<std::ptrdiff_t>(from * n), n, out.begin() + static_cast<std::ptrdiff_t>(to * n));
      }
  return out;
}

}  // namespace

TensorView TinyLlama::tensor(const std::string& name, std::vector<int64_t> shape, const std::vector<double>& values,
                             ElementType type) {
  std::vector<std::byte> bytes(values.size() * scalar_bytes(type));
  for (size_t i = 0; i < values.size(); ++i) {
    if (type == ElementType::F16) {
      const uint16_t h = float_to_half(static_cast<float>(values[i]));
      std::memcpy(&bytes[i * 2], &h, 2);
    } else {
      const float f = static_cast<float>(values[i]);
      std::memcpy(&bytes[i * 4], &f, 4);
    }
  }
  storage_.push_back(std::move(bytes));
  return TensorView{name, type, std::move(shape), std::span<const std::byte>(storage_.back())};
}

TinyLlama::TinyLlama(const TinyLlamaSpec& s) {
  model::LlamaConfig& c = weights.config;
  c.vocab = s.vocab;
  c.embd = s.embd;
  c.layers = s.layers;
  c.heads = s.heads;
  c.heads_kv = s.heads_kv;
  c.head_dim = s.head_dim;
  c.ffn = s.ffn;
  c.context_length = 4096;
  c.rms_eps = s.rms_eps;
  c.rope.type = rope::RopeType::Default;
  c.rope.layout = s.layout;
  c.rope.rotary_dim = s.rotary_dim;

  std::mt19937_64 rng(s.seed);
  // Matrices scaled by 1/sqrt(in) keep activations of order one through the layers.
  auto matrix = [&](const std::string& name, int64_t in, int64_t out) {
    const double a = 1.0 / std::sqrt(static_cast<double>(in));
    return tensor(name, {in, out}, uniform(sz(in * out), rng, -a, a), s.type);
  };
  auto norm = [&](const std::string& name) { return tensor(name, {s.embd}, uniform(sz(s.embd), rng, 0.5, 1.5), s.type); };
  auto rotary_matrix = [&](const std::string& name, int64_t heads) {
    const int64_t in = s.embd, out = heads * s.head_dim;
    const double a = 1.0 / std::sqrt(static_cast<double>(in));
    std::vector<double> w = uniform(sz(in * out), rng, -a, a);
    if (s.permute_qk) w = permute_rows(w, heads, s.head_dim, in, s.rotary_dim);
    return tensor(name, {in, out}, w, s.type);
  };

  weights.token_embd = tensor("token_embd.weight", {s.embd, s.vocab}, uniform(sz(s.embd * s.vocab), rng, -1, 1), s.type);
  for (int64_t l = 0; l < s.layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    model::LlamaLayerWeights w;
    w.attn_norm = norm(p + "attn_norm.weight");
    w.wq = rotary_matrix(p + "attn_q.weight", s.heads);
    w.wk = rotary_matrix(p + "attn_k.weight", s.heads_kv);
    w.wv = matrix(p + "attn_v.weight", s.embd, s.heads_kv * s.head_dim);
    w.wo = matrix(p + "attn_output.weight", s.heads * s.head_dim, s.embd);
    const std::vector<double> beta = uniform(sz(s.heads), rng, -2, 2);  // drawn either way: same weights
    if (s.mem_gate) w.mem_gate = tensor(p + "attn_mem_gate", {s.heads}, beta, ElementType::F32);
    w.ffn_norm = norm(p + "ffn_norm.weight");
    w.ffn_gate = matrix(p + "ffn_gate.weight", s.embd, s.ffn);
    w.ffn_up = matrix(p + "ffn_up.weight", s.embd, s.ffn);
    w.ffn_down = matrix(p + "ffn_down.weight", s.ffn, s.embd);
    weights.layers.push_back(std::move(w));
  }
  weights.output_norm = norm("output_norm.weight");
  weights.output = s.tied ? weights.token_embd : matrix("output.weight", s.embd, s.vocab);
}

}  // namespace infini::testing
