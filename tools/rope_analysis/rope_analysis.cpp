// RoPE analyses of Liu et al. and Men et al. (docs/design.md §2.5), on the frequencies
// rope_frequencies() gives the kernels.
#include "rope_analysis/rope_analysis.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <string>
#include <thread>

#include "infini/error.hpp"
#include "infini/rope_config.hpp"

namespace infini::rope {
namespace {

constexpr double kTwoPi = 2.0 * std::numbers::pi;

[[noreturn]] void fail(const std::string& what) { throw Error("rope: " + what); }

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::vector<double> default_theta(int dim, double base) {
  RopeConfig c;
  c.base = base;
  return rope_frequencies(c, dim, 0).inv_freq;
}

void check_context(double context, const char* what) {
  // log(T / 2 pi) must be positive for the period formulas to mean anything.
  if (!std::isfinite(context) || context <= kTwoPi)
    fail(std::string(what) + " must be > 2 pi (one period of the fastest pair), got " + num(context));
}

void check_length(int64_t length) {
  if (length < 1) fail("context length must be >= 1, got " + std::to_string(length));
}

// Walks m = 0..length with cos/sin(m theta_i) advanced by one rotation per step (6 flops per
// pair instead of a cos), re-anchored exactly every kAnchor steps so rounding cannot drift.
// Calls visit(m, sum) for m = first..last and stops early when it returns false; returns the m
// it stopped at or -1.
template <class Visit>
int64_t walk_cos_sum(std::span<const double> theta, int64_t first, int64_t last, Visit&& visit) {
  constexpr int64_t kAnchor = 4096;
  const size_t n = theta.size();
  std::vector<double> c(n), s(n), step_c(n), step_s(n);
  for (size_t i = 0; i < n; ++i) {
    step_c[i] = std::cos(theta[i]);
    step_s[i] = std::sin(theta[i]);
  }
  for (int64_t start = first; start <= last; start += kAnchor) {
    for (size_t i = 0; i < n; ++i) {
      const double angle = static_cast<double>(start) * theta[i];
      c[i] = std::cos(angle);
      s[i] = std::sin(angle);
    }
    const int64_t end = std::min(last, start + kAnchor - 1);
    for (int64_t m = start;; ++m) {
      // Four partial sums let the compiler keep the reduction in vector registers.
      double sum[4] = {0, 0, 0, 0};
      for (size_t i = 0; i < n; ++i) {
        sum[i & 3] += c[i];
        const double next_c = c[i] * step_c[i] - s[i] * step_s[i];
        s[i] = c[i] * step_s[i] + s[i] * step_c[i];
        c[i] = next_c;
      }
      if (!visit(m, (sum[0] + sum[1]) + (sum[2] + sum[3]))) return m;
      if (m == end) break;
    }
  }
  return -1;
}

// min of cos over the angle interval [a, b] (a <= b).
double min_cos(double a, double b) {
  if (b - a >= kTwoPi) return -1.0;
  const double k = std::ceil((a - std::numbers::pi) / kTwoPi);  // first odd multiple of pi >= a
  if ((2.0 * k + 1.0) * std::numbers::pi <= b) return -1.0;
  return std::min(std::cos(a), std::cos(b));
}

// Branch and bound over m: a block [lo, hi] whose lower bound sum_i min cos(m theta_i) is
// positive cannot hold a bad m and is skipped; others are halved, and small ones are walked
// exactly. Far above the bound almost every block is skipped, which makes a full check of
// L = 1M cheap. Blocks are visited in order of m, so the first bad m found is the first one.
class FirstNonpositive {
 public:
  explicit FirstNonpositive(std::span<const double> theta) : theta_(theta) {}

  int64_t search(int64_t lo, int64_t hi) {
    if (lower_bound(lo, hi) > kSlack) return -1;
    if (hi - lo < kLeaf) return walk_cos_sum(theta_, lo, hi, [](int64_t, double sum) { return sum > 0.0; });
    const int64_t mid = lo + (hi - lo) / 2;
    const int64_t bad = search(lo, mid);
    return bad >= 0 ? bad : search(mid + 1, hi);
  }

 private:
  static constexpr int64_t kLeaf = 256;
  static constexpr double kSlack = 1e-9;  // covers rounding in the bound itself

