#pragma once
// Float64 CPU reference of one Infini-attention layer (docs/design.md §1) and of each of its
// steps, so every GPU kernel can be checked on its own and the whole layer end to end. Plain loops
// in double precision on purpose: this code is the definition the kernels are measured against.
//
// Layouts (C order): q [T][Hq][D], k [T][Hkv][D], v [T][Hkv][Dv], outputs [T][Hq][Dv],
// beta [Hq] (or as options.gate_shape says), M [Hkv][D][Dv], z [Hkv][D]. Query head h uses KV head
// h / (Hq / Hkv) in its local attention; its memory's KV head follows options.memory_head_map.
// Bad sizes or shapes throw infini::Error.
#include <cstdint>
#include <span>
#include <vector>

#include "infini/attention_options.hpp"
#include "infini/rope_config.hpp"

namespace infini::reference {

// sigma(x) = ELU(x) + 1: positive feature map of the memory.
double sigma(double x);
double sigmoid(double x);

// Rotates x [tokens][heads][head_dim] in place; token t sits at position first_position + t.
// Pairs (i, i + d/2) for neox and (2i, 2i+1) for interleaved, i < d/2 with d = f.rotary_dim;
// dims >= d pass through; cos and sin are multiplied by f.attention_factor.
void apply_rope(std::span<double> x, int64_t tokens, int heads, int head_dim, const rope::RopeFrequencies& f,
                rope::RopeLayout layout, int64_t first_position);

// softmax(Q K^T / sqrt(D) + causal mask) V over one segment of already rotated q, k -> [n][Hq][Dv].
std::vector<double> causal_attention(std::span<const double> q, std::span<const double> k,
                                     std::span<const double> v, int64_t tokens, const AttentionShape& shape);

// Compressive memory of one layer: M = 0 and z = options.memory_z_init at stream start.
struct MemoryState {
  std::vector<double> M;  // [Hkv][D][Dv]
  std::vector<double> z;  // [Hkv][D]
  static MemoryState zeros(const AttentionShape& shape);
  static MemoryState initial(const AttentionShape& shape, const InfiniOptions& options);
};

// A_mem = sigma(Q) M / max(sigma(Q) z, eps) for q [n][Hq][D] -> [n][Hq][Dv] (the q the options'
// memory_positions asks for), query head h reading the KV head of options.memory_head_map, the
// denominator by options.memory_eps and memory_eps_mode.
std::vector<double> memory_read(std::span<const double> q, int64_t tokens, const AttentionShape& shape,
                                const MemoryState& state, const InfiniOptions& options = {});

// A = g A_mem + (1-g) A_dot with g = sigmoid(beta) (GateSign::Memory) or the roles of g and
// 1-g swapped (GateSign::Local), beta of options.gate_shape (beta[h], beta[h][e] or beta[0]).
// On the first segment of a stream FirstSegment::Local outputs A_dot;
// FirstSegment::Mix uses the formula (A_mem is 0 there).
std::vector<double> gate(std::span<const double> a_mem, std::span<const double> a_dot, std::span<const double> beta,
                         int64_t tokens, const AttentionShape& shape, const InfiniOptions& options,
                         bool first_segment_of_stream);

// Folds one segment of un-rotated k and v into the memory.
// linear: M += sigma(K)^T V.  delta: M += sigma(K)^T (V - sigma(K) M_old / max(sigma(K) z_old, eps)),
// with M_old, z_old the state before this call. Both: z += sum_t sigma(K_t).
void memory_write(std::span<const double> k, std::span<const double> v, int64_t tokens, const AttentionShape& shape,
                  UpdateRule rule, MemoryState& state, const InfiniOptions& options = {});

// One segment's write as the options have it: memory_write of its k, rotated at the segment's
// positions 0..n-1 first under MemoryPositions::Rotated.
void write_segment(std::span<const double> k, std::span<const double> v, int64_t tokens, const AttentionShape& shape,
                   const InfiniOptions& options, const rope::RopeFrequencies& freqs, MemoryState& state);

// Output of one segment (steps 1-3) of un-rotated q, k, v with segment-local positions 0..n-1,
// reading `state`; does not write it. options.memory == false gives A_dot.
std::vector<double> segment_output(std::span<const double> q, std::span<const double> k, std::span<const double> v,
                                   int64_t tokens, const AttentionShape& shape, const InfiniOptions& options,
                                   std::span<const double> beta, const rope::RopeFrequencies& freqs,
                                   const MemoryState& state, bool first_segment_of_stream);

// A whole stream in one go: segments of options.segment tokens, the last one may be shorter and
// is written to memory too (the stream ends there). final_state, when given, receives M and z.
std::vector<double> infini_attention_stream(std::span<const double> q, std::span<const double> k,
                                            std::span<const double> v, int64_t tokens, const AttentionShape& shape,
                                            const InfiniOptions& options, std::span<const double> beta,
                                            const rope::RopeFrequencies& freqs, MemoryState* final_state = nullptr);

// A layer that is fed a stream piece by piece and keeps its state between calls. Like decode on
// the device, tokens of a segment that is not full yet stay in an open-segment cache (un-rotated
// K and V, at most N tokens) and reach the memory only when the segment fills, so any split of
// the stream into prefill() and decode_token() calls gives the same outputs.
class LayerReference {
 public:
  LayerReference(const AttentionShape& shape, const InfiniOptions& options, std::vector<double> beta,
                 rope::RopeFrequencies freqs);

