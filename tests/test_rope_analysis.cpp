// The published figures of Liu et al. and Men et al., and what Men et al.'s certified base-bound search
// promises, checked against sums of std::cos written out here (no recurrence, no branch and bound).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <numbers>
#include <string>

#include "infini/error.hpp"
#include "rope_analysis/base_bound.hpp"
#include "rope_analysis/rope_analysis.hpp"
#include "rope_analysis/svg_plot.hpp"

using namespace infini::rope;
using Catch::Matchers::WithinRel;

namespace {

// sum_i cos(m base^(-2i/d)), straight from the definition.
double direct_sum(int d, double base, int64_t m) {
  double s = 0;
  for (int i = 0; i < d / 2; ++i) s += std::cos(static_cast<double>(m) * std::pow(base, -2.0 * i / d));
  return s;
}

int64_t direct_first_nonpositive(int d, double base, int64_t L) {
  for (int64_t m = 0; m <= L; ++m)
    if (direct_sum(d, base, m) <= 0) return m;
  return -1;
}

std::vector<double> theta(int d, double base) {
  std::vector<double> t;
  for (int i = 0; i < d / 2; ++i) t.push_back(std::pow(base, -2.0 * i / d));
  return t;
}

// The first m with sum_i cos(m theta_i) <= 0 at this base, or -1: direct sums up to L = 4K, above
// that first_nonpositive() (checked against direct sums below), which is far faster.
int64_t fails_at(int d, double base, int64_t L) {
  return L <= 4096 ? direct_first_nonpositive(d, base, L) : first_nonpositive(theta(d, base), L);
}

// What a certified result promises: the bounds, every island's ends and the bases proven
// infeasible around them; islands sorted, apart, below the stable run.
void check_bound(const BaseBound& b, int d, int64_t L) {
  INFO("d " << d << ", L " << L);
  REQUIRE(b.lowest_feasible <= b.stable);
  REQUIRE(b.stable <= b.certified);
  REQUIRE(b.lowest_limit <= b.lowest_feasible);
  REQUIRE(b.stable_limit < b.stable);
  CHECK(fails_at(d, b.lowest_feasible, L) < 0);
  CHECK(fails_at(d, b.stable, L) < 0);
  CHECK(fails_at(d, b.stable_limit, L) >= 0);
  if (b.lowest_limit > 1.0) CHECK(fails_at(d, b.lowest_limit, L) >= 0);
  CHECK(fails_at(d, b.stable_limit, L) == b.below_stable_fails_at);
  double previous = 1.0;
  for (const Island& r : b.islands) {
    INFO("island " << r.low << ".." << r.high);
    CHECK(previous <= r.low_limit);
    CHECK(r.low_limit < r.low);
    CHECK(r.low <= r.high);
    CHECK(r.high < r.high_limit);
    CHECK(r.high_limit <= b.stable_limit);
    CHECK(fails_at(d, r.low, L) < 0);
    CHECK(fails_at(d, r.high, L) < 0);
    CHECK(fails_at(d, r.low_limit, L) >= 0);
    CHECK(fails_at(d, r.high_limit, L) >= 0);
    previous = r.high_limit;
  }
  if (b.lowest_certified && b.undecided.empty()) {
    // Each bracket is a few cells of the precision wide.
    CHECK(b.lowest_feasible / b.lowest_limit - 1 < 8 * b.precision);
    CHECK(b.stable / b.stable_limit - 1 < 8 * b.precision);
    for (const Island& r : b.islands) {
      CHECK(r.low / r.low_limit - 1 < 8 * b.precision);
      CHECK(r.high_limit / r.high - 1 < 8 * b.precision);
    }
  }
}

// Every base of a grid `step` apart in ln(base), from below the lowest bound to above the stable
// one, checked at every m (first_nonpositive, itself checked against direct sums below): the
// feasible ones must lie in an island or the stable run, the infeasible ones outside them (up to
// the brackets around each end). So every island the grid finds, the search found.
void check_grid(int d, int64_t L, double step) {
  INFO("d " << d << ", L " << L);
  const BaseBound b = rope_base_bound(d, L);
  check_bound(b, d, L);
  REQUIRE(b.lowest_certified);
  REQUIRE(b.undecided.empty());
  int feasible_points = 0;
  for (double t = std::log(b.lowest_limit) - 0.05; t < std::log(b.stable) + 0.02; t += step) {
    const double base = std::exp(t);
    const bool ok = first_nonpositive(theta(d, base), L) < 0;
    feasible_points += ok;
    bool inside = base >= b.stable, near_end = (base > b.stable_limit && base < b.stable) ||
                                               (base > b.lowest_limit && base < b.lowest_feasible);
    for (const Island& r : b.islands) {
      inside |= base >= r.low && base <= r.high;
      near_end |= (base > r.low_limit && base < r.low) || (base > r.high && base < r.high_limit);
    }
    if (near_end) continue;
    INFO("base " << base);
    REQUIRE(ok == inside);
  }
  REQUIRE(feasible_points > 0);
}

}  // namespace