  double lower_bound(int64_t lo, int64_t hi) const {
    double bound = 0;
    for (double t : theta_) bound += min_cos(static_cast<double>(lo) * t, static_cast<double>(hi) * t);
    return bound;
  }

  std::span<const double> theta_;
};

// Lower bound of min over m <= length of sum_i cos(m theta_i), see certified_base().
double certified_lower_bound(int dim, double base, int64_t length) {
  double bound = 0;
  for (double t : default_theta(dim, base)) {
    const double reach = static_cast<double>(length) * t;
    bound += reach <= std::numbers::pi ? std::cos(reach) : -1.0;
  }
  return bound;
}

// ---- The certified search of rope_base_bound(), over t = ln(base) ----

// How far a computed B_m (m <= length) may be from the exact one: each angle m theta_i carries a
// few ulp of m (theta_i = exp(-k_i t), the product, the cell's differences), and a leaf walk
// rotates at most kLeaf times from an exact anchor. Every proof keeps this margin from zero.
double rounding_margin(int pairs, int64_t length) {
  return pairs * (1e-12 + 2e-15 * static_cast<double>(length + 1));
}

// max of cos over the angle interval [a, b] (a <= b).
double max_cos(double a, double b) {
  if (b - a >= kTwoPi) return 1.0;
  const double k = std::ceil(a / kTwoPi);  // first multiple of 2 pi >= a
  if (k * kTwoPi <= b) return 1.0;
  return std::max(std::cos(a), std::cos(b));
}

// Branch and bound over cells [t0, t1] of t and blocks of m. A cell is feasible when every m in
// 0..L has a lower bound of B_m over the cell above the margin, infeasible when one m (a witness)
// has an upper bound below minus the margin, and halved otherwise. The m a cell could not clear
// are handed to its halves, which check only those (a bound over a cell holds over its halves),
// so deep cells cost a few m each. Bounds: on a block [m0, m1] of m the angle of pair i ranges
// over [m0 theta_i(t1), m1 theta_i(t0)] and its cosine is bounded exactly (min_cos, max_cos); on
// one m see walk(). Witnesses of recent cells are tried first, and a wide cell stops at its first
// infeasible midpoint value (handing the rest of its m on unchecked), so infeasible stretches
// cost little.
class BaseSearch {
 public:
  enum class Kind { Feasible, Infeasible, Open };
  // Consecutive cells with one verdict; cells left open at the precision stay one piece each.
  struct Piece {
    double t0 = 0, t1 = 0;
    Kind kind = Kind::Open;
    int point = 0;         // open: +1 the midpoint is proven feasible, -1 infeasible, 0 neither
    int64_t witness = -1;  // infeasible: an m with B_m < 0 over the piece's last cell
  };

  BaseSearch(int dim, int64_t length, double min_width)
      : n_(static_cast<size_t>(dim / 2)),
        length_(length),
        min_width_(min_width),
        margin_(rounding_margin(dim / 2, length)),
        k_(n_),
        th0_(n_),
        th1_(n_),
        thc_(n_),
        g_(n_),
        step_c_(n_),
        step_s_(n_),
        fc_(n_),
        fs_(n_),
        fg_(n_),
        fg1_(n_),
        fg2_(n_),
        fsc_(n_),
        fss_(n_),
        candidates_(kMaxDepth + 2) {
    for (size_t i = 0; i < n_; ++i) k_[i] = 2.0 * static_cast<double>(i) / dim;
  }

  // Searches [t0, t1] from scratch (every m a candidate, no remembered witnesses), so that a
  // chunk's verdicts do not depend on what was searched before.
  std::vector<Piece> run(double t0, double t1) {
    pieces.clear();
    cache_.clear();
    candidates_[0].assign(1, {0, length_});
    visit(t0, t1, 0, false);
    return std::move(pieces);
  }

  int64_t cells = 0, evaluations = 0;

 private:
  struct Range {
    int64_t lo, hi;
  };
  static constexpr int64_t kLeaf = 256;
  static constexpr int64_t kShort = 16;      // shorter ranges skip the block bound and the pair split
  static constexpr int64_t kGap = 8;
  static constexpr double kSlowAngle = 0.02;  // radians: see walk()
  static constexpr size_t kMaxDepth = 80;    // 2^-80 of the axis is far below any precision allowed
  static constexpr size_t kCache = 6;        // recent witnesses tried next to infeasible cells
  // A cell at the precision whose midpoint is infeasible but that no single m covers (two m that
  // are negative on either side of a crossing) is halved up to this many more times to cover it.
  static constexpr int kExtraDepth = 4;
  // A leaf is walked one m at a time only when the expected spread of B_m over the cell is below
  // this; wider cells hand the block on to their halves whole.
  static constexpr double kWalkSpread = 24.0;

