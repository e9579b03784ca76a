#include "ops/attention_tuner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <random>

#include "infini/error.hpp"
#include "ops/attention_kernels.hpp"
#include "ops/host_tensor.hpp"
#include "ops/kernel_digest.hpp"
#include "ops/matrix_units.hpp"
#include "spirv/attention_coopmat_variants.h"
#include "spirv/attention_decode_variants.h"
#include "spirv/attention_decode_merge_variants.h"
#include "spirv/attention_rows_variants.h"
#include "spirv/attention_segment_variants.h"
#include "spirv/attention_split_variants.h"
#include "spirv/cache_append_variants.h"
#include "spirv/rope_variants.h"
#include "spirv/memory_read_variants.h"
#include "spirv/memory_read_coopmat_variants.h"
#include "spirv/memory_read_rows_variants.h"
#include "spirv/memory_update_variants.h"
#include "spirv/memory_update_coopmat_variants.h"
#include "spirv/memory_update_rows_variants.h"
#include "util/nmse.hpp"
#include "vk/command_stream.hpp"
#include "vk/device.hpp"

namespace infini::ops {
namespace {

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + ptrdiff_t(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// What one family computed and how long it took.
struct Run {
  AttentionTiming timing;
  std::vector<float> outputs;  // the piece's rows, then each decode token's
};

}  // namespace

std::vector<AttentionKernel> attention_candidates(const vk::Capabilities& caps, const AttentionShape& shape) {
  std::vector<AttentionKernel> out{AttentionKernel::Auto, AttentionKernel::Tiled};
  if (shape.head_dim % 4 == 0 && shape.value_dim % 4 == 0) out.push_back(AttentionKernel::Rows);
  if (missing_matrix_units(caps).empty()) out.push_back(AttentionKernel::Matrix);
  return out;
}

double attention_tolerance(AttentionKernel kernel) {
  return kernel == AttentionKernel::Matrix || kernel == AttentionKernel::MatrixEmulated ? 1e-4 : 1e-9;
}

AttentionKernel choose_attention_family(std::span<const AttentionTiming> timings) {
  const AttentionTiming* rule = nullptr;
  for (const AttentionTiming& t : timings)
    if (t.kernel == AttentionKernel::Auto && t.correct) rule = &t;
  if (!rule || !(rule->piece_seconds > 0) || !(rule->decode_seconds > 0)) return AttentionKernel::Auto;
  const double m = 1 + kAttentionMargin;
  AttentionKernel best = AttentionKernel::Auto;
  double best_cost = 2;  // the rule's: its two times relative to its own
  for (const AttentionTiming& t : timings) {
    if (!t.correct || t.kernel == AttentionKernel::Auto) continue;
    const bool no_slower = t.piece_seconds <= rule->piece_seconds * m && t.decode_seconds <= rule->decode_seconds * m;
    const bool faster = t.piece_seconds * m < rule->piece_seconds || t.decode_seconds * m < rule->decode_seconds;
    const double cost = t.piece_seconds / rule->piece_seconds + t.decode_seconds / rule->decode_seconds;
    if (no_slower && faster && cost < best_cost) {
      best = t.kernel;
      best_cost = cost;
    }
  }
  return best;
}

std::vector<AttentionTiming> time_attention_candidates(vk::Device& device, const AttentionShape& shape,
                                                       const InfiniOptions& options, ElementType input,
                                                       uint32_t piece_rows, int repeats) {
  // Before the piece: a short first segment whose memory is written (what the piece's memory read
  // costs does not depend on what the memory holds, and a whole segment of the tiled family takes
  // seconds on a CPU driver), or a sliding context's whole window (what its piece attends to).
  const uint32_t segment = uint32_t(options.segment);
  const uint32_t fill = options.sliding ? segment : std::min(segment, 16u);
  // Room after it: a whole segment, or a sliding context's cache past its window; the piece
  // leaves a row for a decode token and never ends the segment (so it can be taken back).
  const uint32_t room = options.sliding ? std::min(segment, 256u) : segment;
  const uint32_t piece = std::max(1u, std::min(piece_rows, room - 1));
  const uint32_t rows = fill + piece + 1;
  std::mt19937 rng(4242);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  auto random = [&](size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = uniform(rng);
    return v;
  };
  const vk::Buffer q = upload_tensor(device, random(size_t(rows) * shape.heads_q * shape.head_dim), input, "tuning Q");
  const vk::Buffer k = upload_tensor(device, random(size_t(rows) * shape.heads_kv * shape.head_dim), input, "tuning K");
  const vk::Buffer v = upload_tensor(device, random(size_t(rows) * shape.heads_kv * shape.value_dim), input, "tuning V");
  const std::vector<float> beta = random(size_t(gate_values(shape, options.gate_shape)));
  const size_t row_floats = size_t(shape.heads_q) * shape.value_dim;
  vk::Buffer out(device, std::max<uint64_t>(fill, piece) * row_floats * 4, vk::MemoryUse::DeviceLocal, "tuning out");
  vk::CommandStream stream(device);
  const int n = std::max(1, repeats);

  // Records `tokens` rows from row `first` and returns the submission's time.
  auto timed = [&](InfiniAttentionLayer& layer, uint32_t first, uint32_t tokens) {
    stream.begin();
    layer.record(stream, {&q, first}, {&k, first}, {&v, first}, out, tokens);
    stream.end();
    const auto t0 = std::chrono::steady_clock::now();
    stream.submit_and_wait();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  // The median of `n` runs of the same rows, each taken back before the next.
  auto median_time = [&](InfiniAttentionLayer& layer, uint32_t first, uint32_t tokens) {
    std::vector<double> seconds;
    for (int i = 0; i < n; ++i) {
      seconds.push_back(timed(layer, first, tokens));
      if (i + 1 < n) layer.take_back(tokens);
    }
    return median(std::move(seconds));
  };
  auto measure = [&](AttentionKernel kernel) {
    Run r{{kernel, INFINITY, INFINITY, INFINITY, false}, {}};
    try {
      InfiniAttentionLayer layer(device, shape, options, input, beta, kernel);
      stream.begin();
      layer.record(stream, {&q, 0}, {&k, 0}, {&v, 0}, out, fill);
      layer.record_finish(stream);  // a segment cut short: its memory written, the next one open
      stream.end();
      stream.submit_and_wait();
      r.timing.piece_seconds = median_time(layer, fill, piece);
      r.outputs = download_floats(out, piece * row_floats);
      r.timing.decode_seconds = median_time(layer, fill + piece, 1);
      const std::vector<float> token = download_floats(out, row_floats);
      r.outputs.insert(r.outputs.end(), token.begin(), token.end());
    } catch (const Error&) {  // a family this shape or device cannot take is not a candidate
      r.outputs.clear();
    }
    return r;
  };

  const AttentionKernel rule = choose_attention_kernel(AttentionKernel::Auto, shape, device.caps());
  std::vector<Run> runs;
  for (const AttentionKernel kernel : attention_candidates(device.caps(), shape))
    if (kernel == AttentionKernel::Auto || kernel != rule) runs.push_back(measure(kernel));
  // The reference: the tiled family's outputs (Auto's, when the rule is tiled).
  const AttentionKernel reference_kernel = rule == AttentionKernel::Tiled ? AttentionKernel::Auto : AttentionKernel::Tiled;
  const Run* reference = nullptr;
  for (const Run& r : runs)
    if (r.timing.kernel == reference_kernel && !r.outputs.empty()) reference = &r;
  std::vector<AttentionTiming> timings;
  for (Run& r : runs) {
    if (reference && !r.outputs.empty() && r.outputs.size() == reference->outputs.size()) {
      r.timing.nmse = nmse(std::span<const float>(r.outputs), std::span<const float>(reference->outputs));
      r.timing.correct = r.timing.nmse <= attention_tolerance(r.timing.kernel == AttentionKernel::Auto ? rule : r.timing.kernel);
    }
    timings.push_back(r.timing);
  }
  return timings;
}

uint64_t attention_kernels_digest() {
  using Variants = std::span<const spirv::ShaderVariant>;
  return shader_variants_digest({Variants(spirv::attention_coopmat_variants),
                                 Variants(spirv::attention_decode_variants),
                                 Variants(spirv::attention_decode_merge_variants),
                                 Variants(spirv::attention_rows_variants),
                                 Variants(spirv::attention_segment_variants),
                                 Variants(spirv::attention_split_variants),
                                 Variants(spirv::cache_append_variants),
                                 Variants(spirv::rope_variants),
                                 Variants(spirv::memory_read_variants),
                                 Variants(spirv::memory_read_coopmat_variants),
                                 Variants(spirv::memory_read_rows_variants),
                                 Variants(spirv::memory_update_variants),
                                 Variants(spirv::memory_update_coopmat_variants),
                                 Variants(spirv::memory_update_rows_variants)});
}

}  // namespace infini::ops
