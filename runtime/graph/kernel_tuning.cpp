#include "graph/kernel_tuning.hpp"

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

AttentionShapeKey attention_key(const LlamaConfig& c, const InfiniOptions& o) {
  return {int32_t(c.heads), int32_t(c.heads_kv), int32_t(c.head_dim), int32_t(c.head_dim), uint32_t(o.segment), o.sliding,
          ElementType::F32};
}

uint64_t tuning_kernels_digest() {
  Fnv1a h;
  const uint64_t parts[] = {ops::matmul_kernels_digest(), ops::attention_kernels_digest()};
  h.add(parts, sizeof parts);
  return h.hash;
}

std::string encode_tunings(const KernelTunings& tunings, const vk::Capabilities& caps, uint64_t kernels_digest) {
  std::string body = std::string(kMagic) + "\n" + header(caps, kernels_digest) + "\n";
  for (const auto& [shape, tuned] : tunings.matmuls)
    body += std::string(element_name(shape.b)) + " " + std::to_string(shape.n) + " " + std::to_string(shape.k) + " " +
            std::to_string(kTuneRows) + " " + tuned.choice.name() + "\n";
  for (const auto& [a, tuned] : tunings.attention)
    body += "attention " + std::to_string(a.heads_q) + " " + std::to_string(a.heads_kv) + " " + std::to_string(a.head_dim) +
            " " + std::to_string(a.value_dim) + " " + std::to_string(a.segment) + " " + (a.sliding ? "sliding" : "segments") +
            " " + std::string(element_name(a.input)) + " " + ops::attention_kernel_name(tuned.kernel) + "\n";
  return body + "checksum " + hex(fnv1a(body)) + "\n";
}

std::optional<KernelTunings> decode_tunings(std::string_view text, const vk::Capabilities& caps,
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
  KernelTunings out;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    if (line.starts_with("attention ")) {
      std::string word, cache, input, kernel, rest;
      int64_t hq = 0, hkv = 0, d = 0, dv = 0, segment = 0;
      const bool read = bool(fields >> word >> hq >> hkv >> d >> dv >> segment >> cache >> input >> kernel);
      const auto type = read ? element_type_from_name(input) : std::nullopt;
      const auto family = read ? ops::attention_kernel_named(kernel) : std::nullopt;
      const auto positive = [](int64_t x) { return x > 0 && x <= INT32_MAX; };
      if (!type || !family || !positive(hq) || !positive(hkv) || !positive(d) || !positive(dv) || !positive(segment) ||
          (cache != "sliding" && cache != "segments") || (fields >> rest)) {
        why = "a line does not read as an attention shape and a kernel: '" + line.substr(0, 80) + "'";
        return std::nullopt;
      }
      out.attention[{int32_t(hq), int32_t(hkv), int32_t(d), int32_t(dv), uint32_t(segment), cache == "sliding", *type}] = {
          *family, {}};
      continue;
    }
    std::string type, kernel;
    uint64_t n = 0, k = 0, rows = 0;
    const auto b = (fields >> type >> n >> k >> rows >> kernel) ? element_type_from_name(type) : std::nullopt;
    const auto chosen = ops::matmul_choice_named(kernel);
    std::string rest;
    if (!b || !chosen || n == 0 || k == 0 || n > UINT32_MAX || k > UINT32_MAX || rows != kTuneRows || (fields >> rest)) {
      why = "a line does not read as a shape and a kernel: '" + line.substr(0, 80) + "'";
      return std::nullopt;
    }
    out.matmuls[{*b, uint32_t(n), uint32_t(k)}] = {*chosen, {}};
  }
  return out;
}

std::optional<KernelTunings> read_tuning_cache(const vk::Capabilities& caps, std::string& why) {
  why.clear();
  const std::filesystem::path dir = vk::user_cache_directory();
  if (dir.empty()) return std::nullopt;
  std::ifstream in(tuning_cache_path(dir, caps), std::ios::binary);
  if (!in) return std::nullopt;
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return decode_tunings(text, caps, tuning_kernels_digest(), why);
}

