#pragma once
// Measuring the attention kernels on the device at hand, as ops/matmul_tuner.hpp does the matmul's.
// One layer per candidate family (Auto, i.e. today's rule, first; Tiled; Rows where D and Dv are
// multiples of 4; Matrix on matrix units that fit the shape) streams the same random Q, K and V:
// a first segment whole (its memory written), then a prefill piece of the next segment (local
// attention and the memory read) and decode tokens, each timed and taken back to time it again.
// Every output is checked against the tiled family's before a candidate may be chosen. The
// family runs both prefill and decode, so a candidate replaces the rule only when it is not
// slower at either (beyond the noise margin) and faster at one.
#include <cstdint>
#include <span>
#include <vector>

#include "infini/attention_options.hpp"
#include "infini/element_type.hpp"
#include "ops/infini_attention_layer.hpp"

namespace infini::vk {
class Device;
}

namespace infini::ops {

struct AttentionTiming {
  AttentionKernel kernel = AttentionKernel::Auto;
  double piece_seconds = 0;   // a prefill piece, the median of the repeats
  double decode_seconds = 0;  // one decode token, the median
  double nmse = 0;            // of its outputs against the tiled family's
  bool correct = false;
};

// The families that can run `shape` on this device, Auto first.
std::vector<AttentionKernel> attention_candidates(const vk::Capabilities& caps, const AttentionShape& shape);

// The largest NMSE against the tiled family: summation order in f32, f16 operands on matrix units.
double attention_tolerance(AttentionKernel kernel);

// Auto (the rule) unless a correct candidate is not slower than it at prefill or decode by more
// than kAttentionMargin and faster at one of them by more than that; of those, the one with the
// smallest sum of its two times relative to the rule's. Auto when the rule itself was not correct
// or not measured (nothing to compare with).
inline constexpr double kAttentionMargin = 0.03;
AttentionKernel choose_attention_family(std::span<const AttentionTiming> timings);

// Times every candidate (the rule's own family once, as Auto) on `piece_rows` rows of a second
// segment and on decode tokens, for a layer of `shape` with `options` and inputs of type `input`.
std::vector<AttentionTiming> time_attention_candidates(vk::Device& device, const AttentionShape& shape,
                                                       const InfiniOptions& options, ElementType input,
                                                       uint32_t piece_rows, int repeats = 3);

// A digest of every attention and memory kernel's SPIR-V this build holds (a tuning measured with
// other kernels is stale).
uint64_t attention_kernels_digest();

}  // namespace infini::ops