  // Next `tokens` tokens of the stream -> [tokens][Hq][Dv].
  std::vector<double> prefill(std::span<const double> q, std::span<const double> k, std::span<const double> v,
                              int64_t tokens);
  // Next single token: q [Hq][D], k [Hkv][D], v [Hkv][Dv] -> [Hq][Dv].
  std::vector<double> decode_token(std::span<const double> q, std::span<const double> k, std::span<const double> v);
  // Ends the stream: writes the open (shorter) segment into memory, as infini_attention_stream does.
  void flush();

  // Frequencies for the tokens that follow (dynamic RoPE changes them with the length).
  void set_frequencies(rope::RopeFrequencies freqs);
  const MemoryState& memory() const { return state_; }
  int64_t segments_written() const { return segments_written_; }
  int64_t open_tokens() const { return open_; }

 private:
  void close_segment();

  AttentionShape shape_;
  InfiniOptions options_;
  std::vector<double> beta_;
  rope::RopeFrequencies freqs_;
  MemoryState state_;
  int64_t segments_written_ = 0;  // segments folded into the memory (or closed, with memory off)
  int64_t open_ = 0;              // tokens in the open segment
  std::vector<double> open_k_;    // un-rotated [open][Hkv][D]
  std::vector<double> open_v_;    // [open][Hkv][Dv]
};

// Ordinary causal softmax attention over all T tokens with absolute positions 0..T-1, no segments,
// no memory: what a plain transformer layer computes. q, k un-rotated.
std::vector<double> plain_causal_attention_full(std::span<const double> q, std::span<const double> k,
                                                std::span<const double> v, int64_t tokens,
                                                const AttentionShape& shape, const rope::RopeFrequencies& freqs,
                                                rope::RopeLayout layout);

// Non-causal linear attention with the sigma feature map: every query attends to all kv tokens,
// num = sum_j (sigma(q).sigma(k_j)) v_j, den = sum_j sigma(q).sigma(k_j), out = num / max(den, eps).
// q [q_tokens][Hq][D], k [kv_tokens][Hkv][D], v [kv_tokens][Hkv][Dv] -> [q_tokens][Hq][Dv].
std::vector<double> linear_attention_noncausal(std::span<const double> q, std::span<const double> k,
                                               std::span<const double> v, int64_t q_tokens, int64_t kv_tokens,
                                               const AttentionShape& shape);

}  // namespace infini::reference
