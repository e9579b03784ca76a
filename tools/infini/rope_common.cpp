#include "rope_common.hpp"

#include <cmath>
#include <cstdio>

#include "infini/error.hpp"

namespace infini::cli {

using namespace infini::rope;
int64_t parse_length(const std::string& text, const char* flag) {
  size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    throw Error(std::string(flag) + ": expected a length like 4096, 4K or 1M, got '" + text + "'");
  }
  const std::string suffix = text.substr(used);
  int64_t scale = 1;
  if (suffix == "k" || suffix == "K") scale = 1024;
  else if (suffix == "m" || suffix == "M") scale = 1024 * 1024;
  else if (!suffix.empty()) throw Error(std::string(flag) + ": expected a length like 4096, 4K or 1M, got '" + text + "'");
  if (value <= 0) throw Error(std::string(flag) + " must be > 0, got '" + text + "'");
  return static_cast<int64_t>(value) * scale;
}

void check_dim(int dim) {
  if (dim <= 0 || dim % 2 != 0) throw Error("--dim must be even and positive, got " + std::to_string(dim));
}

void check_base(double base) {
  if (!std::isfinite(base) || base <= 1.0) throw Error("--base must be > 1, got " + svg::tick_label(base));
}

std::string g(double v, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::string pair_dims(int i, int d, RopeLayout layout) {
  return layout == RopeLayout::Neox ? std::to_string(i) + "," + std::to_string(i + d / 2)
                                    : std::to_string(2 * i) + "," + std::to_string(2 * i + 1);
}

svg::Series inv_freq_series(const std::string& label, const std::vector<double>& inv) {
  svg::Series s;
  s.label = label;
  for (size_t i = 0; i < inv.size(); ++i) {
    s.x.push_back(static_cast<double>(i));
    s.y.push_back(inv[i]);
  }
  return s;
}

void plot_variants(const RopeConfig& base_config, int head_dim, int64_t length, const std::string& path) {
  svg::Plot p;
  p.title = "RoPE inverse frequency per pair, base " + g(base_config.base) + ", factor " + g(base_config.factor) +
            (base_config.original_max_position_embeddings > 0
                 ? ", L0 " + std::to_string(base_config.original_max_position_embeddings)
                 : "");
  p.x.label = "pair i (rotates two dims)";
  p.y.label = "inverse frequency theta_i (rad/token)";
  p.y.log = true;
  const bool have_l0 = base_config.original_max_position_embeddings > 0;
  for (RopeType t : {RopeType::Default, RopeType::Linear, RopeType::Ntk, RopeType::Dynamic, RopeType::Yarn,
                     RopeType::Llama3}) {
    if (t != RopeType::Default && base_config.factor <= 1.0) continue;
    if ((t == RopeType::Dynamic || t == RopeType::Yarn || t == RopeType::Llama3) && !have_l0) continue;
    RopeConfig c = base_config;
    c.type = t;
    // Without a length, show dynamic where it matters: at factor * L0.
    const int64_t at = t != RopeType::Dynamic ? 0
                       : length > 0         ? length
                                            : static_cast<int64_t>(base_config.factor *
                                                                   double(base_config.original_max_position_embeddings));
    std::string label = rope_type_name(t);
    if (t == RopeType::Dynamic) label += " at L=" + std::to_string(at);
    p.series.push_back(inv_freq_series(label, rope_frequencies(c, head_dim, at).inv_freq));
    if (t == RopeType::Default) p.series.back().dashed = true;
  }
  if (have_l0)
    p.rules.push_back({false, kTwoPi / static_cast<double>(base_config.original_max_position_embeddings), "one turn in L0"});
  svg::write(p, path);
}

}  // namespace infini::cli
