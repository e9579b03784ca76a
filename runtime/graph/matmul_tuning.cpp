#include "graph/matmul_tuning.hpp"

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "graph/device_weights.hpp"
#include "io/atomic_file.hpp"
#include "model/llama_weights.hpp"
#include "util/environment.hpp"
#include "util/fnv1a.hpp"
#include "vk/device.hpp"
#include "vk/pipeline_cache_file.hpp"

namespace infini::model {
namespace {

constexpr std::string_view kMagic = "infini-matmul-tuning 2";  // 2: a choice is a kernel, tiling and split

uint64_t fnv1a(std::string_view text) {
  Fnv1a h;
  h.add(text.data(), text.size());
  return h.hash;
}

std::string hex(uint64_t v) {
  char s[17];
  std::snprintf(s, sizeof s, "%016" PRIx64, v);
  return s;
}

// The header line naming what the measurements hold for: the device and driver (as the cache
// files' names do) and the build's matmul kernels.
std::string header(const vk::Capabilities& caps, uint64_t kernels_digest) {
  return "device " + vk::device_cache_stem(caps) + " kernels " + hex(kernels_digest);
}

void warn(const std::string& what) { std::fprintf(stderr, "infini: warning: %s\n", what.c_str()); }

}  // namespace

std::optional<TuneMode> tune_mode_named(std::string_view name) {
  for (TuneMode m : {TuneMode::Off, TuneMode::Auto, TuneMode::Force})
    if (tune_mode_name(m) == name) return m;
  return std::nullopt;
}

std::string_view tune_mode_name(TuneMode mode) {
  switch (mode) {
    case TuneMode::Off: return "off";
    case TuneMode::Auto: return "auto";
    case TuneMode::Force: return "force";
  }
  return "?";
}

TuneMode tune_mode_from_environment() {
  const std::optional<std::string> v = env::value(env::Variable::Tune);
  if (!v) return TuneMode::Auto;
  if (const auto mode = tune_mode_named(*v)) return *mode;
  warn("INFINI_TUNE is '" + *v + "' (expected off, auto or force); tuning is off");
  return TuneMode::Off;
}

std::filesystem::path tuning_cache_path(const std::filesystem::path& dir, const vk::Capabilities& caps) {
  return dir / ("tuning-" + vk::device_cache_stem(caps) + ".txt");
}

std::string encode_tunings(const MatmulTunings& tunings, const vk::Capabilities& caps, uint64_t kernels_digest) {
  std::string body = std::string(kMagic) + "\n" + header(caps, kernels_digest) + "\n";
  for (const auto& [shape, tuned] : tunings)
    body += std::string(element_name(shape.b)) + " " + std::to_string(shape.n) + " " + std::to_string(shape.k) + " " +
            std::to_string(kTuneRows) + " " + tuned.choice.name() + "\n";
  return body + "checksum " + hex(fnv1a(body)) + "\n";
}

std::optional<MatmulTunings> decode_tunings(std::string_view text, const vk::Capabilities& caps,
                                            uint64_t kernels_digest, std::string& why) {
  const size_t sum_at = text.rfind("checksum ");
  if (sum_at == std::string_view::npos || (sum_at > 0 && text[sum_at - 1] != '\n')) {
    why = "no checksum line";
    return std::nullopt;
  }
  const std::string_view body = text.substr(0, sum_at);
  if (text.substr(sum_at) != "checksum " + hex(fnv1a(body)) + "\n") {
    why = "its checksum does not match its contents";
    return std::nullopt;
  }
  std::istringstream in{std::string(body)};
  std::string line;
  if (!std::getline(in, line) || line != kMagic) {
    why = "it is not a tuning file of this version";
    return std::nullopt;
  }
  if (!std::getline(in, line) || line != header(caps, kernels_digest)) {
    why = "it was measured on another device, driver or build";
    return std::nullopt;
  }
  MatmulTunings out;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string type, kernel;
    uint64_t n = 0, k = 0, rows = 0;
    const auto b = (fields >> type >> n >> k >> rows >> kernel) ? element_type_from_name(type) : std::nullopt;
    const auto chosen = ops::matmul_choice_named(kernel);
    std::string rest;
    if (!b || !chosen || n == 0 || k == 0 || n > UINT32_MAX || k > UINT32_MAX || rows != kTuneRows || (fields >> rest)) {
      why = "a line does not read as a shape and a kernel: '" + line.substr(0, 80) + "'";
      return std::nullopt;
    }
    out[{*b, uint32_t(n), uint32_t(k)}] = {*chosen, {}};
  }
  return out;
}