  // extra: halvings below the precision so far (see kExtraDepth).
  void visit(double t0, double t1, size_t depth, bool hint, int extra = 0) {
    ++cells;
    const double tc = 0.5 * (t0 + t1);
    set_cell(t0, tc, t1);
    // Next to an infeasible stretch, recent witnesses often cover the cell outright.
    if (hint || (!pieces.empty() && pieces.back().kind == Kind::Infeasible))
      if (const int64_t m = cached_witness(); m >= 0) return emit({t0, t1, Kind::Infeasible, 0, m});
    at_limit_ = t1 - t0 <= min_width_ || depth >= kMaxDepth || !(tc > t0 && tc < t1);
    std::vector<Range>& out = candidates_[depth + 1];
    out.clear();
    stop_ = false;
    cell_witness_ = point_witness_ = -1;
    point_min_ = std::numeric_limits<double>::infinity();
    for (const Range& r : candidates_[depth]) {
      if (stop_)
        push(out, r.lo, r.hi);  // unchecked: the halves check them
      else
        block(r.lo, r.hi, out);
    }
    if (cell_witness_ >= 0) {
      emit({t0, t1, Kind::Infeasible, 0, cell_witness_});
    } else if (out.empty()) {
      emit({t0, t1, Kind::Feasible, 0, -1});
    } else if (at_limit_ && (point_witness_ < 0 || extra >= kExtraDepth || depth >= kMaxDepth)) {
      const int point = point_witness_ >= 0 ? -1 : point_min_ > margin_ ? 1 : 0;
      emit({t0, t1, Kind::Open, point, point_witness_});
    } else {
      const bool infeasible_inside = point_witness_ >= 0;
      const int next = at_limit_ ? extra + 1 : 0;
      visit(t0, tc, depth + 1, infeasible_inside, next);
      visit(tc, t1, depth + 1, infeasible_inside, next);
    }
  }

  // Bounds of the derivatives in t of sum_i cos(m theta_i(t)) over the cell for a set of pairs,
  // per power of m: |B''| <= m^2 curve2 + m curve1, |B'''| <= m^3 cubic3 + m^2 cubic2 + m cubic1
  // (with theta_i at t0, its largest value on the cell).
  struct Reach {
    double curve2 = 0, curve1 = 0, cubic3 = 0, cubic2 = 0, cubic1 = 0;
    void add(double theta0, double k) {
      const double rate = theta0 * k;
      curve2 += rate * rate;
      curve1 += rate * k;
      cubic3 += rate * rate * rate;
      cubic2 += 3.0 * rate * rate * k;
      cubic1 += rate * k * k;
    }
  };

  // How far B can move over the cell from its midpoint value, down or up, given m |B'(tc)|
  // (slope) and B''(tc) (bend): the smaller of the second- and third-order Taylor bounds.
  double spread(double fm, double slope, double bend, const Reach& r, bool down) const {
    const double h = half_, h2 = 0.5 * half_ * half_, h3 = half_ * half_ * half_ / 6.0;
    const double second = slope * h + h2 * fm * (fm * r.curve2 + r.curve1);
    const double curve = down ? -std::min(0.0, bend) : std::max(0.0, bend);
    const double third = slope * h + curve * h2 + h3 * fm * (fm * (fm * r.cubic3 + r.cubic2) + r.cubic1);
    return std::min(second, third);
  }
  double spread_down(double fm, double slope, double bend, const Reach& r) const {
    return spread(fm, slope, bend, r, true);
  }
  double spread_up(double fm, double slope, double bend, const Reach& r) const {
    return spread(fm, slope, bend, r, false);
  }

