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

struct InfiniOptions {
  int64_t segment = kDefaultSegment;  // N
  UpdateRule update = UpdateRule::Delta;
  FirstSegment first_segment = FirstSegment::Mix;
  GateSign gate_sign = GateSign::Memory;
  rope::RopeConfig rope;
  bool memory = true;  // false: A = A_dot, the state is never read or written
};

inline constexpr float kMemoryEps = 1e-10f;

}  // namespace infini
