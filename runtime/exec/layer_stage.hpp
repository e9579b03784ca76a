#pragma once
// The execution of layers [first, last) of a Llama model on one device (graph/llama_graph.hpp
// holds the layers and records their forward pass): the host's staged inputs and outputs, the
// recordings of piece shapes, submission, decode chains and profiles. The stage that starts at
// layer 0 also embeds the tokens, the one that ends at the last layer also computes logits; one
// stage holding everything is the whole model on one device. Between stages the hidden states of
// a piece travel through shared memory or the host.
//
// A piece's commands depend only on (piece tokens, logits rows, first segment?, does it end the
// segment?): the position inside the segment reaches the kernels through a buffer the host writes
// before each submission. They are recorded once per such shape and replayed whenever it recurs,
// so a steady stream, decode at any position included, records nothing and creates no pipelines,
// descriptor sets, buffers or command buffers.
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "exec/stage_io.hpp"
#include "exec/stage_profile.hpp"
#include "graph/llama_graph.hpp"
#include "model/llama_weights.hpp"
#include "ops/infini_attention_layer.hpp"
#include "ops/layer_snapshot.hpp"
#include "ops/matmul.hpp"
#include "ops/pick_token.hpp"
#include "ops/row_chunks.hpp"
#include "ops/top_k.hpp"
#include "vk/buffer.hpp"
#include "vk/command_stream.hpp"
#include "vk/dispatch_profile.hpp"
#include "vk/shared_signal.hpp"

namespace infini::vk {
class Device;
}

namespace infini::model {

struct RunnerOptions;

class LayerStage {
 public:
  // `options.max_piece` must already fit the device (see max_piece_for). Runs on `weights` (on
  // `device`), whose range is the stage's.
  LayerStage(vk::Device& device, std::shared_ptr<const DeviceWeights> weights, const LlamaConfig& config,
             const RunnerOptions& options, HiddenSlots slots = {});
  ~LayerStage();

  bool embeds() const noexcept { return range_.first == 0; }
  bool has_head() const noexcept { return range_.last == config_.layers; }

  // Runs one piece of `tokens.size()` tokens (at most max_piece, inside one segment). The
  // embedding stage reads `tokens`; the others `hidden_in` ([n][embd]), or with shared slots in,
  // slot `slot`. The head stage gives back `head`; the others write the piece's hidden states to
  // `hidden_out`, or with shared slots out, to slot `slot`.
  void run(std::span<const int32_t> tokens, std::span<const float> hidden_in, const HeadOutput& head,
           std::vector<float>* hidden_out, uint32_t slot = 0);
  // run() in two halves, so that the device can hold the next piece while the host waits for
  // this one: submit() records or replays the piece and submits it without waiting; finish()
  // waits for the oldest piece submitted and gives back its outputs. A second piece may be
  // submitted before the first is finished when can_submit_ahead() (its slot's inputs are its
  // own and nothing of the first is left for the host to read from memory the second writes).
  // With ready_in or ready_out: `ticket` is the piece's number in the pipeline (from 1, rising with
  // every piece), `ready` what the stage before handed on with it (its ready_out's token), and
  // the token returned is what to hand on to the next stage with the piece.
  //
  // `chain`: the piece (one token) is step chain->index of a chain over several stages: after
  // the first step the embedding stage takes its token from the token ring (the head stage's pick
  // of the step before, whose signal chain->token_ready carries), not from `tokens`; the head stage
  // writes the step's logits to a row of their own and ranks its head.top_k best, picks the next
  // token from them (ops::PickToken, with the draws of set_chain_draws), keeps the pick for
  // finish() (one pair into head.ranked), sends its id round the ring, and returns the ring's
  // token; at the chain's last step (chain->last) it keeps the top_k best for finish() instead.
  // Needs the ring (HiddenSlots::token_*) on those two stages.
  struct ChainStep {
    uint32_t index = 0;
    vk::SignalToken token_ready;
    bool last = false;
  };
  vk::SignalToken submit(std::span<const int32_t> tokens, std::span<const float> hidden_in, const HeadOutput& head,
                         uint32_t slot = 0, uint64_t ticket = 0, vk::SignalToken ready = {}, ChainStep* chain = nullptr);
  void finish(std::vector<float>* hidden_out);
  bool can_submit_ahead() const noexcept;

