// rope_frequencies() against formulas written here a second time, in a different form (angles
// via exp/log, the llama3 and yarn rules as wavelength bands and rotation counts), plus values
// computed independently in Python. The kernels use these frequencies, so they must be exact.
#include <catch2/catch.hpp>
#include <cmath>
#include <numbers>

#include "infini/error.hpp"
#include "infini/rope_config.hpp"

using namespace infini::rope;
using Catch::Matchers::WithinRel;

namespace {

constexpr double kPi = std::numbers::pi;

double theta(double base, int i, int d) { return std::exp(-std::log(base) * (2.0 * i) / d); }

RopeConfig config(RopeType type, double base, double factor = 1.0, int64_t orig = 0) {
  RopeConfig c;
  c.type = type;
  c.base = base;
  c.factor = factor;
  c.original_max_position_embeddings = orig;
  return c;
}

}  // namespace

TEST_CASE("rope default frequencies are base^(-2i/d)", "[rope]") {
  const auto f = rope_frequencies(config(RopeType::Default, 10000.0), 128, 0);
  REQUIRE(f.rotary_dim == 128);
  REQUIRE(f.inv_freq.size() == 64);
  REQUIRE(f.attention_factor == 1.0);
  for (int i = 0; i < 64; ++i) REQUIRE_THAT(f.inv_freq[size_t(i)], WithinRel(theta(10000.0, i, 128), 1e-14));
  REQUIRE(f.inv_freq[0] == 1.0);
  // Llama-2: the last pair's wavelength is 2 pi 10000^(126/128) (Python: 54410.143...).
  REQUIRE_THAT(2 * kPi / f.inv_freq[63], WithinRel(54410.14313077674, 1e-12));
}

TEST_CASE("rope partial rotary dim rotates only the first dims", "[rope]") {
  RopeConfig c = config(RopeType::Default, 10000.0);
  c.rotary_dim = 32;
  const auto f = rope_frequencies(c, 128, 0);
  REQUIRE(f.rotary_dim == 32);
  REQUIRE(f.inv_freq.size() == 16);
  for (int i = 0; i < 16; ++i) REQUIRE_THAT(f.inv_freq[size_t(i)], WithinRel(theta(10000.0, i, 32), 1e-14));
}

TEST_CASE("rope type none has no rotated dims", "[rope]") {
  const auto f = rope_frequencies(config(RopeType::None, 10000.0), 64, 0);
  REQUIRE(f.rotary_dim == 0);
  REQUIRE(f.inv_freq.empty());
  REQUIRE(f.attention_factor == 1.0);
}

TEST_CASE("rope linear divides every frequency by the factor", "[rope]") {
  const auto f = rope_frequencies(config(RopeType::Linear, 10000.0, 4.0), 64, 0);
  for (int i = 0; i < 32; ++i) REQUIRE_THAT(f.inv_freq[size_t(i)] * 4.0, WithinRel(theta(10000.0, i, 64), 1e-14));
}

TEST_CASE("rope ntk raises the base to base*factor^(d/(d-2))", "[rope]") {
  const auto f = rope_frequencies(config(RopeType::Ntk, 10000.0, 8.0), 128, 0);
  // The slowest pair is interpolated by exactly the factor (that is what d/(d-2) is for).
  REQUIRE_THAT(theta(10000.0, 63, 128) / f.inv_freq[63], WithinRel(8.0, 1e-12));
  REQUIRE(f.inv_freq[0] == 1.0);
  const double b = 10000.0 * std::exp(std::log(8.0) * 128.0 / 126.0);
  for (int i = 0; i < 64; ++i) REQUIRE_THAT(f.inv_freq[size_t(i)], WithinRel(theta(b, i, 128), 1e-13));
}

