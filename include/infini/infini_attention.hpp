#pragma once
// infini::InfiniAttention: one Infini-attention layer for integrators who bring their own Q, K
// and V (docs/design.md §1). Feed a stream in pieces of any size; the compressive memory and
// the open segment stay on the device between calls, so device memory depends on the segment
// length and the shape, never on how long the stream gets.
//
//   infini::Context ctx;
//   infini::InfiniAttention layer(ctx, {16, 4, 128, 128}, options, beta);
//   auto out = layer.process(q, k, v, tokens);   // q [tokens][Hq][D], k/v [tokens][Hkv][D|Dv]
//   ...                                           // any number of further calls
//   layer.finish();                               // end of stream: write the last short segment
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "infini/attention_options.hpp"
#include "infini/context.hpp"
#include "infini/element_type.hpp"

namespace infini {


class InfiniAttention {
 public:
  // beta: the gate logits, one per query head. Throws infini::Error on a shape, option or RoPE
  // setting that does not fit, or a device limit.
  InfiniAttention(Context& context, const AttentionShape& shape, const InfiniOptions& options,
                  std::span<const float> beta, ElementType input = ElementType::F32);  // F32 or F16 (IEEE half bits)
  ~InfiniAttention();
  InfiniAttention(InfiniAttention&&) noexcept;
  InfiniAttention& operator=(InfiniAttention&&) noexcept;

  // Processes `tokens` more tokens of the stream; returns A [tokens][Hq][Dv]. The layer's input
  // type must be F32 for the float overload and F16 for the half-bits overload.
  std::vector<float> process(std::span<const float> q, std::span<const float> k, std::span<const float> v,
                             int64_t tokens);
  std::vector<float> process(std::span<const uint16_t> q, std::span<const uint16_t> k, std::span<const uint16_t> v,
                             int64_t tokens);
  // Ends the stream: writes a partly filled last segment into the memory.
  void finish();
  // Starts a new stream: zero memory, empty segment.
  void reset();

  std::vector<float> memory() const;  // M [Hkv][D][Dv]
  std::vector<float> norm() const;    // z [Hkv][D]
  int64_t tokens_processed() const noexcept;
  int64_t segments_written() const noexcept;
  const AttentionShape& shape() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace infini