  void set_cell(double t0, double tc, double t1) {
    half_ = 0.5 * (t1 - t0);
    all_ = Reach{};
    for (size_t i = 0; i < n_; ++i) {
      th0_[i] = std::exp(-k_[i] * t0);
      th1_[i] = std::exp(-k_[i] * t1);
      thc_[i] = std::exp(-k_[i] * tc);
      g_[i] = thc_[i] * k_[i];
      all_.add(th0_[i], k_[i]);
      step_c_[i] = std::cos(thc_[i]);
      step_s_[i] = std::sin(thc_[i]);
    }
    // Expected spread of B_m over the cell per m and per m^2 (random signs in B'), for worth_walking.
    spread1_ = half_ * std::sqrt(0.5 * all_.curve2) + 0.5 * half_ * half_ * all_.curve1;
    spread2_ = 0.5 * half_ * half_ * all_.curve2;
  }

  void emit(const Piece& p) {
    if (!pieces.empty() && p.kind != Kind::Open && pieces.back().kind == p.kind && pieces.back().t1 == p.t0) {
      pieces.back().t1 = p.t1;
      pieces.back().witness = p.witness;
      return;
    }
    pieces.push_back(p);
  }

  // Appends [lo, hi] to the m handed on; a range starting within kGap of the last one joins it
  // (rechecking a few cleared m is cheaper than a fresh anchor).
  static void push(std::vector<Range>& out, int64_t lo, int64_t hi) {
    if (!out.empty() && out.back().hi + kGap >= lo)
      out.back().hi = hi;
    else
      out.push_back({lo, hi});
  }

  // Whether B_m stays below minus the margin over the whole cell: by the expansion of walk()
  // about the midpoint (upper side), or else by sum_i max cos over the cell (exact per pair; the
  // fast pairs come first and the loop stops once the rest cannot bring it down enough).
  bool witness(int64_t m) const {
    const double fm = static_cast<double>(m);
    double sum = 0, slope = 0, bend_c = 0, bend_s = 0;
    for (size_t i = 0; i < n_; ++i) {
      const double angle = fm * thc_[i], c = std::cos(angle), s = std::sin(angle);
      sum += c;
      slope += s * g_[i];
      bend_c += c * g_[i] * g_[i];
      bend_s += s * g_[i] * k_[i];
    }
    if (sum + spread_up(fm, fm * std::abs(slope), -fm * (fm * bend_c + bend_s), all_) < -margin_) return true;
    double bound = 0;
    for (size_t i = 0; i < n_; ++i) {
      bound += max_cos(fm * th1_[i], fm * th0_[i]);
      if (bound - static_cast<double>(n_ - 1 - i) >= -margin_) return false;
    }
    return true;
  }

  // Whether sum_i min cos over the box of m in [lo, hi] and the cell exceeds the margin (exact per
  // pair, fast pairs first, stopping once the rest cannot bring it up enough).
  bool clears(int64_t lo, int64_t hi) const {
    double bound = 0;
    const double flo = static_cast<double>(lo), fhi = static_cast<double>(hi);
    for (size_t i = 0; i < n_; ++i) {
      bound += min_cos(flo * th1_[i], fhi * th0_[i]);
      if (bound + static_cast<double>(n_ - 1 - i) <= margin_) return false;
    }
    return true;
  }

  int64_t cached_witness() {
    for (size_t j = 0; j < cache_.size(); ++j)
      if (witness(cache_[j])) {
        const int64_t m = cache_[j];
        const auto at = cache_.begin() + static_cast<std::ptrdiff_t>(j);
        std::rotate(cache_.begin(), at, at + 1);
        return m;
      }
    return -1;
  }

  void remember(int64_t m) {
    if (std::find(cache_.begin(), cache_.end(), m) != cache_.end()) return;
    if (cache_.size() == kCache) cache_.pop_back();
    cache_.insert(cache_.begin(), m);
  }

  // Whether a block starting at m0 >= lo could still clear the cell: a pair whose angle range
  // already spans 2 pi through the cell alone bounds at -1 whatever the block.
  bool can_split(int64_t lo) const {
    double best = 0;
    for (size_t i = 0; i < n_; ++i) best += static_cast<double>(lo) * (th0_[i] - th1_[i]) >= kTwoPi ? -1.0 : 1.0;
    return best > margin_;
  }

  bool worth_walking(int64_t hi) const {
    const double m = static_cast<double>(hi);
    return m * (spread1_ + m * spread2_) < kWalkSpread;
  }