TEST_CASE("rope coverage: Llama-2 sees 92 dims complete a period in 4096 tokens", "[rope]") {
  const Coverage c = rope_coverage(128, 10000.0, 4096.0);
  REQUIRE(c.complete_dims == 92);
  REQUIRE(c.complete_pairs == 46);
  REQUIRE(c.critical_dim == 92);
  // The blog's example: pair 46 has period 2 pi 10000^(92/128) = 4711 > 4096.
  REQUIRE_THAT(c.period[46], WithinRel(4711.0, 1e-3));
  REQUIRE(c.period[45] <= 4096.0);
  // Base 500 puts every period inside 4K (the blog's other example).
  REQUIRE(rope_coverage(128, 500.0, 4096.0).complete_dims == 128);
}

TEST_CASE("rope Liu et al. extrapolation base: Llama-3-8B 8K -> 262K and -> 1M", "[rope]") {
  REQUIRE(std::llround(liu_extrapolation_base(500000.0, 8192.0, 262144.0)) == 283461213);
  REQUIRE(std::llround(liu_extrapolation_base(500000.0, 8192.0, 1048576.0)) == 3580165449LL);
  REQUIRE_THAT(liu_extrapolation_base(500000.0, 8192.0, 8192.0), WithinRel(500000.0, 1e-12));
  REQUIRE(critical_dimension(128, 500000.0, 8192.0) == 70);
  REQUIRE(critical_dimension(128, 10000.0, 1e12) == 128);  // clamped to d
}

TEST_CASE("rope NTK-aware base is base * s^(d/(d-2))", "[rope]") {
  REQUIRE_THAT(ntk_base(128, 500000.0, 32.0), WithinRel(500000.0 * std::pow(32.0, 128.0 / 126.0), 1e-14));
  REQUIRE_THAT(ntk_base(128, 500000.0, 32.0), WithinRel(16904847.299122173, 1e-12));  // Python
  REQUIRE(ntk_base(64, 10000.0, 1.0) == 10000.0);
}

TEST_CASE("rope analyses reject bad input with one line", "[rope]") {
  REQUIRE_THROWS_AS(rope_coverage(127, 10000.0, 4096.0), infini::Error);
  REQUIRE_THROWS_AS(rope_coverage(128, 1.0, 4096.0), infini::Error);
  REQUIRE_THROWS_AS(rope_coverage(128, 10000.0, 6.0), infini::Error);
  REQUIRE_THROWS_AS(liu_extrapolation_base(500000.0, 0.0, 8192.0), infini::Error);
  REQUIRE_THROWS_AS(ntk_base(2, 10000.0, 2.0), infini::Error);
  REQUIRE_THROWS_AS(ntk_base(128, 10000.0, 0.5), infini::Error);
  REQUIRE_THROWS_AS(rope_base_bound(4, 1024), infini::Error);
  REQUIRE_THROWS_AS(rope_base_bound(128, 0), infini::Error);
  REQUIRE_THROWS_AS(rope_base_bound(128, 1024, {0.0}), infini::Error);
  REQUIRE_THROWS_AS(rope_base_bound(128, 1024, {0.7}), infini::Error);
  REQUIRE_THROWS_AS(rope_base_bound(128, 1024, {1e-6, -1}), infini::Error);
  try {
    rope_coverage(128, -3.0, 4096.0);
  } catch (const infini::Error& e) {
    REQUIRE(std::string(e.what()).find('\n') == std::string::npos);
  }
}

