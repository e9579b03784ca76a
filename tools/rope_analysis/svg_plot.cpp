// SVG line plots for the rope tool. Coordinates are rounded to 0.1 px to keep files small.
#include "rope_analysis/svg_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>

#include "infini/error.hpp"

namespace infini::svg {

std::string xml_escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace {

constexpr const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                    "#9467bd", "#8c564b", "#e377c2", "#17becf"};

std::string fmt(const char* f, double a) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, a);
  return buf;
}

std::string px(double v) { return fmt("%.1f", v); }

// One axis mapped onto [pixel_from, pixel_to]; log axes work in log10 units.
struct Scale {
  bool log = false;
  double lo = 0, hi = 1;  // in axis units (log10 for log axes)
  double from = 0, to = 1;

  double pos(double v) const {
    const double u = log ? std::log10(v) : v;
    return from + (u - lo) / (hi - lo) * (to - from);
  }
  bool valid(double v) const { return std::isfinite(v) && (!log || v > 0); }
};

double nice_step(double span, int target) {
  const double raw = span / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag) return m * mag;
  return 10.0 * mag;
}

// Data range of one axis over every series (and rules on that axis).
Scale make_scale(const Axis& axis, const Plot& plot, bool is_x) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  const auto take = [&](double v) {
    if (!std::isfinite(v) || (axis.log && v <= 0)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  };
  for (const Series& s : plot.series) {
    for (double v : is_x ? s.x : s.y) take(v);
    if (!is_x)
      for (double v : s.y_low) take(v);
  }
  for (const Rule& r : plot.rules)
    if (r.vertical == is_x) take(r.value);
  if (axis.min) lo = *axis.min;
  if (axis.max) hi = *axis.max;
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = axis.log ? 1 : 0, hi = axis.log ? 10 : 1;

  Scale s;
  s.log = axis.log;
  if (axis.log) {
    // Snap to whole decades unless that wastes more than a third of one.
    const double l = std::log10(lo), h = std::log10(hi);
    const double fl = std::floor(l + 1e-9), ch = std::ceil(h - 1e-9);
    s.lo = axis.min ? l : (l - fl < 0.35 ? fl : l - 0.05);
    s.hi = axis.max ? h : (ch - h < 0.35 ? ch : h + 0.05);
    if (s.hi <= s.lo) s.hi = s.lo + 1;
  } else {
    if (hi <= lo) hi = lo + 1;
    // The data range itself (ticks fall inside it); y gets a little air so lines clear the frame.
    const double pad = is_x ? 0.0 : 0.04 * (hi - lo);
    s.lo = axis.min ? lo : lo - pad;
    s.hi = axis.max ? hi : hi + pad;
  }
  return s;
}

struct Tick {
  double value;
  std::string label;  // empty: minor tick, no text
  int exponent = 0;   // label is "10" with this superscript when `power` is set
  bool power = false;
};

std::vector<Tick> ticks(const Scale& s) {
  std::vector<Tick> out;
  if (s.log) {
    const int first = static_cast<int>(std::ceil(s.lo - 1e-9)), last = static_cast<int>(std::floor(s.hi + 1e-9));
    const int decades = last - first;
    const int every = decades > 10 ? 2 : 1;  // keep labels from colliding on wide ranges
    for (int e = first - 1; e <= last; ++e) {
      const double v = std::pow(10.0, e);
      if (e >= first && (e - first) % every == 0) {
        Tick t{v, tick_label(v)};
        if (std::abs(e) >= 4) t.power = true, t.exponent = e;
        out.push_back(t);
      } else if (e >= first) {
        out.push_back({v, ""});
      }
      for (int m = 2; m <= 9; ++m) {  // minor ticks; 2 and 5 labelled on short ranges
        const double mv = m * v, lv = std::log10(mv);
        if (lv < s.lo - 1e-9 || lv > s.hi + 1e-9) continue;
        out.push_back({mv, decades <= 2 && (m == 2 || m == 5) ? tick_label(mv) : ""});
      }
    }
  } else {
    const double step = nice_step(s.hi - s.lo, 6);
    for (double v = std::ceil(s.lo / step - 1e-9) * step; v <= s.hi + step * 1e-9; v += step)
      out.push_back({std::abs(v) < step * 1e-9 ? 0.0 : v, tick_label(std::abs(v) < step * 1e-9 ? 0.0 : v)});
  }
  return out;
}