  void block(int64_t lo, int64_t hi, std::vector<Range>& out) {
    if (hi - lo >= kShort && clears(lo, hi)) return;
    if (hi - lo >= kLeaf) {
      if (!at_limit_ && !can_split(lo)) return push(out, lo, hi);
      const int64_t mid = lo + (hi - lo) / 2;
      block(lo, mid, out);
      if (stop_)
        push(out, mid + 1, hi);
      else
        block(mid + 1, hi, out);
      return;
    }
    if (!at_limit_ && !worth_walking(hi)) return push(out, lo, hi);
    walk(lo, hi, out);
  }

  // m = lo..hi one at a time. Pairs whose angle moves less than kSlowAngle over the whole
  // (block x cell) box are bounded once for the block (exact min/max of cos); the others carry
  // c_i, s_i = cos/sin(m theta_i(tc)), advanced by rotation from an exact anchor. Their sum B is
  // bounded over the cell by Taylor's theorem in t about the midpoint, |t - tc| <= h: with
  // a_i = m theta_i, dB/dt = sum_i s_i k_i a_i and d2B/dt2 = -sum_i k_i^2 a_i (c_i a_i + s_i)
  // exact at tc, and |d2B/dt2|, |d3B/dt3| bounded with a_i at t0 (Reach), B moves by at most
  // spread(). Cells at the precision walk every pair, since their midpoint values must be exact.
  void walk(int64_t lo, int64_t hi, std::vector<Range>& out) {
    const double flo = static_cast<double>(lo), fhi = static_cast<double>(hi);
    size_t nf = 0;
    double slow_low = 0, slow_high = 0;
    Reach fast;
    const bool split_pairs = !at_limit_ && hi - lo >= kShort;
    for (size_t i = 0; i < n_; ++i) {
      const double a = flo * th1_[i], b = fhi * th0_[i];
      if (split_pairs && b - a < kSlowAngle) {
        slow_low += min_cos(a, b);
        slow_high += max_cos(a, b);
        continue;
      }
      const double angle = flo * thc_[i];
      fc_[nf] = std::cos(angle);
      fs_[nf] = std::sin(angle);
      fg_[nf] = g_[i];
      fg1_[nf] = g_[i] * k_[i];
      fg2_[nf] = g_[i] * g_[i];
      fsc_[nf] = step_c_[i];
      fss_[nf] = step_s_[i];
      ++nf;
      fast.add(th0_[i], k_[i]);
    }
    double* c = fc_.data();
    double* s = fs_.data();
    const double *g = fg_.data(), *g1 = fg1_.data(), *g2 = fg2_.data(), *sc = fsc_.data(), *ss = fss_.data();
    for (int64_t m = lo; m <= hi; ++m) {
      ++evaluations;
      const double fm = static_cast<double>(m);
      // B, B' / m and the two parts of B''; two partial sums each keep the additions apart.
      double sum0 = 0, sum1 = 0, slope0 = 0, slope1 = 0, bend_c0 = 0, bend_c1 = 0, bend_s0 = 0, bend_s1 = 0;
      size_t j = 0;
      for (; j + 1 < nf; j += 2) {
        const double c0 = c[j], s0 = s[j], c1 = c[j + 1], s1 = s[j + 1];
        sum0 += c0;
        sum1 += c1;
        slope0 += s0 * g[j];
        slope1 += s1 * g[j + 1];
        bend_c0 += c0 * g2[j];
        bend_c1 += c1 * g2[j + 1];
        bend_s0 += s0 * g1[j];
        bend_s1 += s1 * g1[j + 1];
        c[j] = c0 * sc[j] - s0 * ss[j];
        s[j] = c0 * ss[j] + s0 * sc[j];
        c[j + 1] = c1 * sc[j + 1] - s1 * ss[j + 1];
        s[j + 1] = c1 * ss[j + 1] + s1 * sc[j + 1];
      }
      for (; j < nf; ++j) {
        const double c0 = c[j], s0 = s[j];
        sum0 += c0;
        slope0 += s0 * g[j];
        bend_c0 += c0 * g2[j];
        bend_s0 += s0 * g1[j];
        c[j] = c0 * sc[j] - s0 * ss[j];
        s[j] = c0 * ss[j] + s0 * sc[j];
      }
      const double sum = sum0 + sum1;
      const double slope = fm * std::abs(slope0 + slope1);
      const double bend = -fm * (fm * (bend_c0 + bend_c1) + (bend_s0 + bend_s1));
      if (slow_low + sum - spread_down(fm, slope, bend, fast) <= margin_) {
        push(out, m, m);
        if (sum + slow_high < -margin_) {
          // The midpoint is infeasible: m is a witness if it holds over the whole cell. A wider
          // cell stops here and leaves the rest to its halves; one at the precision looks on.
          remember(m);
          if (point_witness_ < 0) point_witness_ = m;
          if (slow_high + sum + spread_up(fm, slope, bend, fast) < -margin_ || witness(m)) cell_witness_ = m;
          if (cell_witness_ >= 0 || !at_limit_) {
            stop_ = true;
            if (m < hi) push(out, m + 1, hi);
            return;
          }
        }
      }
      point_min_ = std::min(point_min_, sum + slow_low);  // a lower bound of B_m(tc) (exact at the precision)
    }
  }

