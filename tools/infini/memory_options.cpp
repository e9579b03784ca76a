#include "memory_options.hpp"

#include <limits>

#include "option_checks.hpp"

namespace infini::cli {

void add_memory_convention_options(CLI::App& app, MemoryConventionTargets t) {
  add_choice_option(app, "--memory-rope", t.positions,
                    {{"before", MemoryPositions::Unrotated}, {"after", MemoryPositions::Rotated}},
                    "Q and K into the memory before RoPE (default) or after it");
  add_choice_option(app, "--head-map", t.head_map, {{"group", MemoryHeadMap::Grouped}, {"modulo", MemoryHeadMap::Modulo}},
                    "The KV head whose memory query head h reads: h / (Hq/Hkv) (group, default) or h % Hkv");
  add_choice_option(app, "--gate-shape", t.gate_shape,
                    {{"head", GateShape::PerHead}, {"head_value", GateShape::PerHeadValue}, {"layer", GateShape::PerLayer}},
                    "The gate logits' shape: [Hq] (head, default), [Hq,Dv] (head_value) or [1] (layer)");
  app.add_option("--z-init", t.z_init, "Every element of the memory's z at stream start (default 0)")
      ->check(number_range(0.0, std::numeric_limits<double>::infinity()));
  app.add_option("--eps", t.eps, "The memory read's eps (default 1e-10)")->check(number_range(0.0, 1.0, true));
  add_choice_option(app, "--eps-mode", t.eps_mode, {{"clamp", EpsMode::Clamp}, {"add", EpsMode::Add}},
                    "The memory read's denominator: max(den, eps) (clamp, default) or den + eps (add)");
}

}  // namespace infini::cli