TEST_CASE("rope dynamic ntk follows the current length", "[rope]") {
  const RopeConfig c = config(RopeType::Dynamic, 10000.0, 2.0, 4096);
  // Up to L0 it is the default RoPE.
  for (int64_t L : {int64_t{0}, int64_t{100}, int64_t{4096}}) {
    const auto f = rope_frequencies(c, 128, L);
    for (int i = 0; i < 64; ++i) REQUIRE_THAT(f.inv_freq[size_t(i)], WithinRel(theta(10000.0, i, 128), 1e-14));
  }
  // L = 3 L0 with factor 2: base * (2*3 - 1)^(128/126) = base * 5^(64/63).
  const auto f = rope_frequencies(c, 128, 3 * 4096);
  const double b = 10000.0 * std::pow(5.0, 64.0 / 63.0);
  for (int i = 0; i < 64; ++i) REQUIRE_THAT(f.inv_freq[size_t(i)], WithinRel(theta(b, i, 128), 1e-13));
}

TEST_CASE("rope yarn blends interpolation and extrapolation by rotation count", "[rope]") {
  RopeConfig c = config(RopeType::Yarn, 10000.0, 4.0, 4096);
  const auto f = rope_frequencies(c, 128, 0);
  // Pair i turns L0 / (2 pi 10000^(i/64)) times within L0. It turns 32 times at i = 20.94 and
  // once at i = 45.03 (Python), so the ramp runs from floor 20 to ceil 46 over 26 pairs.
  const auto rotations = [](int i) { return 4096.0 / (2 * kPi / theta(10000.0, i, 128)); };
  REQUIRE(rotations(20) > 32.0);
  REQUIRE(rotations(21) < 32.0);
  REQUIRE(rotations(45) > 1.0);
  REQUIRE(rotations(46) < 1.0);
  for (int i = 0; i < 64; ++i) {
    const double t = theta(10000.0, i, 128);
    double expected = t;                      // fast pairs: extrapolate
    if (i >= 46) expected = t / 4.0;          // slow pairs: interpolate
    else if (i > 20) {
      const double w = (i - 20) / 26.0;       // weight of the interpolated frequency
      expected = w * t / 4.0 + (1 - w) * t;
    }
    REQUIRE_THAT(f.inv_freq[size_t(i)], WithinRel(expected, 1e-13));
  }
  REQUIRE_THAT(f.inv_freq[33], WithinRel(0.625 * theta(10000.0, 33, 128), 1e-13));
  REQUIRE_THAT(f.attention_factor, WithinRel(1.0 + 0.1 * std::log(4.0), 1e-15));

  c.attention_factor = 0.75;
  REQUIRE(rope_frequencies(c, 128, 0).attention_factor == 0.75);
  c.attention_factor.reset();
  c.factor = 1.0;  // no scaling: the default RoPE with attention factor 1
  const auto g = rope_frequencies(c, 128, 0);
  REQUIRE(g.attention_factor == 1.0);
  for (int i = 0; i < 64; ++i) REQUIRE_THAT(g.inv_freq[size_t(i)], WithinRel(theta(10000.0, i, 128), 1e-14));
}

TEST_CASE("rope yarn ramp bounds are clamped like Hugging Face", "[rope]") {
  // L0 = 16, d = 64: the fast bound 32*ln(16/(64 pi))/ln(1e4) < 0 clamps to 0; the slow bound
  // 32*ln(16/(2 pi))/ln(1e4) = 3.25 rounds up to 4.
  RopeConfig c = config(RopeType::Yarn, 10000.0, 2.0, 16);
  auto f = rope_frequencies(c, 64, 0);
  REQUIRE(f.inv_freq[0] == 1.0);
  REQUIRE_THAT(f.inv_freq[2], WithinRel(0.75 * theta(10000.0, 2, 64), 1e-13));
  for (int i = 4; i < 32; ++i) REQUIRE_THAT(f.inv_freq[size_t(i)], WithinRel(theta(10000.0, i, 64) / 2, 1e-13));
  // A huge L0 puts the fast bound (77) above the slow bound clamped to d-1 (63); HF then
  // interpolates every pair, and so do we (bug-compatible on purpose).
  c.original_max_position_embeddings = int64_t{1} << 40;
  f = rope_frequencies(c, 64, 0);
  for (int i = 0; i < 32; ++i) REQUIRE_THAT(f.inv_freq[size_t(i)], WithinRel(theta(10000.0, i, 64) / 2, 1e-13));
}

