#pragma once
// LayerStage's staged buffers: what the host writes before a piece and reads after it (private to
// exec/layer_stage*.cpp).
#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include "exec/layer_stage.hpp"
#include "ops/pick_token.hpp"
#include "ops/top_k.hpp"
#include "vk/staged_buffer.hpp"

namespace infini::model {

inline vk::BufferRange whole(const vk::Buffer& b) { return vk::BufferRange::whole(b); }

// Recorded piece shapes kept at most. A steady stream needs a handful (decode: one token, with and
// without the segment's end; prefill: its piece sizes); a caller feeding pieces of ever new sizes
// gets recordings made and dropped past this.
inline constexpr size_t kMaxRecordedPieces = 512;
// A piece's timestamps: start, inputs uploaded, outputs computed, end (see StageProfile).
inline constexpr uint32_t kTimestamps = 4;
// With RunnerOptions::time_kernels, room for a timestamp after each dispatch of a piece (a 1.1B
// model's 22 layers record about 160 for a decode token, 25 a layer for a prefill piece).
inline constexpr uint32_t kTimedDispatches = 4096;
// Dispatches of a decode token's layer at the most (every step apart, biases, Q/K norms, the
// attention's steps, weights in a few row chunks): bounds a timed decode chain.
inline constexpr uint32_t kMostLayerDispatches = 32;

// A buffer the host reads or writes around each piece.
inline vk::StagedBuffer staged(vk::Device& device, uint64_t words, vk::StagingDirection direction, const char* label) {
  return vk::StagedBuffer(device, std::max<uint64_t>(words, 1) * 4, direction, label);
}

// What the host writes before a piece (token ids or hidden states) and reads after it (logits or
// hidden states) is staged: its copies are part of the piece's recording (vk/staged_buffer.hpp).
// What the host writes for every piece has one copy per hand-off slot, so that a piece can be
// submitted while the one before it still runs.
struct LayerStage::Scratch {
  std::vector<vk::StagedBuffer> position_io;  // the open segment's length when the piece runs (one word)
  std::vector<vk::StagedBuffer> ids_io;       // token ids (the embedding stage)
  // A chain's draws (ops::PickToken::Draws) and picks (one pair per step); the head stage.
  std::unique_ptr<vk::StagedBuffer> chain_draws_io, chain_ranked_io;
  vk::StagedBuffer x_io, logits_io, ranked_io;
  const vk::Buffer &x, &logits;
  Scratch(vk::Device& d, const LlamaConfig& c, uint64_t p, bool embeds, bool head, const HiddenSlots& slots,
          size_t slot_count)
      : x_io(staged(d, p * c.embd, hidden_direction(embeds || !slots.in.empty(), head || !slots.out.empty()),
                    "hidden x")),
        logits_io(staged(d, head ? p * c.vocab : 1, head_out(head), "logits")),
        ranked_io(staged(d, head ? ops::TopK::kMaxK * 2 : 1, head_out(head), "ranked logits")),
        x(x_io.device_buffer()),
        logits(logits_io.device_buffer()) {
    position_io.reserve(slot_count);
    ids_io.reserve(slot_count);
    for (size_t i = 0; i < slot_count; ++i) {
      position_io.push_back(staged(d, 1, vk::StagingDirection::ToDevice, "open tokens"));
      ids_io.push_back(staged(d, embeds ? p : 1, embeds ? vk::StagingDirection::ToDevice : vk::StagingDirection::None,
                              "token ids"));
    }
    if (!head) return;
    chain_draws_io = std::make_unique<vk::StagedBuffer>(
        staged(d, sizeof(ops::PickToken::Draws) / 4, vk::StagingDirection::ToDevice, "chain draws"));
    chain_ranked_io = std::make_unique<vk::StagedBuffer>(
        staged(d, LayerStage::kMaxChain * 2, vk::StagingDirection::FromDevice, "chain ranked logits"));
  }

  static vk::StagingDirection head_out(bool head) {
    return head ? vk::StagingDirection::FromDevice : vk::StagingDirection::None;
  }
  // What the host copies: the hidden states a stage receives (unless it embeds, or they come
  // through shared memory) and those it passes on (unless it has the head, or they go through
  // shared memory).
  static vk::StagingDirection hidden_direction(bool no_host_in, bool no_host_out) {
    if (no_host_in) return no_host_out ? vk::StagingDirection::None : vk::StagingDirection::FromDevice;
    return no_host_out ? vk::StagingDirection::ToDevice : vk::StagingDirection::Both;
  }
};

// LayerStage::recording (a template shared by the piece and chain submissions).
template <typename Record>
inline vk::CommandStream& LayerStage::recording(vk::CommandStream* cached, std::unique_ptr<vk::CommandStream>* keep,
                                         uint32_t tokens, double& record_s, const Record& record) {
  if (cached) {
    graph_->advance(tokens);
    return *cached;
  }
  if (keep) *keep = std::make_unique<vk::CommandStream>(device_, timestamp_capacity());
  vk::CommandStream& stream = keep ? **keep : *stream_;  // the caller keeps *keep once recorded
  const auto r0 = std::chrono::steady_clock::now();
  stream.begin();
  record(stream);
  stream.end();
  record_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - r0).count();
  return stream;
}

}  // namespace infini::model