std::string tick_text(const Tick& t, double x, double y, const char* anchor) {
  std::string s = "<text x=\"" + px(x) + "\" y=\"" + px(y) + "\" text-anchor=\"" + anchor + "\">";
  if (t.power)
    s += "10<tspan dy=\"-6\" font-size=\"9\">" + std::to_string(t.exponent) + "</tspan>";
  else
    s += xml_escaped(t.label);
  return s + "</text>\n";
}

}  // namespace

std::string tick_label(double v) {
  if (v == 0) return "0";
  const double a = std::abs(v);
  if (a >= 1e5 || a < 1e-3) {
    const int e = static_cast<int>(std::floor(std::log10(a) + 1e-12));
    const double mant = v / std::pow(10.0, e);
    return fmt("%.3g", mant) + "e" + std::to_string(e);
  }
  return fmt("%.6g", v);
}

std::string render(const Plot& plot) {
  const bool legend = std::any_of(plot.series.begin(), plot.series.end(), [](const Series& s) { return !s.label.empty(); });
  const double left = 84, right = plot.width - (legend ? 200.0 : 24.0), top = plot.title.empty() ? 20 : 44,
               bottom = plot.height - 56.0;
  Scale xs = make_scale(plot.x, plot, true), ys = make_scale(plot.y, plot, false);
  xs.from = left, xs.to = right;
  ys.from = bottom, ys.to = top;

  std::string o;
  o += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(plot.width) + "\" height=\"" +
       std::to_string(plot.height) + "\" viewBox=\"0 0 " + std::to_string(plot.width) + " " +
       std::to_string(plot.height) + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  o += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o += "<defs><clipPath id=\"area\"><rect x=\"" + px(left) + "\" y=\"" + px(top) + "\" width=\"" + px(right - left) +
       "\" height=\"" + px(bottom - top) + "\"/></clipPath></defs>\n";
  if (!plot.title.empty())
    o += "<text x=\"" + px((left + right) / 2) + "\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">" +
         xml_escaped(plot.title) + "</text>\n";

  // Grid and ticks.
  for (const Tick& t : ticks(xs)) {
    const double x = xs.pos(t.value);
    if (x < left - 0.5 || x > right + 0.5) continue;
    const bool major = !t.label.empty();
    o += "<line x1=\"" + px(x) + "\" y1=\"" + px(top) + "\" x2=\"" + px(x) + "\" y2=\"" + px(bottom) + "\" stroke=\"" +
         (major ? "#ddd" : "#f0f0f0") + "\"/>\n";
    o += "<line x1=\"" + px(x) + "\" y1=\"" + px(bottom) + "\" x2=\"" + px(x) + "\" y2=\"" + px(bottom + (major ? 6 : 3)) +
         "\" stroke=\"black\"/>\n";
    if (major) o += tick_text(t, x, bottom + 20, "middle");
  }
  for (const Tick& t : ticks(ys)) {
    const double y = ys.pos(t.value);
    if (y < top - 0.5 || y > bottom + 0.5) continue;
    const bool major = !t.label.empty();
    o += "<line x1=\"" + px(left) + "\" y1=\"" + px(y) + "\" x2=\"" + px(right) + "\" y2=\"" + px(y) + "\" stroke=\"" +
         (major ? "#ddd" : "#f0f0f0") + "\"/>\n";
    o += "<line x1=\"" + px(left - (major ? 6 : 3)) + "\" y1=\"" + px(y) + "\" x2=\"" + px(left) + "\" y2=\"" + px(y) +
         "\" stroke=\"black\"/>\n";
    if (major) o += tick_text(t, left - 9, y + 4, "end");
  }
  o += "<rect x=\"" + px(left) + "\" y=\"" + px(top) + "\" width=\"" + px(right - left) + "\" height=\"" +
       px(bottom - top) + "\" fill=\"none\" stroke=\"black\"/>\n";
  o += "<text x=\"" + px((left + right) / 2) + "\" y=\"" + px(plot.height - 14.0) + "\" text-anchor=\"middle\">" +
       xml_escaped(plot.x.label) + "</text>\n";
  o += "<text transform=\"translate(18," + px((top + bottom) / 2) + ") rotate(-90)\" text-anchor=\"middle\">" +
       xml_escaped(plot.y.label) + "</text>\n";

  // Reference lines.
  o += "<g clip-path=\"url(#area)\">\n";
  for (const Rule& r : plot.rules) {
    const Scale& s = r.vertical ? xs : ys;
    if (!s.valid(r.value)) continue;
    const double p = s.pos(r.value);
    if (r.vertical)
      o += "<line x1=\"" + px(p) + "\" y1=\"" + px(top) + "\" x2=\"" + px(p) + "\" y2=\"" + px(bottom) + "\"";
    else
      o += "<line x1=\"" + px(left) + "\" y1=\"" + px(p) + "\" x2=\"" + px(right) + "\" y2=\"" + px(p) + "\"";
    o += " stroke=\"#555\" stroke-dasharray=\"6 4\"/>\n";
    if (!r.label.empty()) {
      if (r.vertical)
        o += "<text x=\"" + px(p + 4) + "\" y=\"" + px(top + 14) + "\" fill=\"#333\">" + xml_escaped(r.label) + "</text>\n";
      else
        o += "<text x=\"" + px(right - 4) + "\" y=\"" + px(p - 5) + "\" text-anchor=\"end\" fill=\"#333\">" +
             xml_escaped(r.label) + "</text>\n";
    }
  }

  // Series.
  for (size_t k = 0; k < plot.series.size(); ++k) {
    const Series& s = plot.series[k];
    const std::string color = kPalette[k % std::size(kPalette)];
    const size_t n = std::min(s.x.size(), s.y.size());
    if (s.y_low.size() >= n && n > 0) {
      std::string pts;
      for (size_t i = 0; i < n; ++i)
        if (xs.valid(s.x[i]) && ys.valid(s.y[i])) pts += px(xs.pos(s.x[i])) + "," + px(ys.pos(s.y[i])) + " ";
      for (size_t i = n; i-- > 0;)
        if (xs.valid(s.x[i]) && ys.valid(s.y_low[i])) pts += px(xs.pos(s.x[i])) + "," + px(ys.pos(s.y_low[i])) + " ";
      o += "<polygon points=\"" + pts + "\" fill=\"" + color + "\" fill-opacity=\"0.25\" stroke=\"none\"/>\n";
    }
    if (s.style != Style::Points) {
      std::string pts;
      for (size_t i = 0; i < n; ++i)
        if (xs.valid(s.x[i]) && ys.valid(s.y[i])) pts += px(xs.pos(s.x[i])) + "," + px(ys.pos(s.y[i])) + " ";
      o += "<polyline points=\"" + pts + "\" fill=\"none\" stroke=\"" + color + "\" stroke-width=\"1.6\"" +
           (s.dashed ? " stroke-dasharray=\"5 3\"" : "") + "/>\n";
    }
    if (s.style != Style::Line)
      for (size_t i = 0; i < n; ++i)
        if (xs.valid(s.x[i]) && ys.valid(s.y[i]))
          o += "<circle cx=\"" + px(xs.pos(s.x[i])) + "\" cy=\"" + px(ys.pos(s.y[i])) + "\" r=\"2.6\" fill=\"" + color + "\"/>\n";
  }
  o += "</g>\n";

  // Legend, right of the plot area.
  if (legend) {
    double y = top + 8;
    for (size_t k = 0; k < plot.series.size(); ++k) {
      const Series& s = plot.series[k];
      if (s.label.empty()) continue;
      const std::string color = kPalette[k % std::size(kPalette)];
      o += "<line x1=\"" + px(right + 14) + "\" y1=\"" + px(y) + "\" x2=\"" + px(right + 38) + "\" y2=\"" + px(y) +
           "\" stroke=\"" + color + "\" stroke-width=\"" + (s.y_low.empty() ? "2" : "6") + "\"" +
           (s.dashed ? " stroke-dasharray=\"5 3\"" : "") + "/>\n";
      o += "<text x=\"" + px(right + 44) + "\" y=\"" + px(y + 4) + "\">" + xml_escaped(s.label) + "</text>\n";
      y += 20;
    }
  }
  o += "</svg>\n";
  return o;
}

void write(const Plot& plot, const std::string& path) {
  std::ofstream f(path, std::ios::binary);
  if (!f) throw Error("cannot open " + path + " for writing");
  f << render(plot);
  if (!f.flush()) throw Error("cannot write " + path);
}

}  // namespace infini::svg