std::string shape_name(const MatmulShapeKey& s) {
  return std::string(element_name(s.b)) + " " + std::to_string(s.n) + "x" + std::to_string(s.k);
}

std::string shape_name(const AttentionShapeKey& a) {
  return "attention " + std::to_string(a.heads_q) + "/" + std::to_string(a.heads_kv) + " heads of " +
         std::to_string(a.head_dim) + (a.sliding ? ", context " : ", segment ") + std::to_string(a.segment);
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

KernelTunings tune_kernels(const DeviceWeights& weights, const LlamaConfig& config, const InfiniOptions& options,
                           TuneMode mode,
                           const TuneProgress& progress, std::optional<double> budget_seconds) {
  if (mode == TuneMode::Off) return {};
  vk::Device& device = weights.device();
  const vk::Capabilities& caps = device.caps();
  const uint64_t digest = tuning_kernels_digest();
  const std::filesystem::path dir = vk::user_cache_directory();
  const std::filesystem::path file = dir.empty() ? std::filesystem::path() : tuning_cache_path(dir, caps);
  KernelTunings cached;
  if (mode == TuneMode::Auto) {
    std::string why;
    if (auto read = read_tuning_cache(caps, why)) cached = std::move(*read);
    else if (!why.empty()) warn("tuning cache " + file.string() + " ignored: " + why);
  }
  const std::vector<WeightToTune> todo = weights_to_tune(weights, config);
  // The attention layers' shape, when this stage has attention and the model's options fit it.
  const AttentionShapeKey attention = attention_key(config, options);
  const bool attends = weights.range().count() > 0 && options.segment > 1;
  KernelTunings out;
  size_t measured = 0, to_measure = 0, left = 0;
  for (const WeightToTune& w : todo) to_measure += cached.matmuls.contains(w.shape) ? 0 : 1;
  if (attends && !cached.attention.contains(attention)) ++to_measure;
  const auto t0 = std::chrono::steady_clock::now();
  const auto over_budget = [&] {
    return budget_seconds &&
           std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > *budget_seconds;
  };
  for (const WeightToTune& w : todo) {
    if (const auto it = cached.matmuls.find(w.shape); it != cached.matmuls.end()) {
      out.matmuls[w.shape] = it->second;
      continue;
    }
    if (over_budget()) {
      ++left;
      continue;
    }
    TunedMatmul t;
    t.timings = ops::time_piece_candidates(device, w.shape.b, w.rows, w.chunk_rows, w.shape.k, kTuneRows);
    t.choice = ops::choose_kernel(t.timings);
    out.matmuls[w.shape] = std::move(t);
    if (progress) progress(++measured, to_measure, shape_name(w.shape));
  }
  if (attends) {
    if (const auto it = cached.attention.find(attention); it != cached.attention.end()) {
      out.attention[attention] = it->second;
    } else if (over_budget()) {
      ++left;
    } else {
      TunedAttention t;
      const AttentionShape shape{attention.heads_q, attention.heads_kv, attention.head_dim, attention.value_dim};
      t.timings = ops::time_attention_candidates(device, shape, options, attention.input, kTuneRows);
      t.kernel = ops::choose_attention_family(t.timings);
      out.attention[attention] = std::move(t);
      if (progress) progress(++measured, to_measure, shape_name(attention));
    }
  }
  if (left > 0 && progress && measured > 0) progress(measured, measured, "");  // the last line a progress display shows
  if (left > 0)
    warn("measuring the kernels stopped after " + std::to_string(int(*budget_seconds)) + " s; " + std::to_string(left) +
         " shapes keep the rules until the next open (or run infini tune)");
  if (measured > 0 && !file.empty()) {
    KernelTunings all = cached;  // shapes of other models measured before stay
    for (const auto& [shape, t] : out.matmuls) all.matmuls[shape] = {t.choice, {}};
    for (const auto& [shape, t] : out.attention) all.attention[shape] = {t.kernel, {}};
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
