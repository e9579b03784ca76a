#pragma once
// What a stage hands on: the head's outputs for a piece, and the shared buffers and signals
// through which hidden states and a decode chain's tokens pass between stages.
#include <cstdint>
#include <vector>

namespace infini::vk {
class Buffer;
class SharedSignal;
}  // namespace infini::vk

namespace infini::model {

// What the stage with the head gives back for a piece: `rows` rows of logits (the piece's last
// rows) into `logits`, or, when top_k > 0 (rows must be 1), only the top_k best logits of the
// last row with their ids, ranked on the device: 2 * top_k words into `ranked` (ops::TopK's
// pairs), so decode reads back 8 * top_k bytes, not the whole row.
struct HeadOutput {
  uint32_t rows = 0;
  float* logits = nullptr;
  uint32_t top_k = 0;
  uint32_t* ranked = nullptr;
};

// Buffers through which a stage receives its hidden states from the stage before it and passes
// them to the one after it, when those devices share memory with this one (exec/handoff.hpp):
// one slot per piece in flight, the i-th piece of a pipeline run using slot i % slots. Empty: the
// host copies the hidden states in and out.
// ready_in / ready_out, where the devices can also share a signal (vk/shared_signal.hpp): the
// stage before gives it when a piece's hidden states are in their slot, and this stage's
// submission of the piece waits for it on the device, so the host need not wait for the stage
// before to finish a piece before submitting it here. Null: the host orders them.
// token_in / token_out, token_ready_in / token_ready_out: the token ring of decode chains over
// several stages (LlamaRunner::forward_sampled), the way back from the head stage to the embedding
// stage: each step's best token id in a slot of shared memory (one word), with the signal the
// embedding stage's next step waits for on its device. Empty / null: no ring.
struct HiddenSlots {
  std::vector<const vk::Buffer*> in, out;
  vk::SharedSignal* ready_in = nullptr;
  vk::SharedSignal* ready_out = nullptr;
  std::vector<const vk::Buffer*> token_in, token_out;
  vk::SharedSignal* token_ready_in = nullptr;
  vk::SharedSignal* token_ready_out = nullptr;
};

}  // namespace infini::model