TEST_CASE("rope llama3 matches the Llama 3.1 wavelength bands", "[rope]") {
  RopeConfig c = config(RopeType::Llama3, 500000.0, 8.0, 8192);
  c.low_freq_factor = 1.0;
  c.high_freq_factor = 4.0;
  const auto f = rope_frequencies(c, 128, 0);
  REQUIRE(f.attention_factor == 1.0);
  for (int i = 0; i < 64; ++i) {
    const double t = theta(500000.0, i, 128), wavelength = 2 * kPi / t;
    double expected;
    if (wavelength < 8192.0 / 4.0) expected = t;
    else if (wavelength > 8192.0 / 1.0) expected = t / 8.0;
    else {
      const double s = (8192.0 / wavelength - 1.0) / (4.0 - 1.0);
      expected = t * (s + (1.0 - s) / 8.0);
    }
    REQUIRE_THAT(f.inv_freq[size_t(i)], WithinRel(expected, 1e-13));
  }
  // Values from an independent Python script: pairs 29..32 lie in the smooth band.
  REQUIRE_THAT(f.inv_freq[20], WithinRel(0.016560440080994446, 1e-13));
  REQUIRE_THAT(f.inv_freq[30], WithinRel(0.0013718935677611381, 1e-13));
  REQUIRE_THAT(f.inv_freq[32], WithinRel(0.0005248461609929546, 1e-13));
  REQUIRE_THAT(f.inv_freq[33], WithinRel(0.00031269375038406517, 1e-13));
  REQUIRE_THAT(f.inv_freq[63], WithinRel(3.068925988914511e-07, 1e-13));
}

TEST_CASE("rope angles stay accurate to 1e-5 rad at long positions", "[rope]") {
  // docs/design.md §2.4: pos * theta_i accurate to 1e-5 rad. Doubles give ~1e-16 relative, so even at
  // position 2^24 the angle error is ~1e-9 rad.
  const auto f = rope_frequencies(config(RopeType::Default, 10000.0), 128, 0);
  const double pos = 16777216.0;
  for (int i = 0; i < 64; ++i)
    REQUIRE(std::abs(pos * f.inv_freq[size_t(i)] - pos * theta(10000.0, i, 128)) < 1e-5);
}

TEST_CASE("rope configs that do not fit are rejected with a one-line reason", "[rope]") {
  const auto rejects = [](RopeConfig c, int head_dim, const char* what) {
    try {
      rope_frequencies(c, head_dim, 0);
    } catch (const infini::Error& e) {
      const std::string msg = e.what();
      INFO(msg);
      REQUIRE(msg.find('\n') == std::string::npos);
      REQUIRE(msg.find(what) != std::string::npos);
      return;
    }
    FAIL("accepted a bad config: " << what);
  };
  RopeConfig c = config(RopeType::Default, 10000.0);
  rejects(c, 0, "head dim");
  rejects(c, 63, "even");
  c.rotary_dim = 130;
  rejects(c, 128, "exceeds");
  c.rotary_dim = -2;
  rejects(c, 128, "rotary dim");
  c = config(RopeType::Default, 1.0);
  rejects(c, 128, "base");
  c = config(RopeType::Default, std::nan(""));
  rejects(c, 128, "base");
  rejects(config(RopeType::Linear, 10000.0, 0.5), 128, "factor");
  rejects(config(RopeType::Ntk, 10000.0, 2.0), 2, "rotary dim > 2");
  rejects(config(RopeType::Dynamic, 10000.0, 2.0, 0), 128, "original context");
  rejects(config(RopeType::Yarn, 10000.0, 2.0, 0), 128, "original context");
  rejects(config(RopeType::Llama3, 10000.0, 8.0), 128, "original context");
  c = config(RopeType::Yarn, 10000.0, 2.0, 4096);
  c.beta_fast = 0.5;
  rejects(c, 128, "beta");
  c = config(RopeType::Yarn, 10000.0, 2.0, 4096);
  c.attention_factor = -1.0;
  rejects(c, 128, "attention factor");
  c = config(RopeType::Llama3, 10000.0, 8.0, 8192);
  c.high_freq_factor = 1.0;
  rejects(c, 128, "high_freq_factor");
  // Scaling fields are ignored where they do not apply.
  c = config(RopeType::Default, 10000.0, 0.25);
  REQUIRE(rope_frequencies(c, 128, 0).inv_freq.size() == 64);
}

