// infini rope coverage: Period of each dimension pair and how many complete within a context. A table by default, --json, --svg FILE; on the same
// host frequency code the kernels use (docs/design.md §2).
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "command.hpp"
#include "infini/error.hpp"
#include "infini/rope_config.hpp"
#include "rope_analysis/rope_analysis.hpp"
#include "rope_analysis/svg_plot.hpp"
#include "rope_common.hpp"

namespace infini::cli {
namespace {

using namespace infini::rope;
using nlohmann::json;

struct CoverageArgs {
  int dim = 128;
  double base = 10000.0;
  std::string ctx;
  bool json = false;
  std::string svg;
};

int run_coverage(const CoverageArgs& a) {
  check_dim(a.dim);
  check_base(a.base);
  const int64_t ctx = parse_length(a.ctx, "--ctx");
  const Coverage c = rope_coverage(a.dim, a.base, static_cast<double>(ctx));
  if (a.json) {
    json j{{"dim", a.dim},           {"base", a.base},
           {"ctx", ctx},             {"period", c.period},
           {"complete_dims", c.complete_dims}, {"complete_pairs", c.complete_pairs},
           {"critical_dim", c.critical_dim}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("RoPE periods 2 pi / theta_i, d=%d, base %s, context %" PRId64 "\n", a.dim, g(a.base).c_str(), ctx);
    std::printf("%5s  %-9s  %-13s  %s\n", "pair", "dims", "period", "full period within context");
    for (size_t i = 0; i < c.period.size(); ++i)
      std::printf("%5zu  %-9s  %-13s  %s\n", i, (std::to_string(2 * i) + "," + std::to_string(2 * i + 1)).c_str(),
                  g(c.period[i]).c_str(), c.period[i] <= static_cast<double>(ctx) ? "yes" : "no");
    std::printf("%d of %d dims (%d of %d pairs) complete a full period within %" PRId64 " tokens\n", c.complete_dims,
                a.dim, c.complete_pairs, a.dim / 2, ctx);
    std::printf("Liu et al. critical dimension 2*ceil((d/2) log_base(T/2pi)) = %d\n", c.critical_dim);
  }
  if (!a.svg.empty()) {
    svg::Plot p;
    p.title = "RoPE period per dimension, d=" + std::to_string(a.dim) + ", base " + g(a.base);
    p.x.label = "dimension 2i (pair i rotates dims 2i, 2i+1)";
    p.y.label = "period 2 pi / theta_i (tokens)";
    p.y.log = true;
    svg::Series s;
    s.style = svg::Style::LinePoints;
    for (size_t i = 0; i < c.period.size(); ++i) {
      s.x.push_back(2.0 * static_cast<double>(i));
      s.y.push_back(c.period[i]);
    }
    p.series.push_back(s);
    p.rules.push_back({false, static_cast<double>(ctx), "context " + std::to_string(ctx)});
    p.rules.push_back({true, static_cast<double>(c.critical_dim), "critical dim " + std::to_string(c.critical_dim)});
    svg::write(p, a.svg);
    if (!a.json) std::printf("wrote %s\n", a.svg.c_str());
  }
  return 0;
}

const RegisterCommand registration{
    "rope coverage", "Period of each dimension pair and how many complete within a context", [](CLI::App& app) {
      auto a = std::make_shared<CoverageArgs>();
      app.add_option("--dim", a->dim, "Rotary dim d")->capture_default_str();
      app.add_option("--base", a->base, "RoPE base")->capture_default_str();
      app.add_option("--ctx", a->ctx, "Context length T, e.g. 4096 or 4K")->required();
      app.add_flag("--json", a->json, "One JSON object");
      app.add_option("--svg", a->svg, "Plot period per dimension with the context line")->type_name("FILE");
      return [a] { return run_coverage(*a); };
    }};

}  // namespace
}  // namespace infini::cli
