// The sampler against what its options define: greedy is the argmax, top-k 1 is greedy, draws
// follow softmax(logits / T) (checked by frequencies over many draws with a 5-sigma bound), top-k
// and top-p never return a token outside their set, and a seed fixes the sequence.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "infini/error.hpp"
#include "sampling/sampler.hpp"

namespace infini::model {
namespace {

const std::vector<float> kLogits = {0.5f, 2.0f, -1.0f, 1.0f, 2.0f, 0.0f};

TEST_CASE("sampler: greedy and top-k 1 pick the first maximum", "[sampler]") {
  Sampler greedy({.temperature = 0, .top_k = 0, .top_p = 1, .seed = 1});
  CHECK(greedy.sample(kLogits) == 1);
  Sampler one({.temperature = 1.5, .top_k = 1, .top_p = 1, .seed = 2});
  for (int i = 0; i < 50; ++i) CHECK(one.sample(kLogits) == 1);
}

TEST_CASE("sampler: draws follow softmax(logits / T)", "[sampler]") {
  const double t = 0.7;
  Sampler s({.temperature = t, .top_k = 0, .top_p = 1, .seed = 42});
  const int draws = 200000;
  std::vector<int> count(kLogits.size(), 0);
  for (int i = 0; i < draws; ++i) ++count[size_t(s.sample(kLogits))];
  double z = 0;
  for (float v : kLogits) z += std::exp(v / t);
  for (size_t i = 0; i < kLogits.size(); ++i) {
    const double p = std::exp(kLogits[i] / t) / z;
    const double sigma = std::sqrt(draws * p * (1 - p));
    INFO("token " << i << " count " << count[i] << " expected " << draws * p);
    CHECK(std::abs(count[i] - draws * p) <= 5 * sigma + 1);
  }
}

TEST_CASE("sampler: top-k and top-p keep to their sets", "[sampler]") {
  Sampler k2({.temperature = 5, .top_k = 3, .top_p = 1, .seed = 3});
  for (int i = 0; i < 2000; ++i) {
    const int32_t t = k2.sample(kLogits);
    CHECK((t == 1 || t == 4 || t == 3));
  }
  // With T = 1 the two 2.0 logits hold 2 e^2 / z ~ 0.67 of the mass: top-p 0.6 keeps just them.
  Sampler p({.temperature = 1, .top_k = 0, .top_p = 0.6, .seed = 4});
  for (int i = 0; i < 2000; ++i) {
    const int32_t t = p.sample(kLogits);
    CHECK((t == 1 || t == 4));
  }
}

// With top-k off the draw is over the whole row (whole_row_draw): without ranking it when top-p is
// 1, ranking only the nucleus otherwise. Against float64: each likely token's frequency within 5
// sigma of its probability renormalised over the nucleus, and nothing drawn from past the nucleus
// (a rank or two of slack for the f32 weights at its edge).
TEST_CASE("sampler: a whole-row draw follows the float64 softmax within its nucleus", "[sampler]") {
  std::mt19937 rng(17);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> row(3000);
  for (float& l : row) l = normal(rng);
  row[7] = -std::numeric_limits<float>::infinity();
  const double t = 0.9;
  std::vector<int32_t> rank(row.size());
  std::iota(rank.begin(), rank.end(), 0);
  std::sort(rank.begin(), rank.end(), [&](int32_t a, int32_t b) { return row[size_t(a)] > row[size_t(b)] || (row[size_t(a)] == row[size_t(b)] && a < b); });
  const double top = row[size_t(rank[0])];
  for (const double top_p : {1.0, 0.8, 0.3}) {
    std::vector<double> p(row.size());
    double z = 0;
    for (size_t i = 0; i < row.size(); ++i) z += p[i] = std::exp((double(row[i]) - top) / t);
    size_t keep = 0;
    double held = 0, nucleus = 0;
    while (keep < rank.size() && held < top_p * z) held += p[size_t(rank[keep++])];
    for (size_t i = 0; i < keep; ++i) nucleus += p[size_t(rank[i])];
    std::vector<size_t> where(row.size());
    for (size_t r = 0; r < rank.size(); ++r) where[size_t(rank[r])] = r;
    Sampler s({.temperature = t, .top_k = 0, .top_p = top_p, .seed = 23});
    const int draws = 30000;
    std::vector<int> count(row.size(), 0);
    size_t past = 0;
    for (int i = 0; i < draws; ++i) {
      const int32_t id = s.sample(row);
      ++count[size_t(id)];
      past = std::max(past, where[size_t(id)]);
    }
    INFO("top-p " << top_p << ": nucleus of " << keep << ", furthest rank drawn " << past);
    CHECK(past < keep + 2);
    CHECK(count[7] == 0);
    for (size_t r = 0; r < keep; ++r) {
      const size_t id = size_t(rank[r]);
      const double q = p[id] / nucleus;
      if (q < 0.01) continue;
      const double sigma = std::sqrt(draws * q * (1 - q));
      INFO("rank " << r << " count " << count[id] << " expected " << draws * q);
      CHECK(std::abs(count[id] - draws * q) <= 5 * sigma + 1);
    }
  }
  // Degenerate rows: one token; every token -inf (all alike); one +inf (only it).
  Sampler s({.temperature = 1, .top_k = 0, .top_p = 0.5, .seed = 1});
  CHECK(s.sample(std::vector<float>{0.25f}) == 0);
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<int> seen(3, 0);  // top-p 0.5 of three equal weights: the first two (ties to the lower id)
  for (int i = 0; i < 300; ++i) ++seen[size_t(s.sample(std::vector<float>{-inf, -inf, -inf}))];
  CHECK((seen[0] > 0 && seen[1] > 0 && seen[2] == 0));
  for (int i = 0; i < 50; ++i) CHECK(s.sample(std::vector<float>{1.0f, inf, 3.0f}) == 1);
}

TEST_CASE("sampler: a seed fixes the sequence; bad options and logits are refused", "[sampler]") {
  Sampler a({.temperature = 1, .top_k = 0, .top_p = 1, .seed = 9}), b({.temperature = 1, .top_k = 0, .top_p = 1, .seed = 9});
  Sampler c({.temperature = 1, .top_k = 0, .top_p = 1, .seed = 10});
  std::vector<int32_t> sa, sb, sc;
  for (int i = 0; i < 100; ++i) {
    sa.push_back(a.sample(kLogits));
    sb.push_back(b.sample(kLogits));
    sc.push_back(c.sample(kLogits));
  }
  CHECK(sa == sb);
  CHECK(sa != sc);
  CHECK_THROWS_AS(Sampler({.temperature = -1}), Error);
  CHECK_THROWS_AS(Sampler({.top_k = -2}), Error);
  CHECK_THROWS_AS(Sampler({.top_p = 0}), Error);
  Sampler s({});
  CHECK_THROWS_AS(s.sample(std::vector<float>{}), Error);
  CHECK_THROWS_AS(s.sample(std::vector<float>{1.0f, std::nanf("")}), Error);
}

}  // namespace
}  // namespace infini::model
