#pragma once
// Shapes and the output-changing conventions of one Infini-attention layer (docs/design.md §1).
#include <cstdint>

#include "infini/rope_config.hpp"

namespace infini {

struct AttentionShape {
  int heads_q = 1;    // Hq
  int heads_kv = 1;   // Hkv, divides Hq; query head h uses KV head h / (Hq / Hkv)
  int head_dim = 64;  // D (query/key)
  int value_dim = 64; // Dv
};

enum class UpdateRule { Linear, Delta };
// What the first segment of a stream (M = 0, z = 0) outputs: mix = g*0 + (1-g)*A_dot, local = A_dot.
enum class FirstSegment { Mix, Local };
// memory: g = sigmoid(beta) weights A_mem (default). local: g weights A_dot instead.
enum class GateSign { Memory, Local };

// The segment length N when neither the caller nor the model file gives one.
inline constexpr int64_t kDefaultSegment = 2048;
// The longest segment a layer takes: positions index a table of N rows, and per-piece bounds are
// 32-bit. Files, options and the command line are all held to it.
inline constexpr int64_t kMaxSegment = int64_t(1) << 24;

// The first tokens of the stream that a sliding context keeps (StreamingLLM's attention sinks).
inline constexpr int64_t kDefaultSinks = 4;

struct InfiniOptions {
  int64_t segment = kDefaultSegment;  // N; with `sliding`, the context C
  UpdateRule update = UpdateRule::Delta;
  FirstSegment first_segment = FirstSegment::Mix;
  GateSign gate_sign = GateSign::Memory;
  rope::RopeConfig rope;
  bool memory = true;  // false: A = A_dot, the state is never read or written
  // Without memory, a segment that never ends: every token attends with full causal attention up
  // to C = `segment` tokens of stream, and past that the stream's first `sinks` tokens and its
  // most recent C - sinks, at positions within the context (the sinks 0..sinks-1, the rest in
  // order up to C-1), as StreamingLLM (Xiao et al., ICLR 2024) has it: no distance exceeds C and
  // no position grows with the stream. 0 <= sinks < C.
  bool sliding = false;
  int64_t sinks = kDefaultSinks;
};

inline constexpr float kMemoryEps = 1e-10f;

}  // namespace infini