TEST_CASE("rope type and layout names follow Hugging Face", "[rope]") {
  REQUIRE(std::string(rope_type_name(RopeType::Yarn)) == "yarn");
  REQUIRE(std::string(rope_type_name(RopeType::Llama3)) == "llama3");
  REQUIRE(std::string(rope_type_name(RopeType::Ntk)) == "ntk");
  REQUIRE(std::string(rope_layout_name(RopeLayout::Neox)) == "neox");
  REQUIRE(std::string(rope_layout_name(RopeLayout::Interleaved)) == "interleaved");
}

TEST_CASE("rope frequency divisors (GGUF rope_freqs) give Llama 3.1's scaling as HF computes it", "[rope]") {
  // The divisors a GGUF converter writes for Llama 3.1 scaling, from the rope_scaling fields:
  // 1 for wavelengths under L0 / high_freq_factor, the factor above L0 / low_freq_factor, and
  // 1 / ((1 - s) / factor + s) between, s = (L0 / wavelength - low) / (high - low).
  RopeConfig llama3;
  llama3.type = RopeType::Llama3;
  llama3.base = 10000;
  llama3.factor = 8;
  llama3.original_max_position_embeddings = 64;
  llama3.low_freq_factor = 1;
  llama3.high_freq_factor = 4;
  const int d = 16;
  RopeConfig divided;
  divided.base = 10000;
  for (int i = 0; i < d / 2; ++i) {
    const double wavelength = 2 * std::numbers::pi * std::pow(10000.0, 2.0 * i / d);
    double divisor = 1;
    if (wavelength > 64.0) divisor = 8;
    else if (wavelength >= 16.0) {
      const double s = (64.0 / wavelength - 1) / (4 - 1);
      divisor = 1 / ((1 - s) / 8 + s);
    }
    divided.frequency_divisors.push_back(divisor);
  }
  const RopeFrequencies want = rope_frequencies(llama3, d, 0), got = rope_frequencies(divided, d, 0);
  REQUIRE(got.inv_freq.size() == want.inv_freq.size());
  for (size_t i = 0; i < got.inv_freq.size(); ++i) CHECK_THAT(got.inv_freq[i], WithinRel(want.inv_freq[i], 1e-14));
  CHECK(divided.frequency_divisors[0] == 1);  // the bands all occur at this size
  CHECK(divided.frequency_divisors[1] > 1);
  CHECK(divided.frequency_divisors[1] < 8);
  CHECK(divided.frequency_divisors[7] == 8);

  divided.frequency_divisors.pop_back();
  CHECK_THROWS_WITH(rope_frequencies(divided, d, 0), Catch::Contains("7 frequency divisors for 8 frequencies"));
  divided.frequency_divisors.push_back(0);
  CHECK_THROWS_WITH(rope_frequencies(divided, d, 0), Catch::Contains("frequency divisor 7 is"));
}
