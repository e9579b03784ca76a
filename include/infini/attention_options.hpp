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

// Where the public implementations of Infini-attention disagree about the memory (docs/design.md
// §1.8). The defaults are the convention infini has always run; a GGUF file states the others in
// its infini.* keys.
// Q and K into the memory un-rotated (default), or rotated at their in-segment positions, as the
// local attention sees them.
enum class MemoryPositions { Unrotated, Rotated };
// The KV head whose memory query head h reads: h / (Hq / Hkv) (default, as the local attention),
// or h % Hkv (a memory tiled across the query heads).
enum class MemoryHeadMap { Grouped, Modulo };
// The gate logits beta: one per query head [Hq] (default), one per head and value dim [Hq][Dv],
// or one for the layer [1].
enum class GateShape { PerHead, PerHeadValue, PerLayer };
// The memory read's denominator: max(sigma(q) . z, eps) (default) or sigma(q) . z + eps.
enum class EpsMode { Clamp, Add };

// The segment length N when neither the caller nor the model file gives one.
inline constexpr int64_t kDefaultSegment = 2048;
// The longest segment a layer takes: positions index a table of N rows, and per-piece bounds are
// 32-bit. Files, options and the command line are all held to it.
inline constexpr int64_t kMaxSegment = int64_t(1) << 24;

// The first tokens of the stream that a sliding context keeps (StreamingLLM's attention sinks).
inline constexpr int64_t kDefaultSinks = 4;

inline constexpr float kMemoryEps = 1e-10f;  // the default memory_eps

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
  // The memory's conventions (see MemoryPositions and the enums after it).
  MemoryPositions memory_positions = MemoryPositions::Unrotated;
  MemoryHeadMap memory_head_map = MemoryHeadMap::Grouped;
  GateShape gate_shape = GateShape::PerHead;
  float memory_z_init = 0.0f;   // every element of z at stream start, >= 0
  float memory_eps = kMemoryEps;  // > 0
  EpsMode memory_eps_mode = EpsMode::Clamp;
};


// How many gate logits a layer of this shape takes.
inline int64_t gate_values(const AttentionShape& shape, GateShape gate) {
  switch (gate) {
    case GateShape::PerHead: return shape.heads_q;
    case GateShape::PerHeadValue: return int64_t(shape.heads_q) * shape.value_dim;
    case GateShape::PerLayer: return 1;
  }
  return shape.heads_q;
}

}  // namespace infini