std::optional<MatmulTunings> read_tuning_cache(const vk::Capabilities& caps, std::string& why) {
  why.clear();
  const std::filesystem::path dir = vk::user_cache_directory();
  if (dir.empty()) return std::nullopt;
  std::ifstream in(tuning_cache_path(dir, caps), std::ios::binary);
  if (!in) return std::nullopt;
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return decode_tunings(text, caps, ops::matmul_kernels_digest(), why);
}

std::string shape_name(const MatmulShapeKey& s) {
  return std::string(element_name(s.b)) + " " + std::to_string(s.n) + "x" + std::to_string(s.k);
}

std::vector<WeightToTune> weights_to_tune(const DeviceWeights& weights, const LlamaConfig& c) {
  std::vector<WeightToTune> out;
  std::set<MatmulShapeKey> seen;
  auto add = [&](ElementType b, const ops::RowChunks& w, int64_t k) {
    const MatmulShapeKey shape{b, uint32_t(w.rows()), uint32_t(k)};
    if (w.chunks().empty() || !seen.insert(shape).second) return;
    const ops::RowChunk& first = w.chunks().front();
    out.push_back({shape, vk::BufferRange::whole(first.buffer), first.rows});
  };
  const LayerRange r = weights.range();
  for (int64_t i = r.first; i < r.last; ++i) {
    const DeviceLayerWeights& l = weights.layer(i);
    const int64_t q = c.heads * c.head_dim;
    add(l.types.wq, l.wq, c.embd);
    add(l.types.wk, l.wk, c.embd);
    add(l.types.wv, l.wv, c.embd);
    add(l.types.wo, l.wo, q);
    add(l.types.ffn_gate, l.w_gate, c.embd);
    add(l.types.ffn_up, l.w_up, c.embd);
    add(l.types.ffn_down, l.w_down, c.ffn);
  }
  if (r.last == c.layers && weights.output()) add(weights.output_type(), *weights.output(), c.embd);
  return out;
}

MatmulTunings tune_matmuls(const DeviceWeights& weights, const LlamaConfig& config, TuneMode mode,
                           const TuneProgress& progress, std::optional<double> budget_seconds) {
  if (mode == TuneMode::Off) return {};
  vk::Device& device = weights.device();
  const vk::Capabilities& caps = device.caps();
  const uint64_t digest = ops::matmul_kernels_digest();
  const std::filesystem::path dir = vk::user_cache_directory();
  const std::filesystem::path file = dir.empty() ? std::filesystem::path() : tuning_cache_path(dir, caps);
  MatmulTunings cached;
  if (mode == TuneMode::Auto) {
    std::string why;
    if (auto read = read_tuning_cache(caps, why)) cached = std::move(*read);
    else if (!why.empty()) warn("tuning cache " + file.string() + " ignored: " + why);
  }
  const std::vector<WeightToTune> todo = weights_to_tune(weights, config);
  MatmulTunings out;
  size_t measured = 0, to_measure = 0, left = 0;
  for (const WeightToTune& w : todo) to_measure += cached.contains(w.shape) ? 0 : 1;
  const auto t0 = std::chrono::steady_clock::now();
  for (const WeightToTune& w : todo) {
    if (const auto it = cached.find(w.shape); it != cached.end()) {
      out[w.shape] = it->second;
      continue;
    }
    if (budget_seconds &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > *budget_seconds) {
      ++left;
      continue;
    }
    TunedMatmul t;
    t.timings = ops::time_piece_candidates(device, w.shape.b, w.rows, w.chunk_rows, w.shape.k, kTuneRows);
    t.choice = ops::choose_kernel(t.timings);
    out[w.shape] = std::move(t);
    if (progress) progress(++measured, to_measure, w.shape);
  }
  if (left > 0)
    warn("measuring the matmul kernels stopped after " + std::to_string(int(*budget_seconds)) + " s; " +
         std::to_string(left) + " weight shapes keep the rules until the next open (or run infini tune)");
  if (measured > 0 && !file.empty()) {
    MatmulTunings all = cached;  // shapes of other models measured before stay
    for (const auto& [shape, t] : out) all[shape] = {t.choice, {}};
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    try {
      const std::string text = encode_tunings(all, caps, digest);
      io::AtomicFile saved(file);
      saved.write(std::as_bytes(std::span<const char>(text)));
      saved.commit();
    } catch (const std::exception& e) {
      warn(std::string("tuning cache not saved: ") + e.what());
    }
  }
  return out;
}

}  // namespace infini::model