  std::vector<Piece> pieces;
  size_t n_;
  int64_t length_;
  double min_width_, margin_;
  double half_ = 0;  // half the cell's width
  Reach all_;        // of every pair
  double spread1_ = 0, spread2_ = 0;
  // Per pair: k_i = 2i/d; theta_i at the cell's ends and midpoint; theta_i k_i at the midpoint;
  // cos/sin of one step.
  std::vector<double> k_, th0_, th1_, thc_, g_, step_c_, step_s_;
  // The same for the fast pairs of the block being walked, packed, with their cos/sin.
  std::vector<double> fc_, fs_, fg_, fg1_, fg2_, fsc_, fss_;
  std::vector<std::vector<Range>> candidates_;  // per depth: the m a cell hands to its halves
  std::vector<int64_t> cache_;                  // recent witnesses, most recent first
  bool at_limit_ = false, stop_ = false;
  int64_t cell_witness_ = -1, point_witness_ = -1;
  double point_min_ = 0;
};
}  // namespace

Coverage rope_coverage(int dim, double base, double context) {
  check_context(context, "context");
  Coverage out;
  out.inv_freq = default_theta(dim, base);
  for (double t : out.inv_freq) {
    out.period.push_back(kTwoPi / t);
    if (out.period.back() <= context) ++out.complete_pairs;
  }
  out.complete_dims = 2 * out.complete_pairs;
  out.critical_dim = critical_dimension(dim, base, context);
  return out;
}

int critical_dimension(int dim, double base, double context) {
  if (dim <= 0 || dim % 2 != 0) fail("dim must be even and positive, got " + std::to_string(dim));
  if (!std::isfinite(base) || base <= 1.0) fail("base must be a finite number > 1, got " + num(base));
  check_context(context, "context");
  const double pairs = std::ceil(dim / 2.0 * std::log(context / kTwoPi) / std::log(base));
  return 2 * static_cast<int>(std::clamp(pairs, 0.0, dim / 2.0));
}

double liu_extrapolation_base(double base, double train_context, double target_context) {
  if (!std::isfinite(base) || base <= 1.0) fail("base must be a finite number > 1, got " + num(base));
  check_context(train_context, "training context");
  check_context(target_context, "target context");
  return std::pow(base, std::log(target_context / kTwoPi) / std::log(train_context / kTwoPi));
}

double ntk_base(int dim, double base, double factor) {
  if (dim <= 2 || dim % 2 != 0) fail("dim must be even and > 2, got " + std::to_string(dim));
  if (!std::isfinite(base) || base <= 1.0) fail("base must be a finite number > 1, got " + num(base));
  if (!std::isfinite(factor) || factor < 1.0) fail("factor must be >= 1, got " + num(factor));
  return base * std::pow(factor, static_cast<double>(dim) / (dim - 2));
}

std::vector<double> cos_sum_curve(std::span<const double> inv_freq, int64_t length) {
  check_length(length);
  std::vector<double> out(static_cast<size_t>(length) + 1);
  walk_cos_sum(inv_freq, 0, length, [&](int64_t m, double sum) {
    out[static_cast<size_t>(m)] = sum;
    return true;
  });
  return out;
}

int64_t first_nonpositive(std::span<const double> inv_freq, int64_t length) {
  check_length(length);
  FirstNonpositive search(inv_freq);
  // Top blocks of 2^16 keep the recursion shallow and find early failures early.
  constexpr int64_t kTop = int64_t{1} << 16;
  for (int64_t lo = 0; lo <= length; lo += kTop) {
    const int64_t bad = search.search(lo, std::min(length, lo + kTop - 1));
    if (bad >= 0) return bad;
  }
  return -1;
}

bool base_feasible(int dim, double base, int64_t length) {
  return first_nonpositive(default_theta(dim, base), length) < 0;
}

double certified_base(int dim, int64_t length) {
  check_length(length);
  if (dim < 6 || dim % 2 != 0) fail("the base bound needs an even dim >= 6, got " + std::to_string(dim));
  // The bound is monotone in the base: bisect log base between 1 and a base where it holds.
  double low = 1.0, high = 2.0;
  while (certified_lower_bound(dim, high, length) <= 0.0) {
    low = high;
    high *= high;
    if (!std::isfinite(high)) fail("no certified base below 1e308 for dim " + std::to_string(dim));
  }
  while (high / low > 1.0 + 1e-9) {
    const double mid = std::sqrt(low * high);
    (certified_lower_bound(dim, mid, length) > 0.0 ? high : low) = mid;
  }
  return high;
}

BaseBound rope_base_bound(int dim, int64_t length, const BoundSearchOptions& options) {
  if (!(options.precision >= 1e-12 && options.precision <= 0.5))
    fail("precision must be in 1e-12..0.5, got " + num(options.precision));
  if (options.threads < 0) fail("threads must be >= 0, got " + std::to_string(options.threads));
  BaseBound out;
  out.dim = dim;
  out.length = length;
  out.precision = options.precision;
  out.certified = certified_base(dim, length);  // checks dim and length
  const double t_top = std::log(out.certified);

  // The axis [0, t_top] in kChunks equal chunks, searched independently (so the result does not
  // depend on the thread count) by a pool of threads taking the next chunk as they finish.
  constexpr size_t kChunks = 64;
  std::vector<std::vector<BaseSearch::Piece>> chunks(kChunks);
  std::atomic<size_t> next{0};
  std::atomic<int64_t> cells{0}, evaluations{0};
  const auto work = [&] {
    BaseSearch search(dim, length, std::log1p(options.precision));
    for (size_t j; (j = next++) < kChunks;)
      chunks[j] = search.run(t_top * static_cast<double>(j) / kChunks,
                             j + 1 == kChunks ? t_top : t_top * static_cast<double>(j + 1) / kChunks);
    cells += search.cells;
    evaluations += search.evaluations;
  };
  const unsigned threads = std::max(1u, std::min<unsigned>(options.threads > 0 ? static_cast<unsigned>(options.threads)
                                                                               : std::thread::hardware_concurrency(),
                                                           kChunks));
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < threads; ++i) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  out.cells = cells;
  out.evaluations = evaluations;

