#include "passkey_heatmap.hpp"

#include <algorithm>
#include <cstdio>

#include "rope_analysis/svg_plot.hpp"

namespace infini::cli {
namespace {

using svg::xml_escaped;

constexpr int kCellWidth = 96, kCellHeight = 48, kLeft = 110, kTop = 56, kBottom = 56;

// Red (0) through amber (0.5) to green (1), as the usual needle-in-a-haystack maps run.
std::string colour(double accuracy) {
  const double a = std::clamp(accuracy, 0.0, 1.0);
  const int r = a < 0.5 ? 215 : int(215 - (a - 0.5) * 2 * (215 - 46));
  const int g = a < 0.5 ? int(48 + a * 2 * (170 - 48)) : int(170 - (a - 0.5) * 2 * (170 - 160));
  const int b = a < 0.5 ? 39 : int(39 + (a - 0.5) * 2 * (87 - 39));
  char hex[8];
  std::snprintf(hex, sizeof hex, "#%02x%02x%02x", r, g, b);
  return hex;
}

}  // namespace

std::string passkey_heatmap_svg(const std::string& title, const std::vector<std::string>& lengths,
                                const std::vector<std::string>& depths,
                                const std::vector<std::vector<HeatmapCell>>& cells) {
  const int width = kLeft + kCellWidth * int(lengths.size()) + 20;
  const int height = kTop + kCellHeight * int(depths.size()) + kBottom;
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) + "\" height=\"" +
                  std::to_string(height) + "\" font-family=\"sans-serif\" font-size=\"13\">\n";
  s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s += "<text x=\"" + std::to_string(width / 2) + "\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">" +
       xml_escaped(title) + "</text>\n";
  for (size_t d = 0; d < depths.size(); ++d) {
    const int y = kTop + kCellHeight * int(d);
    s += "<text x=\"" + std::to_string(kLeft - 8) + "\" y=\"" + std::to_string(y + kCellHeight / 2 + 5) +
         "\" text-anchor=\"end\">" + xml_escaped(depths[d]) + "</text>\n";
    for (size_t l = 0; l < lengths.size(); ++l) {
      const HeatmapCell& c = cells.at(d).at(l);
      const double accuracy = c.trials ? double(c.correct) / c.trials : 0.0;
      const int x = kLeft + kCellWidth * int(l);
      s += "<rect x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) + "\" width=\"" +
           std::to_string(kCellWidth - 2) + "\" height=\"" + std::to_string(kCellHeight - 2) + "\" fill=\"" +
           (c.trials ? colour(accuracy) : std::string("#dddddd")) + "\"><title>" +
           std::to_string(c.correct) + " of " + std::to_string(c.trials) + "</title></rect>\n";
      s += "<text x=\"" + std::to_string(x + kCellWidth / 2 - 1) + "\" y=\"" + std::to_string(y + kCellHeight / 2 + 5) +
           "\" text-anchor=\"middle\" fill=\"white\">" + std::to_string(c.correct) + "/" + std::to_string(c.trials) +
           "</text>\n";
    }
  }
  const int axis_y = kTop + kCellHeight * int(depths.size());
  for (size_t l = 0; l < lengths.size(); ++l)
    s += "<text x=\"" + std::to_string(kLeft + kCellWidth * int(l) + kCellWidth / 2 - 1) + "\" y=\"" +
         std::to_string(axis_y + 18) + "\" text-anchor=\"middle\">" + xml_escaped(lengths[l]) + "</text>\n";
  s += "<text x=\"" + std::to_string(kLeft + kCellWidth * int(lengths.size()) / 2) + "\" y=\"" +
       std::to_string(axis_y + 42) + "\" text-anchor=\"middle\">input length (tokens); cells: keys found of trials</text>\n";
  s += "<text x=\"16\" y=\"" + std::to_string(kTop + kCellHeight * int(depths.size()) / 2) +
       "\" text-anchor=\"middle\" transform=\"rotate(-90 16 " +
       std::to_string(kTop + kCellHeight * int(depths.size()) / 2) + ")\">depth of the key</text>\n";
  s += "</svg>\n";
  return s;
}

}  // namespace infini::cli