  // Decoding ahead on the device, for a stage that holds the whole model (embeds and has the
  // head): feeds `first`, then steps - 1 more tokens, each picked on the device from the k best
  // logits of the step before by `draws` (ops::PickToken: the best, or the host sampler's draw with
  // uniforms[step]), in one submission, so no host round trip, wait or wake-up comes between the
  // tokens. finish() then gives back the picks (2 * (steps - 1) words into `picks`, ops::TopK's
  // pairs: the token step i + 1 was fed is pair i's id) and the last step's k best (2 * k words into
  // `ranked`), from which the caller picks the next token. `steps` is 1..chain_room(). k = 0:
  // each step draws from its whole row of logits (ops::PickToken::record_row; top-k off and
  // top-p 1), and finish() gives back the last step's row (vocab floats into `last_row`) instead.
  void submit_chain(int32_t first, uint32_t steps, const ops::PickToken::Draws& draws, uint32_t k, uint32_t* picks,
                    uint32_t* ranked, float* last_row = nullptr);
  // Most steps a chain can take now: kMaxChain, fewer where the open segment has less room (a
  // chain never fills the segment, so that take_back can undo any of it).
  uint32_t chain_room() const noexcept;
  // The head stage, before a chain over several stages: how its steps pick (ops::PickToken).
  void set_chain_draws(const ops::PickToken::Draws& draws);
  // Whether this stage has its end of the token ring (chains over several stages).
  bool on_token_ring() const noexcept { return !slots_.token_in.empty() || !slots_.token_out.empty(); }
  // After a chain over several stages: its last `tokens` tokens may be taken back.
  void allow_take_back(uint32_t tokens) noexcept { chain_left_ = tokens; }
  size_t in_flight() const noexcept { return pending_.size(); }
  static constexpr uint32_t kMaxChain = 16;
  // Takes back the last `tokens` tokens fed (fewer than the last chain's steps, which must be the
  // last piece run): a caller that stopped at a chain's end-of-sequence token or at its own stop.
  // The last logits become those of the token fed before them.
  void take_back(uint32_t tokens);
  // The shared slot of the i-th piece of a pipeline run (0 without shared slots).
  uint32_t slot_for(size_t piece) const noexcept { return uint32_t(piece % slot_count()); }
  bool receives_shared() const noexcept { return !slots_.in.empty(); }
  bool sends_shared() const noexcept { return !slots_.out.empty(); }
  // Whether the next stage's device waits for this one's pieces on the device (ready_out).
  bool signals_next() const noexcept { return slots_.ready_out != nullptr; }
  // After this stage failed: waits for its device to be idle, then raises ready_out to `ticket`
  // from the host, so that the next stage's submissions waiting for pieces this one will never
  // finish can run (their results are to be dropped) and the pipeline can drain. Never throws.
  void release_next(uint64_t ticket) noexcept;
  size_t slot_count() const noexcept;  // at least 1
  // The head stage: the logits of the last token of the last piece run with logits rows (those
  // stay on the device when only a ranking was read back). Throws when there are none.
  std::vector<float> last_logits() const;

  // For a batched decode step (exec/batch_decoder.hpp), which records this stage's layers with
  // other streams': its graph, the buffer its last logits are read from (the head stage), and,
  // after the step fed a token (and put its logits in that buffer's row 0), the note of it.
  LlamaGraph& graph() noexcept { return *graph_; }
  const vk::Buffer& logits_buffer() const;
  void took_batched_token() noexcept {
    if (has_head()) last_row_ = 0;
    chain_left_ = 0;
  }

  void reset();
  // Appends one BusyInterval per piece run to `out` until called again with nullptr.
  void record_timeline(std::vector<BusyInterval>* out) noexcept { timeline_ = out; }
  std::vector<ops::LayerSnapshot> snapshot() const;
  bool fits(std::span<const ops::LayerSnapshot> layers) const;
  void restore(std::span<const ops::LayerSnapshot> layers);

