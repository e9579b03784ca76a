#pragma once
// What the `infini rope` subcommands share: length and option parsing, number formatting, and the
// inverse-frequency plots. The analyses themselves are in tools/rope_analysis.
#include <cstdint>
#include <numbers>
#include <string>
#include <vector>

#include "infini/rope_config.hpp"
#include "rope_analysis/svg_plot.hpp"

namespace infini::cli {

inline constexpr double kTwoPi = 2.0 * std::numbers::pi;

// Context lengths: 4096, 4K (= 4096) or 1M (= 1048576), as model cards write them.
int64_t parse_length(const std::string& text, const char* flag);
void check_dim(int dim);
void check_base(double base);
// printf %g with `digits` significant digits.
std::string g(double v, int digits = 6);
// The dims a pair rotates, which depends on the layout.
std::string pair_dims(int i, int d, rope::RopeLayout layout);
svg::Series inv_freq_series(const std::string& label, const std::vector<double>& inv);
// Inverse frequency per pair of every scaling variant with this base, factor and L0.
void plot_variants(const rope::RopeConfig& base_config, int head_dim, int64_t length, const std::string& path);

}  // namespace infini::cli
