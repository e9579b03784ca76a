#pragma once
// Runs the pieces of a stream through a chain of layer stages on several devices, one worker
// thread per stage: while stage s works on piece p, stage s-1 already works on piece p+1, a
// wavefront over the stream. This is sound because a stage's work on a piece depends only on its
// own memory state and on the previous stage's output for that piece; each stage takes pieces in
// stream order. The hidden states travel either through memory both devices share (one slot per
// piece in flight, written and read by the devices) or through the host, which copies them out of
// one device's staging memory and into the next's (exec/handoff.hpp). Where two neighbouring
// devices also share a signal (vk/shared_signal.hpp, LayerStage::signals_next), a stage hands each piece to
// the next as soon as it has submitted it, and the next stage's device waits for it on the GPU;
// elsewhere a stage's worker waits for its device to finish a piece before handing it on.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "exec/layer_stage.hpp"

namespace infini::model {

// How pieces waited between stages, summed over the pieces a stage received from the one before
// it: queue_s while that stage was still busy with an earlier piece, wake_s while its idle worker
// thread was being woken (the cost of a hand-off between threads). submitted_ahead counts the
// pieces the stage submitted while its device still ran the piece before; device_waits the pieces
// it received as soon as the stage before had submitted them, to wait for on its device.
struct HandoffProfile {
  int64_t handoffs = 0;
  double queue_s = 0, wake_s = 0;
  int64_t submitted_ahead = 0;
  int64_t device_waits = 0;
  HandoffProfile operator-(const HandoffProfile& earlier) const noexcept {
    return {handoffs - earlier.handoffs, queue_s - earlier.queue_s, wake_s - earlier.wake_s,
            submitted_ahead - earlier.submitted_ahead, device_waits - earlier.device_waits};
  }
};

struct Piece {
  std::span<const int32_t> tokens;
  HeadOutput head;  // what the last stage gives back
};

class StagePipeline {
 public:
  // At most `in_flight` pieces are between the first stage's input and the last stage's output
  // (bounds the host memory of hidden states in transit).
  StagePipeline(std::vector<LayerStage*> stages, size_t in_flight);
  ~StagePipeline();
  StagePipeline(const StagePipeline&) = delete;
  StagePipeline& operator=(const StagePipeline&) = delete;

  // Runs every piece through every stage; returns when all are done. When a stage fails, the
  // rest of the pieces are dropped and the first failure is thrown, naming the stage's device and
  // layers (the stream state is then inconsistent: reset or restore before feeding more).
  void run(std::span<const Piece> pieces);
  // A chain of `steps` decode steps (LlamaRunner::forward_greedy, forward_sampled), all submitted
  // before any is waited for: each stage's step waits on its device for the stage before, and the
  // first stage's next step for the head stage's pick (the token ring; picked from the step's k
  // best by `draws`, ops::PickToken), so no host work comes between the tokens. The host waits
  // only when a stage holds as many steps as it has slots. `picks` gets the picks of all steps but
  // the last (2 words each), `last` the last step's k best (2 * k words), or with k 0 (draws from
  // whole rows) `last_row` its logits. Needs the ring (LayerStage::on_token_ring). Failures as in run().
  void run_chain(int32_t first, uint32_t steps, const ops::PickToken::Draws& draws, uint32_t k, uint32_t* picks,
                 uint32_t* last, float* last_row = nullptr);
  // Per stage, running totals (the first stage's are its waits for run() to hand it pieces).
  std::vector<HandoffProfile> handoffs() const;

 private:
  struct Work {
    size_t piece;
    uint64_t ticket;  // the piece's number over the pipeline's life (LayerStage::submit)
    std::vector<float> hidden;
    std::chrono::steady_clock::time_point queued;
    vk::SignalToken ready;  // what the stage before handed on with it, where its device signals this one's
  };
  void worker(size_t stage);
  void run_here(const Piece& piece);

  std::vector<LayerStage*> stages_;
  size_t in_flight_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::deque<Work>> queues_;
  std::span<const Piece> pieces_;
  size_t finished_ = 0;  // pieces that left the pipeline (done or dropped) in this run
  size_t unfinished_ = 0;  // pieces submitted to a stage whose worker has not finished them yet
  uint64_t tickets_ = 0;   // the last piece's ticket
  std::string failure_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
  std::vector<HandoffProfile> handoffs_;
};

}  // namespace infini::model