TEST_CASE("rope cos sum curve and first failure agree with direct sums", "[rope]") {
  const auto curve = cos_sum_curve(theta(64, 20000.0), 9000);
  for (int64_t m : {0, 1, 17, 4095, 4096, 4097, 8999, 9000})
    REQUIRE(std::abs(curve[size_t(m)] - direct_sum(64, 20000.0, m)) < 1e-9);
  // Bases around the 2K bound, where the sum grazes zero, and far from it.
  for (double base : {50.0, 3000.0, 9000.0, 14000.0, 15300.0, 16000.0, 19000.0, 23000.0, 1e6}) {
    INFO("base " << base);
    REQUIRE(first_nonpositive(theta(128, base), 2048) == direct_first_nonpositive(128, base, 2048));
  }
}

TEST_CASE("rope base bound: the 2.7e4 island of d=128, L=4K that a grid search missed", "[rope]") {
  const BaseBound b = rope_base_bound(128, 4096);
  check_bound(b, 128, 4096);
  REQUIRE(b.lowest_certified);
  REQUIRE(b.undecided.empty());
  // The bases: 26953 (min 0.0093 at m = 4012) and 28630 (min 0.0044 at m = 3641) are
  // feasible, and each lies in an island.
  for (double base : {26953.0, 28630.0}) {
    INFO("base " << base);
    REQUIRE(direct_first_nonpositive(128, base, 4096) < 0);
    REQUIRE(std::any_of(b.islands.begin(), b.islands.end(),
                        [&](const Island& r) { return r.low <= base && base <= r.high; }));
  }
  // The lowest feasible base is the low end of the first island, about 26952.34.
  REQUIRE(b.lowest_feasible == b.islands.front().low);
  REQUIRE(b.lowest_feasible > 26952.0);
  REQUIRE(b.lowest_feasible < 26953.0);
  REQUIRE(b.lowest_feasible / b.lowest_limit - 1 <= 1e-6 * 4);
  // Men et al. report 2.7e4 for 4K (d = 128).
  REQUIRE(std::round(b.lowest_feasible / 1e3) == 27);
  // The old grid search's "lowest" 39206.1 is feasible but lies in a later island.
  REQUIRE(direct_first_nonpositive(128, 39206.2, 4096) < 0);
  REQUIRE(b.islands.size() >= 4);
  REQUIRE(b.islands[3].low < 39206.2);
  REQUIRE(b.islands[3].high > 39206.2);
  // And the run feasible from 58789.5 up.
  REQUIRE(b.stable > 58789.0);
  REQUIRE(b.stable < 58790.0);
}

TEST_CASE("rope base bound: Men et al.'s 1.6e4 for 2K is feasible, but not the lowest", "[rope]") {
  const BaseBound b = rope_base_bound(128, 2048);
  check_bound(b, 128, 2048);
  REQUIRE(b.lowest_certified);
  REQUIRE(direct_first_nonpositive(128, 16000.0, 2048) < 0);
  REQUIRE(std::any_of(b.islands.begin(), b.islands.end(),
                      [](const Island& r) { return r.low <= 16000.0 && 16000.0 <= r.high; }));
  REQUIRE(b.lowest_feasible < 1.2e4);  // about 11587.25, an island below theirs
  REQUIRE(direct_first_nonpositive(128, b.lowest_feasible, 2048) < 0);
}

TEST_CASE("rope base bound finds every island a fine grid of bases finds, d = 64", "[rope]") {
  check_grid(64, 1024, 2e-4);
  check_grid(64, 4096, 3e-4);
  check_grid(64, 16384, 5e-4);
}

TEST_CASE("rope base bound finds every island a fine grid of bases finds, d = 128", "[rope]") {
  check_grid(128, 1024, 2e-4);
  check_grid(128, 4096, 3e-4);  // the 26952..26973 island is 7.7e-4 wide in ln(base)
  check_grid(128, 16384, 5e-4);
}

TEST_CASE("rope base bound: a coarse precision reports undecided rather than a wrong lowest base", "[rope]") {
  // Coarse searches miss narrow islands (the lowest of L = 4K is 7.7e-4 wide in ln(base)). Whatever
  // they report must still hold: the true lowest base (bracketed by the default search) lies in
  // [lowest_limit, lowest_feasible], and a lowest base not certified has an undecided interval
  // below it that may hold an island or the end of one.
  for (const int64_t L : {4096, 8192}) {
    const BaseBound fine = rope_base_bound(128, L);
    REQUIRE(fine.lowest_certified);
    int uncertain = 0;
    for (const double precision : L == 4096 ? std::vector<double>{0.3, 0.1, 3e-2, 1e-2, 3e-3} : std::vector<double>{0.1, 3e-3}) {
      INFO("L " << L << ", precision " << precision);
      const BaseBound b = rope_base_bound(128, L, {precision});
      check_bound(b, 128, L);
      REQUIRE(b.lowest_limit <= fine.lowest_feasible);
      REQUIRE(b.lowest_feasible >= fine.lowest_limit);
      // These two stay undecided (the search does not depend on the machine or thread count).
      if ((L == 4096 && precision == 0.3) || (L == 8192 && precision == 0.1)) REQUIRE_FALSE(b.lowest_certified);
      if (!b.lowest_certified) {
        ++uncertain;
        REQUIRE(std::any_of(b.undecided.begin(), b.undecided.end(), [&](const UndecidedInterval& u) {
          return u.kind != UndecidedInterval::Kind::Gap && u.low < b.lowest_feasible;
        }));
      }
    }
    REQUIRE(uncertain > 0);
  }
}

