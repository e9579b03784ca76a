// Invariants of the float64 Infini-attention reference. Every expected value comes from code
// written here independently (complex-number RoPE, pairwise linear attention, hand arithmetic),
// never from the function under test, so a slip in the reference shows up as a failure.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <complex>
#include <random>
#include <vector>

#include "infini/error.hpp"
#include "reference/infini_attention_reference.hpp"

namespace ref = infini::reference;
using infini::AttentionShape;
using infini::FirstSegment;
using infini::GateSign;
using infini::InfiniOptions;
using infini::UpdateRule;
using infini::rope::RopeFrequencies;
using infini::rope::RopeLayout;

namespace {

using Vec = std::vector<double>;

Vec random_vec(size_t n, uint64_t seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  Vec x(n);
  for (double& e : x) e = dist(rng);
  return x;
}

// Default RoPE built by hand (rope_frequencies() is not used here): theta_i = base^(-2i/d).
RopeFrequencies default_freqs(int rotary_dim, double base = 10000.0, double attention_factor = 1.0) {
  RopeFrequencies f;
  f.rotary_dim = rotary_dim;
  for (int i = 0; i < rotary_dim / 2; ++i) f.inv_freq.push_back(std::pow(base, -2.0 * i / rotary_dim));
  f.attention_factor = attention_factor;
  return f;
}

double max_abs_diff(const Vec& a, const Vec& b) {
  REQUIRE(a.size() == b.size());
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

size_t sz(int64_t x) { return static_cast<size_t>(x); }

struct Inputs {
  AttentionShape shape;
  int64_t tokens;
  Vec q, k, v, beta;
};

Inputs random_inputs(const AttentionShape& s, int64_t tokens, uint64_t seed) {
  Inputs in{s, tokens, {}, {}, {}, {}};
  in.q = random_vec(sz(tokens) * sz(s.heads_q) * sz(s.head_dim), seed);
  in.k = random_vec(sz(tokens) * sz(s.heads_kv) * sz(s.head_dim), seed + 1);
  in.v = random_vec(sz(tokens) * sz(s.heads_kv) * sz(s.value_dim), seed + 2);
  in.beta = random_vec(sz(s.heads_q), seed + 3, -2.0, 2.0);
  return in;
}

// Tokens [begin, begin + n) of a [T][heads][dim] tensor.
Vec rows(const Vec& x, int64_t begin, int64_t n, int heads, int dim) {
  const size_t w = sz(heads) * sz(dim);
  return Vec(x.begin() + static_cast<std::ptrdiff_t>(sz(begin) * w),
             x.begin() + static_cast<std::ptrdiff_t>(sz(begin + n) * w));
}

// Pair p of a head as (first, second) element indices for a layout.
std::pair<size_t, size_t> pair_index(RopeLayout layout, size_t p, size_t half) {
  return layout == RopeLayout::Neox ? std::pair{p, p + half} : std::pair{2 * p, 2 * p + 1};
}

// Rotated score q_i . k_j written with complex numbers: each pair is z = x_a + i x_b, rotation by
// angle a multiplies z by af * e^{ia}, and Re(zq conj(zk)) is the pair's dot product, so the score
// only needs the relative angle (pos_q - pos_k) theta.
double naive_rope_score(const double* q, const double* k, int D, const RopeFrequencies& f, RopeLayout layout,
                        int64_t pos_q, int64_t pos_k) {
  const size_t half = sz(f.rotary_dim / 2);
  double s = 0;
  for (size_t p = 0; p < half; ++p) {
    const auto [a, b] = pair_index(layout, p, half);
    const std::complex<double> zq(q[a], q[b]), zk(k[a], k[b]);
    const double rel = static_cast<double>(pos_q - pos_k) * f.inv_freq[p];
    s += f.attention_factor * f.attention_factor * (zq * std::conj(zk) * std::polar(1.0, rel)).real();
  }
  for (size_t c = sz(f.rotary_dim); c < sz(D); ++c) s += q[c] * k[c];
  return s;
}

// Causal softmax attention with absolute positions 0..T-1 over un-rotated q, k.
Vec naive_attention(const Vec& q, const Vec& k, const Vec& v, int64_t T, const AttentionShape& s,
                    const RopeFrequencies& f, RopeLayout layout) {
  const size_t Hq = sz(s.heads_q), Hkv = sz(s.heads_kv), D = sz(s.head_dim), Dv = sz(s.value_dim);
  Vec out(sz(T) * Hq * Dv, 0.0);
  for (int64_t i = 0; i < T; ++i)
    for (size_t h = 0; h < Hq; ++h) {
      const size_t g = h * Hkv / Hq;  // same as h / (Hq/Hkv) when Hkv divides Hq
      Vec w;
      double sum = 0;
      for (int64_t j = 0; j <= i; ++j) {
        const double sc = naive_rope_score(&q[(sz(i) * Hq + h) * D], &k[(sz(j) * Hkv + g) * D], s.head_dim, f,
                                           layout, i, j);
        w.push_back(std::exp(sc / std::sqrt(double(D))));
        sum += w.back();
      }
      for (int64_t j = 0; j <= i; ++j)
        for (size_t e = 0; e < Dv; ++e) out[(sz(i) * Hq + h) * Dv + e] += w[sz(j)] / sum * v[(sz(j) * Hkv + g) * Dv + e];
    }
  return out;
}

// Linear attention written pairwise: num = sum_j (sigma(q).sigma(k_j)) v_j, den = sum_j sigma(q).sigma(k_j).
Vec naive_linear(const Vec& q, const Vec& k, const Vec& v, int64_t nq, int64_t nk, const AttentionShape& s) {
  const size_t Hq = sz(s.heads_q), Hkv = sz(s.heads_kv), D = sz(s.head_dim), Dv = sz(s.value_dim);
  auto elu1 = [](double x) { return x > 0 ? x + 1 : std::exp(x); };
  Vec out(sz(nq) * Hq * Dv, 0.0);
  for (size_t i = 0; i < sz(nq); ++i)
    for (size_t h = 0; h < Hq; ++h) {
      const size_t g = h * Hkv / Hq;
      double den = 0;
      Vec num(Dv, 0.0);
      for (size_t j = 0; j < sz(nk); ++j) {
        double w = 0;
        for (size_t c = 0; c < D; ++c) w += elu1(q[(i * Hq + h) * D + c]) * elu1(k[(j * Hkv + g) * D + c]);
        den += w;
        for (size_t e = 0; e < Dv; ++e) num[e] += w * v[(j * Hkv + g) * Dv + e];
      }
      for (size_t e = 0; e < Dv; ++e) out[(i * Hq + h) * Dv + e] = num[e] / den;
    }
  return out;
}

double logistic(double x) { return 1.0 / (1.0 + std::exp(-x)); }

}  // namespace

TEST_CASE("reference: sigma is ELU + 1", "[reference]") {
  CHECK(ref::sigma(2.5) == 3.5);
  CHECK(ref::sigma(0.0) == 1.0);
  CHECK(ref::sigma(-std::log(2.0)) == Approx(0.5).epsilon(1e-15));
  CHECK(ref::sigmoid(-1e4) == 0.0);
  CHECK(ref::sigmoid(1e4) == 1.0);
  CHECK(ref::sigmoid(0.7) == Approx(logistic(0.7)).epsilon(1e-15));
}

TEST_CASE("reference: rope rotates pairs like a complex multiplication", "[reference]") {
  const int heads = 3, D = 10, T = 4;
  const int64_t first = 7;
  for (RopeLayout layout : {RopeLayout::Neox, RopeLayout::Interleaved})
    for (int rot : {10, 6, 0}) {
      const RopeFrequencies f = default_freqs(rot, 100.0, 1.25);
      const Vec x = random_vec(sz(T) * heads * D, 11);
      Vec y = x;
      ref::apply_rope(y, T, heads, D, f, layout, first);
      const size_t half = sz(rot / 2);
      for (size_t t = 0; t < sz(T); ++t)
        for (size_t h = 0; h < sz(heads); ++h) {
          const size_t base = (t * heads + h) * D;
          for (size_t p = 0; p < half; ++p) {
            const auto [a, b] = pair_index(layout, p, half);
            const std::complex<double> z =
                std::complex<double>(x[base + a], x[base + b]) *
                std::polar(f.attention_factor, static_cast<double>(first + static_cast<int64_t>(t)) * f.inv_freq[p]);
            CHECK(std::abs(y[base + a] - z.real()) < 1e-14);
            CHECK(std::abs(y[base + b] - z.imag()) < 1e-14);
          }
          for (size_t c = sz(rot); c < sz(D); ++c) CHECK(y[base + c] == x[base + c]);  // pass-through
        }
    }
}

TEST_CASE("reference: rope scores are the same with segment-local and absolute positions", "[reference]") {
  // Invariant (4): RoPE scores depend only on i - j, so shifting every position by p changes nothing.
  const int heads = 2, D = 16, T = 6;
  for (RopeLayout layout : {RopeLayout::Neox, RopeLayout::Interleaved})
    for (int64_t shift : {int64_t{1}, int64_t{4096}, int64_t{123457}}) {
      const RopeFrequencies f = default_freqs(12);
      const Vec q = random_vec(sz(T) * heads * D, 21), k = random_vec(sz(T) * heads * D, 22);
      Vec q0 = q, k0 = k, qp = q, kp = k;
      ref::apply_rope(q0, T, heads, D, f, layout, 0);
      ref::apply_rope(k0, T, heads, D, f, layout, 0);
      ref::apply_rope(qp, T, heads, D, f, layout, shift);
      ref::apply_rope(kp, T, heads, D, f, layout, shift);
      for (size_t i = 0; i < sz(T); ++i)
        for (size_t j = 0; j < sz(T); ++j)
          for (size_t h = 0; h < sz(heads); ++h) {
            double s0 = 0, sp = 0;
            for (size_t c = 0; c < sz(D); ++c) {
              s0 += q0[(i * heads + h) * D + c] * k0[(j * heads + h) * D + c];
              sp += qp[(i * heads + h) * D + c] * kp[(j * heads + h) * D + c];
            }
            CHECK(std::abs(s0 - sp) < 1e-9);
            // and both agree with the relative-angle formula
            CHECK(std::abs(s0 - naive_rope_score(&q[(i * heads + h) * D], &k[(j * heads + h) * D], D, f, layout,
                                                 int64_t(i), int64_t(j))) < 1e-12);
          }
    }
}

TEST_CASE("reference: plain causal attention matches an independent softmax", "[reference]") {
  for (RopeLayout layout : {RopeLayout::Neox, RopeLayout::Interleaved}) {
    const AttentionShape s{4, 2, 8, 6};
    const Inputs in = random_inputs(s, 9, 31);
    const RopeFrequencies f = default_freqs(8, 500.0);
    const Vec got = ref::plain_causal_attention_full(in.q, in.k, in.v, in.tokens, s, f, layout);
    CHECK(max_abs_diff(got, naive_attention(in.q, in.k, in.v, in.tokens, s, f, layout)) < 1e-12);
  }
}

TEST_CASE("reference: beta -> -inf turns the layer into segment-local causal attention", "[reference]") {
  // Invariant (1): g = sigmoid(-1e4) = 0, so A = A_dot on every segment, whatever the memory holds.
  const AttentionShape s{2, 1, 8, 4};
  const RopeFrequencies f = default_freqs(8);
  for (int64_t N : {int64_t{10}, int64_t{4}}) {
    const int64_t T = 10;
    Inputs in = random_inputs(s, T, 41);
    std::fill(in.beta.begin(), in.beta.end(), -1e4);
    InfiniOptions o;
    o.segment = N;
    const Vec got = ref::infini_attention_stream(in.q, in.k, in.v, T, s, o, in.beta, f);
    for (int64_t start = 0; start < T; start += N) {
      const int64_t n = std::min(N, T - start);
      const Vec want = naive_attention(rows(in.q, start, n, 2, 8), rows(in.k, start, n, 1, 8),
                                       rows(in.v, start, n, 1, 4), n, s, f, RopeLayout::Neox);
      CHECK(max_abs_diff(rows(got, start, n, 2, 4), want) < 1e-12);
    }
  }
}

TEST_CASE("reference: one segment with memory on is gated plain attention", "[reference]") {
  // Invariant (2): with N >= T only the first segment exists and A_mem = 0 there.
  const AttentionShape s{3, 3, 6, 5};
  const int64_t T = 7;
  const Inputs in = random_inputs(s, T, 51);
  const RopeFrequencies f = default_freqs(6);
  const Vec plain = naive_attention(in.q, in.k, in.v, T, s, f, RopeLayout::Neox);
  for (GateSign sign : {GateSign::Memory, GateSign::Local})
    for (FirstSegment first : {FirstSegment::Mix, FirstSegment::Local}) {
      InfiniOptions o;
      o.segment = 16;
      o.first_segment = first;
      o.gate_sign = sign;
      const Vec got = ref::infini_attention_stream(in.q, in.k, in.v, T, s, o, in.beta, f);
      for (size_t t = 0; t < sz(T); ++t)
        for (size_t h = 0; h < 3; ++h) {
          const double g = logistic(in.beta[h]);
          const double w_dot = first == FirstSegment::Local ? 1.0 : (sign == GateSign::Memory ? 1.0 - g : g);
          for (size_t e = 0; e < 5; ++e) {
            const size_t i = (t * 3 + h) * 5 + e;
            CHECK(std::abs(got[i] - w_dot * plain[i]) < 1e-12);
          }
        }
    }
}

TEST_CASE("reference: linear memory read is non-causal linear attention over earlier segments", "[reference]") {
  // Invariant (3), and the full layer output on each later segment.
  const AttentionShape s{4, 2, 6, 3};
  const int64_t N = 4, T = 14;
  const Inputs in = random_inputs(s, T, 61);
  const RopeFrequencies f = default_freqs(6);
  InfiniOptions o;
  o.segment = N;
  o.update = UpdateRule::Linear;
  const Vec out = ref::infini_attention_stream(in.q, in.k, in.v, T, s, o, in.beta, f);
  for (int64_t seg = 1; seg * N < T; ++seg) {
    const int64_t start = seg * N, n = std::min(N, T - start);
    ref::MemoryState st;
    ref::infini_attention_stream(rows(in.q, 0, start, 4, 6), rows(in.k, 0, start, 2, 6), rows(in.v, 0, start, 2, 3),
                                 start, s, o, in.beta, f, &st);
    const Vec qs = rows(in.q, start, n, 4, 6);
    const Vec want_mem = naive_linear(qs, rows(in.k, 0, start, 2, 6), rows(in.v, 0, start, 2, 3), n, start, s);
    CHECK(max_abs_diff(ref::memory_read(qs, n, s, st), want_mem) < 1e-12);
    CHECK(max_abs_diff(ref::linear_attention_noncausal(qs, rows(in.k, 0, start, 2, 6), rows(in.v, 0, start, 2, 3),
                                                       n, start, s),
                       want_mem) < 1e-12);
    const Vec local = naive_attention(qs, rows(in.k, start, n, 2, 6), rows(in.v, start, n, 2, 3), n, s, f,
                                      RopeLayout::Neox);
    const Vec got = rows(out, start, n, 4, 3);
    for (size_t t = 0; t < sz(n); ++t)
      for (size_t h = 0; h < 4; ++h)
        for (size_t e = 0; e < 3; ++e) {
          const size_t i = (t * 4 + h) * 3 + e;
          const double g = logistic(in.beta[h]);
          CHECK(std::abs(got[i] - (g * want_mem[i] + (1 - g) * local[i])) < 1e-12);
        }
  }
}

TEST_CASE("reference: delta rule writes nothing new when V equals the retrieval", "[reference]") {
  // Invariant (5).
  const AttentionShape s{2, 2, 5, 3};
  const int64_t n = 3;
  const Vec k1 = random_vec(n * 2 * 5, 71), v1 = random_vec(n * 2 * 3, 72);

  SECTION("the first delta write equals the first linear write (M_old = 0 retrieves 0)") {
    ref::MemoryState a = ref::MemoryState::zeros(s), b = ref::MemoryState::zeros(s);
    ref::memory_write(k1, v1, n, s, UpdateRule::Delta, a);
    ref::memory_write(k1, v1, n, s, UpdateRule::Linear, b);
    CHECK(max_abs_diff(a.M, b.M) == 0.0);
    CHECK(max_abs_diff(a.z, b.z) == 0.0);
    // and linear is sigma(K)^T V, z = sum sigma(K), checked entry by entry
    for (size_t g = 0; g < 2; ++g)
      for (size_t c = 0; c < 5; ++c) {
        double z = 0;
        for (size_t t = 0; t < sz(n); ++t) z += ref::sigma(k1[(t * 2 + g) * 5 + c]);
        CHECK(std::abs(b.z[g * 5 + c] - z) < 1e-14);
        for (size_t e = 0; e < 3; ++e) {
          double m = 0;
          for (size_t t = 0; t < sz(n); ++t) m += ref::sigma(k1[(t * 2 + g) * 5 + c]) * v1[(t * 2 + g) * 3 + e];
          CHECK(std::abs(b.M[(g * 5 + c) * 3 + e] - m) < 1e-14);
        }
      }
  }

  SECTION("a single (k, v) written twice leaves M unchanged") {
    // After one write M = sigma(k) v^T, z = sigma(k); retrieving with k gives
    // (sigma(k).sigma(k)) v / (sigma(k).sigma(k)) = v, so the second delta write adds sigma(k) * 0.
    const Vec k = rows(k1, 0, 1, 2, 5), v = rows(v1, 0, 1, 2, 3);
    ref::MemoryState st = ref::MemoryState::zeros(s);
    ref::memory_write(k, v, 1, s, UpdateRule::Delta, st);
    const ref::MemoryState once = st;
    ref::memory_write(k, v, 1, s, UpdateRule::Delta, st);
    CHECK(max_abs_diff(st.M, once.M) < 1e-14);
    for (size_t i = 0; i < st.z.size(); ++i) CHECK(std::abs(st.z[i] - 2 * once.z[i]) < 1e-14);
  }

  SECTION("V built as the retrieval of any state leaves M unchanged, z still grows") {
    ref::MemoryState st = ref::MemoryState::zeros(s);
    ref::memory_write(k1, v1, n, s, UpdateRule::Delta, st);
    ref::memory_write(random_vec(n * 2 * 5, 73), random_vec(n * 2 * 3, 74), n, s, UpdateRule::Delta, st);
    const ref::MemoryState before = st;
    const Vec k2 = random_vec(n * 2 * 5, 75);
    Vec v2(n * 2 * 3);  // v = sigma(k) M / (sigma(k) z), computed here
    for (size_t t = 0; t < sz(n); ++t)
      for (size_t g = 0; g < 2; ++g) {
        double den = 0;
        for (size_t c = 0; c < 5; ++c) den += ref::sigma(k2[(t * 2 + g) * 5 + c]) * before.z[g * 5 + c];
        for (size_t e = 0; e < 3; ++e) {
          double num = 0;
          for (size_t c = 0; c < 5; ++c)
            num += ref::sigma(k2[(t * 2 + g) * 5 + c]) * before.M[(g * 5 + c) * 3 + e];
          v2[(t * 2 + g) * 3 + e] = num / den;
        }
      }
    ref::memory_write(k2, v2, n, s, UpdateRule::Delta, st);
    CHECK(max_abs_diff(st.M, before.M) < 1e-13);
    CHECK(max_abs_diff(st.z, before.z) > 0.5);
    // The linear rule, by contrast, does change M with the same input.
    ref::MemoryState lin = before;
    ref::memory_write(k2, v2, n, s, UpdateRule::Linear, lin);
    CHECK(max_abs_diff(lin.M, before.M) > 1e-3);
  }
}

TEST_CASE("reference: a stream gives the same outputs however it is split", "[reference]") {
  // Invariant (6): one call == segment-aligned chunks == arbitrary chunks == token-by-token decode,
  // and the memory matches the whole-stream function.
  const AttentionShape s{4, 2, 8, 4};
  const int64_t N = 5, T = 23;
  const Inputs in = random_inputs(s, T, 81);
  const RopeFrequencies f = default_freqs(6, 1000.0);
  const size_t qw = 4 * 8, kw = 2 * 8, vw = 2 * 4, ow = 4 * 4;
  for (UpdateRule rule : {UpdateRule::Linear, UpdateRule::Delta})
    for (FirstSegment first : {FirstSegment::Mix, FirstSegment::Local})
      for (RopeLayout layout : {RopeLayout::Neox, RopeLayout::Interleaved})
        for (bool memory : {true, false}) {
          InfiniOptions o;
          o.segment = N;
          o.update = rule;
          o.first_segment = first;
          o.rope.layout = layout;
          o.memory = memory;
          ref::MemoryState final_state;
          const Vec whole = ref::infini_attention_stream(in.q, in.k, in.v, T, s, o, in.beta, f, &final_state);

          auto run_chunks = [&](const std::vector<int64_t>& sizes) {
            ref::LayerReference layer(s, o, in.beta, f);
            Vec out;
            int64_t t = 0;
            for (int64_t c : sizes) {
              const Vec a = layer.prefill(rows(in.q, t, c, 4, 8), rows(in.k, t, c, 2, 8), rows(in.v, t, c, 2, 4), c);
              out.insert(out.end(), a.begin(), a.end());
              t += c;
            }
            REQUIRE(t == T);
            CHECK(layer.open_tokens() == T % N);
            layer.flush();
            CHECK(max_abs_diff(layer.memory().M, final_state.M) < 1e-12);
            CHECK(max_abs_diff(layer.memory().z, final_state.z) < 1e-12);
            return out;
          };
          CHECK(max_abs_diff(run_chunks({T}), whole) < 1e-12);
          CHECK(max_abs_diff(run_chunks({N, 2 * N, N, T - 4 * N}), whole) < 1e-12);
          CHECK(max_abs_diff(run_chunks({3, 4, 1, 9, 6}), whole) < 1e-12);

          ref::LayerReference layer(s, o, in.beta, f);
          Vec out;
          for (int64_t t = 0; t < T; ++t) {
            const Vec a = layer.decode_token(Vec(&in.q[sz(t) * qw], &in.q[sz(t + 1) * qw]),
                                             Vec(&in.k[sz(t) * kw], &in.k[sz(t + 1) * kw]),
                                             Vec(&in.v[sz(t) * vw], &in.v[sz(t + 1) * vw]));
            REQUIRE(a.size() == ow);
            out.insert(out.end(), a.begin(), a.end());
            CHECK(layer.segments_written() == (t + 1) / N);
          }
          CHECK(max_abs_diff(out, whole) < 1e-12);
          if (!memory) {
            CHECK(std::all_of(final_state.M.begin(), final_state.M.end(), [](double x) { return x == 0; }));
            CHECK(max_abs_diff(whole, ref::infini_attention_stream(in.q, in.k, in.v, T, s, o, Vec(4, -1e4), f)) ==
                  0.0);
          }
        }
}

TEST_CASE("reference: GQA equals MHA with K and V repeated per query head", "[reference]") {
  // Invariant (7): query head h reads KV head h / (Hq/Hkv).
  const int64_t N = 3, T = 8;
  for (int hkv : {1, 2}) {
    const AttentionShape gqa{4, hkv, 6, 5}, mha{4, 4, 6, 5};
    const Inputs in = random_inputs(gqa, T, 91);
    Vec k4, v4;
    for (size_t t = 0; t < sz(T); ++t)
      for (size_t h = 0; h < 4; ++h) {
        const size_t g = h / sz(4 / hkv);
        for (size_t c = 0; c < 6; ++c) k4.push_back(in.k[(t * sz(hkv) + g) * 6 + c]);
        for (size_t c = 0; c < 5; ++c) v4.push_back(in.v[(t * sz(hkv) + g) * 5 + c]);
      }
    const RopeFrequencies f = default_freqs(6);
    for (UpdateRule rule : {UpdateRule::Linear, UpdateRule::Delta}) {
      InfiniOptions o;
      o.segment = N;
      o.update = rule;
      ref::MemoryState sg, sm;
      const Vec a = ref::infini_attention_stream(in.q, in.k, in.v, T, gqa, o, in.beta, f, &sg);
      const Vec b = ref::infini_attention_stream(in.q, k4, v4, T, mha, o, in.beta, f, &sm);
      CHECK(max_abs_diff(a, b) < 1e-12);
      for (size_t h = 0; h < 4; ++h) {
        const size_t g = h / sz(4 / hkv);
        for (size_t i = 0; i < 6 * 5; ++i) CHECK(std::abs(sm.M[h * 30 + i] - sg.M[g * 30 + i]) < 1e-12);
      }
    }
  }
}

TEST_CASE("reference: hand-computed local attention with RoPE (T=2, D=2, Dv=1)", "[reference]") {
  // One head, theta_0 = 1, neox pairs (0, 1), one segment, first segment local => A = A_dot.
  //   q0 = (1,0)  k0 = (1,0)  v0 = 2
  //   q1 = (0,1)  k1 = (1,1)  v1 = 4
  // Token 0 sees only k0: A0 = v0 = 2.
  // Token 1 at position 1: R(1) q1 = (-sin1, cos1); k0 stays (1,0); R(1) k1 = (cos1 - sin1, sin1 + cos1).
  //   s10 = -sin1 = -0.841471,  s11 = -sin1 cos1 + sin1^2 + cos1 sin1 + cos1^2 = 1
  //   scaled by 1/sqrt(2): a = -0.595010, b = 0.707107
  //   w0 = e^a / (e^a + e^b) = 0.213809,  A1 = 2 w0 + 4 (1 - w0) = 3.572382
  const AttentionShape s{1, 1, 2, 1};
  RopeFrequencies f;
  f.rotary_dim = 2;
  f.inv_freq = {1.0};
  const Vec q = {1, 0, 0, 1}, k = {1, 0, 1, 1}, v = {2, 4};
  InfiniOptions o;
  o.segment = 2;
  o.first_segment = FirstSegment::Local;
  const Vec out = ref::infini_attention_stream(q, k, v, 2, s, o, Vec{0.3}, f);
  const double a = -std::sin(1.0) / std::sqrt(2.0), b = 1 / std::sqrt(2.0);
  const double w0 = std::exp(a) / (std::exp(a) + std::exp(b));
  CHECK(out[0] == Approx(2.0).epsilon(1e-14));
  CHECK(out[1] == Approx(2 * w0 + 4 * (1 - w0)).epsilon(1e-14));
  CHECK(out[1] == Approx(3.5723819826).epsilon(1e-9));
  // Mix on the first segment with beta = 0 halves it.
  o.first_segment = FirstSegment::Mix;
  const Vec mixed = ref::infini_attention_stream(q, k, v, 2, s, o, Vec{0.0}, f);
  CHECK(mixed[1] == Approx(0.5 * 3.5723819826).epsilon(1e-9));
}

TEST_CASE("reference: hand-computed memory read and write (N=1, T=3, D=2, Dv=1)", "[reference]") {
  // Segments of one token, so A_dot = v_t; beta = 0 => g = 1/2, first segment mix.
  //   k0 = (1, 0)      sigma = (2, 1)      v0 = 3
  //   k1 = (-ln2, 1)   sigma = (1/2, 2)    v1 = -1   q1 = (0, 0)  sigma = (1, 1)
  //                                        v2 = 1    q2 = (0, 1)  sigma = (1, 2)
  // t=0: A_mem = 0, out = 1/2 * 3 = 1.5. Write (both rules): M = (6, 3), z = (2, 1).
  // t=1: A_mem = (6 + 3) / (2 + 1) = 3, out = (3 + -1) / 2 = 1.
  //   linear write: M = (6, 3) + (1/2, 2) * -1 = (5.5, 1)
  //   delta write: retrieval = (1/2*6 + 2*3) / (1/2*2 + 2*1) = 9/3 = 3, v - r = -4,
  //                M = (6, 3) + (1/2, 2) * -4 = (4, -5)
  //   both: z = (2.5, 3)
  // t=2: den = 2.5 + 2*3 = 8.5
  //   linear: num = 5.5 + 2*1 = 7.5,  A_mem = 15/17, out = (15/17 + 1)/2 = 16/17
  //   delta:  num = 4 + 2*-5 = -6,    A_mem = -12/17, out = (-12/17 + 1)/2 = 5/34
  const AttentionShape s{1, 1, 2, 1};
  const Vec q = {0.5, -0.25, 0, 0, 0, 1}, k = {1, 0, -std::log(2.0), 1, 0.3, 0.7}, v = {3, -1, 1};
  RopeFrequencies f;
  f.rotary_dim = 2;
  f.inv_freq = {1.0};
  InfiniOptions o;
  o.segment = 1;
  for (UpdateRule rule : {UpdateRule::Linear, UpdateRule::Delta}) {
    o.update = rule;
    ref::MemoryState st;
    const Vec out = ref::infini_attention_stream(q, k, v, 3, s, o, Vec{0.0}, f, &st);
    CHECK(out[0] == Approx(1.5).epsilon(1e-14));
    CHECK(out[1] == Approx(1.0).epsilon(1e-14));
    ref::MemoryState two;
    ref::infini_attention_stream(rows(q, 0, 2, 1, 2), rows(k, 0, 2, 1, 2), rows(v, 0, 2, 1, 1), 2, s, o, Vec{0.0},
                                 f, &two);
    CHECK(two.z[0] == Approx(2.5).epsilon(1e-14));
    CHECK(two.z[1] == Approx(3.0).epsilon(1e-14));
    if (rule == UpdateRule::Linear) {
      CHECK(two.M[0] == Approx(5.5).epsilon(1e-14));
      CHECK(two.M[1] == Approx(1.0).epsilon(1e-14));
      CHECK(out[2] == Approx(16.0 / 17.0).epsilon(1e-14));
    } else {
      CHECK(two.M[0] == Approx(4.0).epsilon(1e-14));
      CHECK(two.M[1] == Approx(-5.0).epsilon(1e-14));
      CHECK(out[2] == Approx(5.0 / 34.0).epsilon(1e-14));
    }
  }
  // The opposite gate sign and local first segment: t=0 outputs v0, later tokens swap the weights
  // (equal here since g = 1/2), so check with beta = ln 3 (g = 3/4) instead: t=1 memory weight
  // 1 - g = 1/4 => out = 3/4 * -1 + 1/4 * 3 = 0.
  o.update = UpdateRule::Linear;
  o.first_segment = FirstSegment::Local;
  o.gate_sign = GateSign::Local;
  const Vec out = ref::infini_attention_stream(q, k, v, 3, s, o, Vec{std::log(3.0)}, f);
  CHECK(out[0] == Approx(3.0).epsilon(1e-14));
  CHECK(std::abs(out[1]) < 1e-14);
}

TEST_CASE("reference: bad arguments throw infini::Error", "[reference]") {
  const AttentionShape s{3, 2, 4, 4};  // 3 % 2 != 0
  const Vec q(3 * 4), k(2 * 4), v(2 * 4);
  CHECK_THROWS_AS(ref::causal_attention(q, k, v, 1, s), infini::Error);
  CHECK_THROWS_AS(ref::MemoryState::zeros(s), infini::Error);
  const AttentionShape ok{2, 1, 4, 4};
  CHECK_THROWS_AS(ref::causal_attention(Vec(7), Vec(4), Vec(4), 1, ok), infini::Error);
  CHECK_THROWS_AS(ref::memory_read(Vec(8), 1, ok, ref::MemoryState::zeros(AttentionShape{2, 1, 4, 3})),
                  infini::Error);
  Vec x(8);
  RopeFrequencies f = default_freqs(4);
  CHECK_THROWS_AS(ref::apply_rope(x, 1, 2, 4, default_freqs(6), RopeLayout::Neox, 0), infini::Error);
  f.inv_freq.pop_back();
  CHECK_THROWS_AS(ref::apply_rope(x, 1, 2, 4, f, RopeLayout::Neox, 0), infini::Error);
  InfiniOptions o;
  o.segment = 0;
  CHECK_THROWS_AS(ref::LayerReference(ok, o, Vec(2), default_freqs(4)), infini::Error);
  o.segment = 4;
  CHECK_THROWS_AS(ref::LayerReference(ok, o, Vec(3), default_freqs(4)), infini::Error);
}