  using Kind = BaseSearch::Kind;
  std::vector<BaseSearch::Piece> pieces;
  for (const auto& chunk : chunks)
    for (const BaseSearch::Piece& p : chunk) {
      if (!pieces.empty() && p.kind != Kind::Open && pieces.back().kind == p.kind) {
        pieces.back().t1 = p.t1;
        continue;
      }
      pieces.push_back(p);
    }

  // Runs of open cells: between two infeasible cells with no feasible midpoint they may hold an
  // island, between two feasible ones with no infeasible midpoint a gap; and a run wider than
  // kBracket cells is undecided whatever its sides. Below the axis (base 1) counts as infeasible,
  // above it (the certified base) as feasible.
  constexpr double kBracket = 4.0;
  const double widest_bracket = kBracket * std::log1p(options.precision);
  std::vector<std::pair<double, double>> undecided_t;
  for (size_t a = 0; a < pieces.size();) {
    if (pieces[a].kind != Kind::Open) {
      ++a;
      continue;
    }
    size_t b = a;
    bool feasible_point = false, infeasible_point = false;
    for (; b < pieces.size() && pieces[b].kind == Kind::Open; ++b) {
      feasible_point |= pieces[b].point > 0;
      infeasible_point |= pieces[b].point < 0;
    }
    const Kind left = a > 0 ? pieces[a - 1].kind : Kind::Infeasible;
    const Kind right = b < pieces.size() ? pieces[b].kind : Kind::Feasible;
    const bool wide = pieces[b - 1].t1 - pieces[a].t0 > widest_bracket;
    using U = UndecidedInterval::Kind;
    const bool island = left == Kind::Infeasible && right == Kind::Infeasible && (!feasible_point || wide);
    const bool gap = left == Kind::Feasible && right == Kind::Feasible && (!infeasible_point || wide);
    if (island || gap || wide) {
      undecided_t.emplace_back(pieces[a].t0, pieces[b - 1].t1);
      out.undecided.push_back({std::exp(pieces[a].t0), std::exp(pieces[b - 1].t1),
                               island ? U::Island : gap ? U::Gap : U::Boundary});
    }
    a = b;
  }

