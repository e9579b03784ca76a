#include "reference/infini_attention_reference.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "infini/error.hpp"

namespace infini::reference {
namespace {

const double kEps = static_cast<double>(kMemoryEps);

// The memory read's denominator under the options' eps rule (docs/design.md §1.3, §1.8).
double memory_denominator(double den, const InfiniOptions& o) {
  const double eps = static_cast<double>(o.memory_eps);
  return o.memory_eps_mode == EpsMode::Add ? den + eps : std::max(den, eps);
}

void require(bool ok, const std::string& message) {
  if (!ok) throw Error("infini attention reference: " + message);
}

void check_shape(const AttentionShape& s) {
  require(s.heads_q > 0 && s.heads_kv > 0 && s.head_dim > 0 && s.value_dim > 0,
          "head counts and dims must be positive");
  require(s.heads_q % s.heads_kv == 0, "Hq (" + std::to_string(s.heads_q) + ") is not a multiple of Hkv (" +
                                           std::to_string(s.heads_kv) + ")");
}

void check_size(std::span<const double> x, int64_t tokens, int heads, int dim, const char* name) {
  require(tokens >= 0, "negative token count");
  const size_t want = static_cast<size_t>(tokens) * static_cast<size_t>(heads) * static_cast<size_t>(dim);
  require(x.size() == want, std::string(name) + " has " + std::to_string(x.size()) + " values, expected " +
                                std::to_string(want));
}

void check_state(const MemoryState& st, const AttentionShape& s) {
  const size_t hkv = static_cast<size_t>(s.heads_kv), d = static_cast<size_t>(s.head_dim);
  require(st.M.size() == hkv * d * static_cast<size_t>(s.value_dim) && st.z.size() == hkv * d,
          "memory state does not match the shape");
}

// Query head h reads KV head h / (Hq / Hkv).
int kv_head(const AttentionShape& s, int h) { return h / (s.heads_q / s.heads_kv); }

// The KV head whose memory query head h reads.
int memory_kv_head(const AttentionShape& s, int h, const InfiniOptions& o) {
  return o.memory_head_map == MemoryHeadMap::Modulo ? h % s.heads_kv : kv_head(s, h);
}

void check_beta(std::span<const double> beta, const AttentionShape& s, const InfiniOptions& o) {
  const size_t want = static_cast<size_t>(gate_values(s, o.gate_shape));
  require(beta.size() == want, "beta has " + std::to_string(beta.size()) + " values, expected " + std::to_string(want));
}

// The logit of query head h's gate at value column e.
double gate_logit(std::span<const double> beta, const AttentionShape& s, const InfiniOptions& o, size_t h, size_t e) {
  switch (o.gate_shape) {
    case GateShape::PerHead: return beta[h];
    case GateShape::PerHeadValue: return beta[h * static_cast<size_t>(s.value_dim) + e];
    case GateShape::PerLayer: return beta[0];
  }
  return beta[h];
}

}  // namespace

double sigma(double x) { return x > 0 ? x + 1.0 : std::exp(x); }

double sigmoid(double x) {
  // Both branches keep exp's argument <= 0, so beta = +-1e4 gives exactly 1 or 0, never NaN.
  if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
  const double e = std::exp(x);
  return e / (1.0 + e);
}

void apply_rope(std::span<double> x, int64_t tokens, int heads, int head_dim, const rope::RopeFrequencies& f,
                rope::RopeLayout layout, int64_t first_position) {
  require(heads > 0 && head_dim > 0, "rope: heads and head_dim must be positive");
  check_size(x, tokens, heads, head_dim, "rope input");
  const int d = f.rotary_dim;
  require(d >= 0 && d % 2 == 0 && d <= head_dim, "rope: rotary_dim must be even and <= head_dim");
  require(f.inv_freq.size() == static_cast<size_t>(d / 2), "rope: inv_freq must hold rotary_dim/2 values");
  const size_t D = static_cast<size_t>(head_dim), half = static_cast<size_t>(d / 2);
  for (int64_t t = 0; t < tokens; ++t) {
    const double pos = static_cast<double>(first_position + t);
    for (int h = 0; h < heads; ++h) {
      double* row = x.data() + (static_cast<size_t>(t) * static_cast<size_t>(heads) + static_cast<size_t>(h)) * D;
      for (size_t i = 0; i < half; ++i) {
        const double angle = pos * f.inv_freq[i];
        const double c = std::cos(angle) * f.attention_factor, s = std::sin(angle) * f.attention_factor;
        const size_t a = layout == rope::RopeLayout::Neox ? i : 2 * i;
        const size_t b = layout == rope::RopeLayout::Neox ? i + half : 2 * i + 1;
        const double x0 = row[a], x1 = row[b];
        row[a] = x0 * c - x1 * s;
        row[b] = x0 * s + x1 * c;
      }
    }
  }
}

std::vector<double> causal_attention(std::span<const double> q, std::span<const double> k,
                                     std::span<const double> v, int64_t tokens, const AttentionShape& shape) {
  check_shape(shape);
  check_size(q, tokens, shape.heads_q, shape.head_dim, "q");
  check_size(k, tokens, shape.heads_kv, shape.head_dim, "k");
  check_size(v, tokens, shape.heads_kv, shape.value_dim, "v");
  const size_t n = static_cast<size_t>(tokens), Hq = static_cast<size_t>(shape.heads_q),
               Hkv = static_cast<size_t>(shape.heads_kv), D = static_cast<size_t>(shape.head_dim),
               Dv = static_cast<size_t>(shape.value_dim);
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  std::vector<double> out(n * Hq * Dv, 0.0);
  std::vector<double> score(n);
  for (size_t i = 0; i < n; ++i)
    for (size_t h = 0; h < Hq; ++h) {
      const size_t g = static_cast<size_t>(kv_head(shape, static_cast<int>(h)));
      const double* qi = &q[(i * Hq + h) * D];
      double max_score = -INFINITY;
      for (size_t j = 0; j <= i; ++j) {  // causal: keys 0..i only
        const double* kj = &k[(j * Hkv + g) * D];
        double dot = 0;
        for (size_t c = 0; c < D; ++c) dot += qi[c] * kj[c];
        score[j] = dot * scale;
        max_score = std::max(max_score, score[j]);
      }
      double sum = 0;
      for (size_t j = 0; j <= i; ++j) {
        score[j] = std::exp(score[j] - max_score);
        sum += score[j];
      }
      double* oi = &out[(i * Hq + h) * Dv];
      for (size_t j = 0; j <= i; ++j)
        for (size_t c = 0; c < Dv; ++c) oi[c] += score[j] / sum * v[(j * Hkv + g) * Dv + c];
    }
  return out;
}

MemoryState MemoryState::zeros(const AttentionShape& shape) {
  check_shape(shape);
  const size_t hkv = static_cast<size_t>(shape.heads_kv), d = static_cast<size_t>(shape.head_dim);
  return MemoryState{std::vector<double>(hkv * d * static_cast<size_t>(shape.value_dim), 0.0),
                     std::vector<double>(hkv * d, 0.0)};
}

MemoryState MemoryState::initial(const AttentionShape& shape, const InfiniOptions& options) {
  MemoryState st = zeros(shape);
  std::fill(st.z.begin(), st.z.end(), static_cast<double>(options.memory_z_init));
  return st;
}

std::vector<double> memory_read(std::span<const double> q, int64_t tokens, const AttentionShape& shape,
                                const MemoryState& state, const InfiniOptions& options) {
  check_shape(shape);
  check_size(q, tokens, shape.heads_q, shape.head_dim, "q");
  check_state(state, shape);
  const size_t n = static_cast<size_t>(tokens), Hq = static_cast<size_t>(shape.heads_q),
               D = static_cast<size_t>(shape.head_dim), Dv = static_cast<size_t>(shape.value_dim);
  std::vector<double> out(n * Hq * Dv, 0.0);
  for (size_t t = 0; t < n; ++t)
    for (size_t h = 0; h < Hq; ++h) {
      const size_t g = static_cast<size_t>(memory_kv_head(shape, static_cast<int>(h), options));
      const double* M = &state.M[g * D * Dv];
      const double* z = &state.z[g * D];
      double den = 0;
      std::vector<double> num(Dv, 0.0);
      for (size_t c = 0; c < D; ++c) {
        const double sq = sigma(q[(t * Hq + h) * D + c]);
        den += sq * z[c];
        for (size_t e = 0; e < Dv; ++e) num[e] += sq * M[c * Dv + e];
      }
      for (size_t e = 0; e < Dv; ++e) out[(t * Hq + h) * Dv + e] = num[e] / memory_denominator(den, options);
    }
  return out;
}

std::vector<double> gate(std::span<const double> a_mem, std::span<const double> a_dot, std::span<const double> beta,
                         int64_t tokens, const AttentionShape& shape, const InfiniOptions& options,
                         bool first_segment_of_stream) {
  check_shape(shape);
  check_size(a_mem, tokens, shape.heads_q, shape.value_dim, "a_mem");
  check_size(a_dot, tokens, shape.heads_q, shape.value_dim, "a_dot");
  check_beta(beta, shape, options);
  const size_t n = static_cast<size_t>(tokens), Hq = static_cast<size_t>(shape.heads_q),
               Dv = static_cast<size_t>(shape.value_dim);
  const bool local_only = first_segment_of_stream && options.first_segment == FirstSegment::Local;
  std::vector<double> out(n * Hq * Dv);
  for (size_t t = 0; t < n; ++t)
    for (size_t h = 0; h < Hq; ++h) {
      for (size_t e = 0; e < Dv; ++e) {
        const double g = sigmoid(gate_logit(beta, shape, options, h, e));
        const double w_mem = options.gate_sign == GateSign::Memory ? g : 1.0 - g;
        const size_t i = (t * Hq + h) * Dv + e;
        out[i] = local_only ? a_dot[i] : w_mem * a_mem[i] + (1.0 - w_mem) * a_dot[i];
      }
    }
  return out;
}

void memory_write(std::span<const double> k, std::span<const double> v, int64_t tokens, const AttentionShape& shape,
                  UpdateRule rule, MemoryState& state, const InfiniOptions& options) {
  check_shape(shape);
  check_size(k, tokens, shape.heads_kv, shape.head_dim, "k");
  check_size(v, tokens, shape.heads_kv, shape.value_dim, "v");
  check_state(state, shape);
  const size_t n = static_cast<size_t>(tokens), Hkv = static_cast<size_t>(shape.heads_kv),
               D = static_cast<size_t>(shape.head_dim), Dv = static_cast<size_t>(shape.value_dim);
  // Every token's retrieval term sees the state from before this segment.
  const MemoryState old = state;
  std::vector<double> sk(D), delta_v(Dv);
  for (size_t t = 0; t < n; ++t)
    for (size_t g = 0; g < Hkv; ++g) {
      for (size_t c = 0; c < D; ++c) sk[c] = sigma(k[(t * Hkv + g) * D + c]);
      for (size_t e = 0; e < Dv; ++e) delta_v[e] = v[(t * Hkv + g) * Dv + e];
      if (rule == UpdateRule::Delta) {
        double den = 0;
        for (size_t c = 0; c < D; ++c) den += sk[c] * old.z[g * D + c];
        for (size_t e = 0; e < Dv; ++e) {
          double num = 0;
          for (size_t c = 0; c < D; ++c) num += sk[c] * old.M[(g * D + c) * Dv + e];
          delta_v[e] -= num / memory_denominator(den, options);
        }
      }
      for (size_t c = 0; c < D; ++c) {
        for (size_t e = 0; e < Dv; ++e) state.M[(g * D + c) * Dv + e] += sk[c] * delta_v[e];
        state.z[g * D + c] += sk[c];
      }
    }
}

std::vector<double> segment_output(std::span<const double> q, std::span<const double> k, std::span<const double> v,
                                   int64_t tokens, const AttentionShape& shape, const InfiniOptions& options,
                                   std::span<const double> beta, const rope::RopeFrequencies& freqs,
                                   const MemoryState& state, bool first_segment_of_stream) {
  check_shape(shape);
  check_size(q, tokens, shape.heads_q, shape.head_dim, "q");
  check_size(k, tokens, shape.heads_kv, shape.head_dim, "k");
  std::vector<double> qr(q.begin(), q.end()), kr(k.begin(), k.end());
  apply_rope(qr, tokens, shape.heads_q, shape.head_dim, freqs, options.rope.layout, 0);
  apply_rope(kr, tokens, shape.heads_kv, shape.head_dim, freqs, options.rope.layout, 0);
  std::vector<double> a_dot = causal_attention(qr, kr, v, tokens, shape);
  if (!options.memory) return a_dot;
  const bool rotated = options.memory_positions == MemoryPositions::Rotated;
  const std::vector<double> a_mem = memory_read(rotated ? std::span<const double>(qr) : q, tokens, shape, state, options);
  return gate(a_mem, a_dot, beta, tokens, shape, options, first_segment_of_stream);
}

void write_segment(std::span<const double> k, std::span<const double> v, int64_t tokens, const AttentionShape& shape,
                   const InfiniOptions& options, const rope::RopeFrequencies& freqs, MemoryState& state) {
  if (options.memory_positions == MemoryPositions::Unrotated) {
    memory_write(k, v, tokens, shape, options.update, state, options);
    return;
  }
  std::vector<double> kr(k.begin(), k.end());
  apply_rope(kr, tokens, shape.heads_kv, shape.head_dim, freqs, options.rope.layout, 0);
  memory_write(kr, v, tokens, shape, options.update, state, options);
}

std::vector<double> infini_attention_stream(std::span<const double> q, std::span<const double> k,
                                            std::span<const double> v, int64_t tokens, const AttentionShape& shape,
                                            const InfiniOptions& options, std::span<const double> beta,
                                            const rope::RopeFrequencies& freqs, MemoryState* final_state) {
  check_shape(shape);
  require(options.segment > 0, "segment length must be positive");
  check_size(q, tokens, shape.heads_q, shape.head_dim, "q");
  check_size(k, tokens, shape.heads_kv, shape.head_dim, "k");
  check_size(v, tokens, shape.heads_kv, shape.value_dim, "v");
  check_beta(beta, shape, options);
  const size_t Hq = static_cast<size_t>(shape.heads_q), Hkv = static_cast<size_t>(shape.heads_kv),
               D = static_cast<size_t>(shape.head_dim), Dv = static_cast<size_t>(shape.value_dim);
  MemoryState state = MemoryState::initial(shape, options);
  std::vector<double> out;
  out.reserve(static_cast<size_t>(tokens) * Hq * Dv);
  for (int64_t start = 0; start < tokens; start += options.segment) {
    const int64_t n = std::min(options.segment, tokens - start);
    const size_t s = static_cast<size_t>(start), m = static_cast<size_t>(n);
    const auto qs = q.subspan(s * Hq * D, m * Hq * D);
    const auto ks = k.subspan(s * Hkv * D, m * Hkv * D);
    const auto vs = v.subspan(s * Hkv * Dv, m * Hkv * Dv);
    const std::vector<double> a = segment_output(qs, ks, vs, n, shape, options, beta, freqs, state, start == 0);
    out.insert(out.end(), a.begin(), a.end());
    if (options.memory) write_segment(ks, vs, n, shape, options, freqs, state);
  }
  if (final_state) *final_state = std::move(state);
  return out;
}

LayerReference::LayerReference(const AttentionShape& shape, const InfiniOptions& options, std::vector<double> beta,
                               rope::RopeFrequencies freqs)
    : shape_(shape), options_(options), beta_(std::move(beta)), freqs_(std::move(freqs)),
      state_(MemoryState::initial(shape, options)) {
  require(options_.segment > 0, "segment length must be positive");
  check_beta(beta_, shape_, options_);
}

void LayerReference::set_frequencies(rope::RopeFrequencies freqs) { freqs_ = std::move(freqs); }

void LayerReference::close_segment() {
  if (options_.memory) write_segment(open_k_, open_v_, open_, shape_, options_, freqs_, state_);
  ++segments_written_;
  open_ = 0;
  open_k_.clear();
  open_v_.clear();
}

void LayerReference::flush() {
  if (open_ > 0) close_segment();
}

std::vector<double> LayerReference::decode_token(std::span<const double> q, std::span<const double> k,
                                                 std::span<const double> v) {
  check_size(q, 1, shape_.heads_q, shape_.head_dim, "q");
  check_size(k, 1, shape_.heads_kv, shape_.head_dim, "k");
  check_size(v, 1, shape_.heads_kv, shape_.value_dim, "v");
  const size_t Hq = static_cast<size_t>(shape_.heads_q), Hkv = static_cast<size_t>(shape_.heads_kv),
               D = static_cast<size_t>(shape_.head_dim), Dv = static_cast<size_t>(shape_.value_dim);
  const int64_t pos = open_;  // segment-local position of this token
  open_k_.insert(open_k_.end(), k.begin(), k.end());
  open_v_.insert(open_v_.end(), v.begin(), v.end());
  ++open_;

  // Local attention of this one query against the open segment, written out here on its own (not
  // through causal_attention) so that tests comparing decode with prefill compare two codes.
  std::vector<double> qr(q.begin(), q.end()), kr = open_k_;
  apply_rope(qr, 1, shape_.heads_q, shape_.head_dim, freqs_, options_.rope.layout, pos);
  apply_rope(kr, open_, shape_.heads_kv, shape_.head_dim, freqs_, options_.rope.layout, 0);
  const size_t n = static_cast<size_t>(open_);
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  std::vector<double> a_dot(Hq * Dv, 0.0), p(n);
  for (size_t h = 0; h < Hq; ++h) {
    const size_t g = h / (Hq / Hkv);
    for (size_t j = 0; j < n; ++j) {
      double dot = 0;
      for (size_t c = 0; c < D; ++c) dot += qr[h * D + c] * kr[(j * Hkv + g) * D + c];
      p[j] = dot * scale;
    }
    const double mx = *std::max_element(p.begin(), p.end());
    double sum = 0;
    for (double& x : p) sum += (x = std::exp(x - mx));
    for (size_t j = 0; j < n; ++j)
      for (size_t e = 0; e < Dv; ++e) a_dot[h * Dv + e] += p[j] / sum * open_v_[(j * Hkv + g) * Dv + e];
  }

  std::vector<double> out = a_dot;
  if (options_.memory) {
    const bool rotated = options_.memory_positions == MemoryPositions::Rotated;
    const std::vector<double> a_mem =  // frozen until the segment fills
        memory_read(rotated ? std::span<const double>(qr) : q, 1, shape_, state_, options_);
    out = gate(a_mem, a_dot, beta_, 1, shape_, options_, segments_written_ == 0);
  }
  if (open_ == options_.segment) close_segment();
  return out;
}

std::vector<double> LayerReference::prefill(std::span<const double> q, std::span<const double> k,
                                            std::span<const double> v, int64_t tokens) {
  check_size(q, tokens, shape_.heads_q, shape_.head_dim, "q");
  check_size(k, tokens, shape_.heads_kv, shape_.head_dim, "k");
  check_size(v, tokens, shape_.heads_kv, shape_.value_dim, "v");
  const size_t Hq = static_cast<size_t>(shape_.heads_q), Hkv = static_cast<size_t>(shape_.heads_kv),
               D = static_cast<size_t>(shape_.head_dim), Dv = static_cast<size_t>(shape_.value_dim);
  std::vector<double> out;
  out.reserve(static_cast<size_t>(tokens) * Hq * Dv);
  int64_t t = 0;
  // Finish an open segment token by token, then run whole segments.
  while (t < tokens && open_ > 0) {
    const size_t s = static_cast<size_t>(t);
    const std::vector<double> a =
        decode_token(q.subspan(s * Hq * D, Hq * D), k.subspan(s * Hkv * D, Hkv * D), v.subspan(s * Hkv * Dv, Hkv * Dv));
    out.insert(out.end(), a.begin(), a.end());
    ++t;
  }
  while (t < tokens) {
    const int64_t n = std::min(options_.segment, tokens - t);
    const size_t s = static_cast<size_t>(t), m = static_cast<size_t>(n);
    const auto qs = q.subspan(s * Hq * D, m * Hq * D);
    const auto ks = k.subspan(s * Hkv * D, m * Hkv * D);
    const auto vs = v.subspan(s * Hkv * Dv, m * Hkv * Dv);
    const std::vector<double> a =
        segment_output(qs, ks, vs, n, shape_, options_, beta_, freqs_, state_, segments_written_ == 0);
    out.insert(out.end(), a.begin(), a.end());
    // A shorter last piece stays open: later tokens of its segment still attend to it.
    open_k_.assign(ks.begin(), ks.end());
    open_v_.assign(vs.begin(), vs.end());
    open_ = n;
    if (open_ == options_.segment) close_segment();
    t += n;
  }
  return out;
}

std::vector<double> plain_causal_attention_full(std::span<const double> q, std::span<const double> k,
                                                std::span<const double> v, int64_t tokens,
                                                const AttentionShape& shape, const rope::RopeFrequencies& freqs,
                                                rope::RopeLayout layout) {
  check_shape(shape);
  std::vector<double> qr(q.begin(), q.end()), kr(k.begin(), k.end());
  apply_rope(qr, tokens, shape.heads_q, shape.head_dim, freqs, layout, 0);
  apply_rope(kr, tokens, shape.heads_kv, shape.head_dim, freqs, layout, 0);
  return causal_attention(qr, kr, v, tokens, shape);
}

std::vector<double> linear_attention_noncausal(std::span<const double> q, std::span<const double> k,
                                               std::span<const double> v, int64_t q_tokens, int64_t kv_tokens,
                                               const AttentionShape& shape) {
  check_shape(shape);
  check_size(q, q_tokens, shape.heads_q, shape.head_dim, "q");
  check_size(k, kv_tokens, shape.heads_kv, shape.head_dim, "k");
  check_size(v, kv_tokens, shape.heads_kv, shape.value_dim, "v");
  const size_t nq = static_cast<size_t>(q_tokens), nk = static_cast<size_t>(kv_tokens),
               Hq = static_cast<size_t>(shape.heads_q), Hkv = static_cast<size_t>(shape.heads_kv),
               D = static_cast<size_t>(shape.head_dim), Dv = static_cast<size_t>(shape.value_dim);
  std::vector<double> out(nq * Hq * Dv, 0.0);
  for (size_t i = 0; i < nq; ++i)
    for (size_t h = 0; h < Hq; ++h) {
      const size_t g = static_cast<size_t>(kv_head(shape, static_cast<int>(h)));
      double den = 0;
      std::vector<double> num(Dv, 0.0);
      for (size_t j = 0; j < nk; ++j) {
        double w = 0;  // sigma(q_i) . sigma(k_j)
        for (size_t c = 0; c < D; ++c) w += sigma(q[(i * Hq + h) * D + c]) * sigma(k[(j * Hkv + g) * D + c]);
        den += w;
        for (size_t e = 0; e < Dv; ++e) num[e] += w * v[(j * Hkv + g) * Dv + e];
      }
      for (size_t e = 0; e < Dv; ++e) out[(i * Hq + h) * Dv + e] = num[e] / std::max(den, kEps);
    }
  return out;
}

}  // namespace infini::reference
