#pragma once
// The autotuner's choices for a model on one device: for each weight matrix of its layers and
// head, the kernel a prefill piece's product runs (ops::Matmul's piece kernel), measured by
// ops/matmul_tuner.hpp on the weight itself; and for its attention layers' shape, the attention
// family (ops/attention_tuner.hpp). Measurements are kept per device in the user's cache
// directory beside the pipeline cache ("tuning-<vendor>-<device>-<driver>-<cache uuid>.txt"),
// keyed by the build's matmul, attention and memory kernels; a damaged or stale file is ignored
// with one line on stderr, never trusted. INFINI_TUNE: auto (the cache, measuring what it lacks),
// force (measure again), off (today's rules alone).
#include <compare>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ops/attention_tuner.hpp"
#include "ops/matmul_tuner.hpp"

namespace infini::vk {
struct Capabilities;
class Device;
}  // namespace infini::vk

namespace infini::model {

class DeviceWeights;
struct LlamaConfig;

enum class TuneMode { Off, Auto, Force };
std::optional<TuneMode> tune_mode_named(std::string_view name);  // "off", "auto", "force"
std::string_view tune_mode_name(TuneMode mode);
// INFINI_TUNE, else Auto; an unknown value is Off with a line on stderr.
TuneMode tune_mode_from_environment();

// A weight's product: its type and shape (n rows of k values).
struct MatmulShapeKey {
  ElementType b = ElementType::F32;
  uint32_t n = 0, k = 0;
  auto operator<=>(const MatmulShapeKey&) const = default;
};

struct TunedMatmul {
  ops::MatmulChoice choice;  // Auto: today's rule
  std::vector<ops::CandidateTiming> timings;  // empty when the choice came from the cache
};
using MatmulTunings = std::map<MatmulShapeKey, TunedMatmul>;

// An attention layer's shape and what its cache holds: a segment of N, or a sliding context of C.
struct AttentionShapeKey {
  int32_t heads_q = 0, heads_kv = 0, head_dim = 0, value_dim = 0;
  uint32_t segment = 0;
  bool sliding = false;
  ElementType input = ElementType::F32;
  auto operator<=>(const AttentionShapeKey&) const = default;
};
struct TunedAttention {
  ops::AttentionKernel kernel = ops::AttentionKernel::Auto;  // Auto: today's rule
  std::vector<ops::AttentionTiming> timings;                  // empty when the choice came from the cache
};
using AttentionTunings = std::map<AttentionShapeKey, TunedAttention>;

struct KernelTunings {
  MatmulTunings matmuls;
  AttentionTunings attention;
  bool empty() const noexcept { return matmuls.empty() && attention.empty(); }
};

// The key of a model's attention layers under `options` (a graph's inputs are f32).
AttentionShapeKey attention_key(const LlamaConfig& config, const InfiniOptions& options);

// What a tuning file's measurements hold for: a digest of the build's matmul, attention and
// memory kernels.
uint64_t tuning_kernels_digest();

// The rows a piece is tuned at (the default piece).
inline constexpr uint32_t kTuneRows = 256;

// The cache file of a device under `dir`.
std::filesystem::path tuning_cache_path(const std::filesystem::path& dir, const vk::Capabilities& caps);
// The file's text: a header naming the device, its driver and the kernels' digest, a line per
// shape, and a checksum of all that.
std::string encode_tunings(const KernelTunings& tunings, const vk::Capabilities& caps, uint64_t kernels_digest);
// The choices in `text` when it is whole and for this device, driver and kernels; else nullopt
// and why in `why`.
std::optional<KernelTunings> decode_tunings(std::string_view text, const vk::Capabilities& caps, uint64_t kernels_digest,
                                            std::string& why);

// The device's cache file (in the user's cache directory) as choices; nullopt with why when there
// is none ("" in `why`) or it is damaged, foreign or stale.
std::optional<KernelTunings> read_tuning_cache(const vk::Capabilities& caps, std::string& why);

// "q4_0 2048x2048" and the like; "attention 16/4 heads of 64, segment 2048".
std::string shape_name(const MatmulShapeKey& shape);
std::string shape_name(const AttentionShapeKey& shape);

// The distinct weight shapes of layers [first, last) and the head (when `head`), each with the
// first chunk of a weight of that shape, to measure on.
struct WeightToTune {
  MatmulShapeKey shape;
  vk::BufferRange rows;  // the weight's first chunk
  uint32_t chunk_rows = 0;
};
std::vector<WeightToTune> weights_to_tune(const DeviceWeights& weights, const LlamaConfig& config);

// The choice for every weight shape of `weights` and for its attention layers (under `attention`)
// on its device under `mode`: from the cache, measured (and the cache updated) where
// it has none or `mode` is Force; empty under Off. `progress` (optional) is told each shape
// measured, of how many (and, when measuring stops early, once more with the count it reached as
// the total, so that a display can end its line). With `budget_seconds`, measuring stops once that much time has gone:
// the shapes left keep the rules, are not kept in the cache, and are measured at the next open
// (one line on stderr says so).
using TuneProgress = std::function<void(size_t done, size_t total, const std::string& shape)>;
KernelTunings tune_kernels(const DeviceWeights& weights, const LlamaConfig& config, const InfiniOptions& attention,
                           TuneMode mode,
                           const TuneProgress& progress = {}, std::optional<double> budget_seconds = std::nullopt);

// What measuring may take when a model's weights first reach a device (DeviceWeights): the issue's
// bound for a 1.1B model on a GPU. `infini tune` has none.
inline constexpr double kOpenTuneSeconds = 20;

}  // namespace infini::model
