#pragma once
// A small SVG line-plot writer for the `infini rope` figures: labelled axes with ticks, linear or
// log scales, several series with a legend, reference lines. No dependencies, plain SVG 1.1.
#include <optional>
#include <string>
#include <vector>

namespace infini::svg {

// `s` with &, <, > and " written as XML entities, for text and attribute values.
std::string xml_escaped(const std::string& s);

struct Axis {
  std::string label;
  bool log = false;            // log10 scale; values <= 0 are dropped
  std::optional<double> min;   // data range when unset
  std::optional<double> max;
};

enum class Style { Line, Points, LinePoints };

struct Series {
  std::string label;
  std::vector<double> x, y;
  Style style = Style::Line;
  std::vector<double> y_low;   // optional: shade between y_low and y (a min/max envelope)
  bool dashed = false;
};

// A horizontal (y = value) or vertical (x = value) reference line with a short label.
struct Rule {
  bool vertical = false;
  double value = 0;
  std::string label;
};

struct Plot {
  std::string title;
  Axis x, y;
  std::vector<Series> series;
  std::vector<Rule> rules;
  int width = 760, height = 460;
};

std::string render(const Plot& plot);
// Writes render(plot) to `path`; throws infini::Error when the file cannot be written.
void write(const Plot& plot, const std::string& path);

// "1e+06"-free tick text: 0.001, 0.5, 20, 4096, 1.5e5 -> short human forms.
std::string tick_label(double value);

}  // namespace infini::svg
