// The sampler against what its options define: greedy is the argmax, top-k 1 is greedy, draws
// follow softmax(logits / T) (checked by frequencies over many draws with a 5-sigma bound), top-k
// and top-p never return a token outside their set, and a seed fixes the sequence.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "infini/error.hpp"
#include "model/sampler.hpp"

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