TEST_CASE("rope base bound: the result does not depend on the thread count", "[rope]") {
  const BaseBound one = rope_base_bound(128, 2048, {1e-6, 1});
  const BaseBound three = rope_base_bound(128, 2048, {1e-6, 3});
  REQUIRE(one.lowest_feasible == three.lowest_feasible);
  REQUIRE(one.lowest_limit == three.lowest_limit);
  REQUIRE(one.stable == three.stable);
  REQUIRE(one.islands.size() == three.islands.size());
  for (size_t i = 0; i < one.islands.size(); ++i) {
    REQUIRE(one.islands[i].low == three.islands[i].low);
    REQUIRE(one.islands[i].high_limit == three.islands[i].high_limit);
  }
  REQUIRE(one.cells == three.cells);
  REQUIRE(one.evaluations == three.evaluations);
}

TEST_CASE("rope base bound plot: the lowest base and the band up to the stable one", "[rope]") {
  const std::vector<BaseBound> rows{rope_base_bound(128, 1024), rope_base_bound(128, 2048)};
  const infini::svg::Plot p = base_bound_plot(rows);
  REQUIRE(p.series.size() == 2);
  REQUIRE(p.series[0].y == std::vector<double>{rows[0].lowest_feasible, rows[1].lowest_feasible});
  REQUIRE(p.series[1].y == std::vector<double>{rows[0].stable, rows[1].stable});
  REQUIRE(p.series[1].y_low == p.series[0].y);
  REQUIRE(infini::svg::render(p).find("lowest feasible") != std::string::npos);
}

TEST_CASE("rope base bound: the feasible set is not monotone in the base", "[rope]") {
  // At L = 2048, d = 128, 1.54e4 is feasible but 1.7e4 is not (found by this search, checked
  // here with direct sums): why the tool reports both the lowest base and the stable one.
  REQUIRE(direct_first_nonpositive(128, 15400.0, 2048) < 0);
  REQUIRE(direct_first_nonpositive(128, 17000.0, 2048) >= 0);
}

TEST_CASE("rope svg plots have labelled axes, log ticks and escaped text", "[rope]") {
  infini::svg::Plot p;
  p.title = "a < b & c";
  p.x.label = "pair i";
  p.y.label = "period (tokens)";
  p.y.log = true;
  infini::svg::Series s;
  s.label = "default";
  s.x = {0, 1, 2};
  s.y = {6.28, 1000, 54410};
  p.series.push_back(s);
  p.rules.push_back({false, 4096, "context 4096"});
  const std::string svg = infini::svg::render(p);
  REQUIRE(svg.rfind("<svg", 0) == 0);
  REQUIRE(svg.find("a &lt; b &amp; c") != std::string::npos);
  REQUIRE(svg.find("pair i") != std::string::npos);
  REQUIRE(svg.find("period (tokens)") != std::string::npos);
  REQUIRE(svg.find(">1000<") != std::string::npos);
  REQUIRE(svg.find("font-size=\"9\">5<") != std::string::npos);  // 10^5 as a superscript
  REQUIRE(svg.find("context 4096") != std::string::npos);
  REQUIRE(svg.find("<polyline") != std::string::npos);
  REQUIRE(svg.find("</svg>") != std::string::npos);
  REQUIRE(infini::svg::tick_label(4096) == "4096");
  REQUIRE(infini::svg::tick_label(2.5e-4) == "2.5e-4");
  REQUIRE(infini::svg::tick_label(1.5e6) == "1.5e6");
  REQUIRE_THROWS_AS(infini::svg::write(p, "/nonexistent-dir/x.svg"), infini::Error);
}