  uint32_t segment_room() const;
  size_t recorded_pieces() const noexcept { return recorded_.size(); }
  const StageProfile& profile() const noexcept { return profile_; }
  // Device time per kernel of the pieces run so far, with RunnerOptions::time_kernels (else empty).
  const vk::DispatchProfile& dispatch_profile() const noexcept { return dispatch_profile_; }
  LayerRange range() const noexcept { return range_; }
  vk::Device& device() const noexcept { return device_; }
  // "'llvmpipe (...)' (layers 0-3)", for messages.
  std::string describe() const;

 private:
  struct Scratch;
  struct Pending {  // a piece submitted and not yet finished
    vk::CommandStream* stream;
    HeadOutput head;
    uint32_t n;
    uint32_t chain;      // steps of a decode chain on this stage alone (its tokens), 0 for a piece
    uint32_t chain_row;  // 1 + the index of a step of a chain over several stages, 0 for others
    uint32_t* picks;     // a chain's picks, for finish()
    bool chain_last;     // the last step of a chain over several stages
    double record_s, host_in_s, before_submit_s, submit_s;
    std::chrono::steady_clock::time_point submitted;
  };
  void record_chain_step_in(vk::CommandStream& stream, uint32_t index, uint32_t slot);
  void record_chain_step_out(vk::CommandStream& stream, const ChainStep& step, uint32_t slot, uint32_t top_k);
  PieceIO piece_io(uint32_t slot) const;  // the graph's inputs and outputs in the staged buffers of `slot`
  void record_chain(vk::CommandStream& stream, uint32_t steps, uint32_t k);
  // The recording to submit: `cached` when there is one (the layers' state advanced by `tokens`
  // as recording it would), else one made by `record` into a new stream left in `*keep` for the
  // caller's cache (when it has room; else into the stage's scratch stream). record_s gets the
  // recording's host time.
  // (A template, defined in layer_stage_scratch.hpp: no std::function allocated per piece.)
  template <typename Record>
  vk::CommandStream& recording(vk::CommandStream* cached, std::unique_ptr<vk::CommandStream>* keep, uint32_t tokens,
                               double& record_s, const Record& record);
  void record_hidden_in(vk::CommandStream& stream, uint64_t bytes, uint32_t slot);
  void record_hidden_out(vk::CommandStream& stream, uint64_t bytes, uint32_t slot);
  uint32_t timestamp_capacity() const noexcept;

  vk::Device& device_;
  LlamaConfig config_;
  LayerRange range_;
  HiddenSlots slots_;
  uint32_t max_piece_;
  bool time_kernels_;  // RunnerOptions::time_kernels
  std::unique_ptr<LlamaGraph> graph_;
  std::unique_ptr<ops::PickToken> pick_;  // head stage
  std::optional<uint32_t> last_row_;  // the logits buffer's row of the last token with logits
  std::unique_ptr<Scratch> scratch_;
  std::unique_ptr<vk::CommandStream> stream_;  // for reset() and shapes past the cache's capacity
  // tokens, logits rows, top-k, first segment, ends the segment, shared slot, 1 + chain step (or 0),
  // the chain's last step
  using PieceShape = std::tuple<uint32_t, uint32_t, uint32_t, bool, bool, uint32_t, uint32_t, bool>;
  std::map<PieceShape, std::unique_ptr<vk::CommandStream>> recorded_;
  // Chains: steps, first segment, ranked logits per step
  using ChainShape = std::tuple<uint32_t, bool, uint32_t>;
  std::map<ChainShape, std::unique_ptr<vk::CommandStream>> chains_;
  uint32_t chain_left_ = 0;  // tokens of the last chain take_back may still take
  std::vector<BusyInterval>* timeline_ = nullptr;
  std::deque<Pending> pending_;
  std::chrono::steady_clock::time_point last_done_{};  // when the host saw the last piece done
  StageProfile profile_;
  vk::DispatchProfile dispatch_profile_;
};

}  // namespace infini::model
