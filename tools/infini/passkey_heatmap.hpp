#pragma once
// The needle-in-a-haystack picture of `infini passkey --svg`: accuracy as a grid of input length
// (across) by depth (down), each cell coloured from red (no key found) through amber to green
// (every key found) and labelled with its count of trials, as an SVG document.
#include <string>
#include <vector>

namespace infini::cli {

struct HeatmapCell {
  int correct = 0, trials = 0;
};

// cells[d][l]: depth d, length l. `title` heads the picture (escaped for XML here).
std::string passkey_heatmap_svg(const std::string& title, const std::vector<std::string>& lengths,
                                const std::vector<std::string>& depths,
                                const std::vector<std::vector<HeatmapCell>>& cells);

}  // namespace infini::cli