  // Feasible groups: proven-feasible cells and midpoints not separated by a proven-infeasible one.
  struct Group {
    double low, high, low_limit, high_limit;
  };
  std::vector<Group> groups;
  bool in_group = false;
  double last_bad = 0.0;  // t of the highest proven-infeasible base so far (0: base 1)
  for (const BaseSearch::Piece& p : pieces) {
    const double mid = 0.5 * (p.t0 + p.t1);
    const bool feasible = p.kind == Kind::Feasible || (p.kind == Kind::Open && p.point > 0);
    const bool infeasible = p.kind == Kind::Infeasible || (p.kind == Kind::Open && p.point < 0);
    const double lo = p.kind == Kind::Open ? mid : p.t0, hi = p.kind == Kind::Open ? mid : p.t1;
    if (feasible) {
      if (!in_group) groups.push_back({lo, hi, last_bad, t_top});
      groups.back().high = hi;
      in_group = true;
    } else if (infeasible) {
      if (in_group) groups.back().high_limit = lo;
      in_group = false;
      last_bad = hi;
    }
  }
  if (!in_group) groups.push_back({t_top, t_top, last_bad, t_top});  // the certified base is feasible

  const auto undecided_between = [&](double lo, double hi) {
    return std::any_of(undecided_t.begin(), undecided_t.end(),
                       [&](const auto& u) { return u.first < hi && u.second > lo; });
  };
  // Every base from the trailing run of feasible cells up is feasible (and above t_top by proof).
  const double stable_t = !pieces.empty() && pieces.back().kind == Kind::Feasible ? pieces.back().t0 : t_top;
  out.stable = std::exp(stable_t);
  out.stable_limit = std::exp(last_bad);
  out.stable_certified = !undecided_between(last_bad, stable_t);
  if (last_bad > 0.0) {
    std::vector<double> theta(static_cast<size_t>(dim / 2));
    for (size_t i = 0; i < theta.size(); ++i) theta[i] = std::exp(-2.0 * static_cast<double>(i) / dim * last_bad);
    out.below_stable_fails_at = first_nonpositive(theta, length);
  }
  for (size_t g = 0; g + 1 < groups.size(); ++g)
    out.islands.push_back({std::exp(groups[g].low), std::exp(groups[g].high), std::exp(groups[g].low_limit),
                           std::exp(groups[g].high_limit)});

  const Group& first = groups.front();
  out.lowest_feasible = std::exp(first.low);
  out.lowest_certified = !undecided_between(0.0, first.low);
  double first_open = first.low;  // where the first cell not proven infeasible starts
  for (const BaseSearch::Piece& p : pieces)
    if (p.kind != Kind::Infeasible) {
      first_open = p.t0;
      break;
    }
  out.lowest_limit = std::exp(out.lowest_certified ? first.low_limit : first_open);
  return out;
}

svg::Plot base_bound_plot(const std::vector<BaseBound>& rows) {
  svg::Plot p;
  p.title = "Lower bound of the RoPE base (Men et al.)" + (rows.empty() ? std::string() : ", d=" + std::to_string(rows.front().dim));
  p.x.label = "context length L (tokens)";
  p.y.label = "RoPE base";
  p.x.log = p.y.log = true;
  svg::Series low, stable;
  low.label = "lowest feasible";
  stable.label = "feasible from (band: islands)";
  low.style = stable.style = svg::Style::LinePoints;
  stable.dashed = true;
  for (const BaseBound& b : rows) {
    low.x.push_back(static_cast<double>(b.length));
    low.y.push_back(b.lowest_feasible);
    stable.x.push_back(static_cast<double>(b.length));
    stable.y.push_back(b.stable);
    stable.y_low.push_back(b.lowest_feasible);
  }
  p.series = {low, stable};
  return p;
}

}  // namespace infini::rope
