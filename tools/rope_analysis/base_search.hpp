#pragma once
// The cells of rope_base_bound()'s search (private to tools/rope_analysis/): one cell of the base
// axis, t = ln(base), proven feasible, proven infeasible or left open, by branch and bound over m.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "rope_analysis/analysis_support.hpp"

namespace infini::rope::detail {

// How far a computed B_m (m <= length) may be from the exact one: each angle m theta_i carries a
// few ulp of m (theta_i = exp(-k_i t), the product, the cell's differences), and a leaf walk
// rotates at most kLeaf times from an exact anchor. Every proof keeps this margin from zero.
inline double rounding_margin(int pairs, int64_t length) {
  return pairs * (1e-12 + 2e-15 * static_cast<double>(length + 1));
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

}  // namespace infini::rope::detail
