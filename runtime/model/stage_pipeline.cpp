#include "model/stage_pipeline.hpp"

#include "infini/error.hpp"

namespace infini::model {

StagePipeline::StagePipeline(std::vector<LayerStage*> stages, size_t in_flight)
    : stages_(std::move(stages)),
      in_flight_(std::max<size_t>(in_flight, 1)),
      queues_(stages_.size()),
      handoffs_(stages_.size()) {
  for (size_t s = 0; s < stages_.size(); ++s) threads_.emplace_back([this, s] { worker(s); });
}

StagePipeline::~StagePipeline() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void StagePipeline::run(std::span<const Piece> pieces) {
  if (pieces.size() == 1) return run_here(pieces.front());
  std::unique_lock lock(mutex_);
  pieces_ = pieces;
  finished_ = 0;
  failure_.clear();
  for (size_t p = 0; p < pieces.size(); ++p) {
    changed_.wait(lock, [&] { return p - finished_ < in_flight_; });
    queues_.front().push_back({p, {}, std::chrono::steady_clock::now()});
    changed_.notify_all();
  }
  changed_.wait(lock, [&] { return finished_ == pieces.size(); });
  pieces_ = {};
  if (!failure_.empty()) throw Error(failure_);
}

// One piece (a decode step) has nothing to overlap: the stages run it one after the other on the
// calling thread, with no worker to wake between them.
void StagePipeline::run_here(const Piece& piece) {
  std::vector<float> hidden, out;
  for (size_t s = 0; s < stages_.size(); ++s) {
    LayerStage& stage = *stages_[s];
    const bool last = s + 1 == stages_.size();
    try {
      stage.run(piece.tokens, hidden, last ? piece.head : HeadOutput{},
                last || stage.sends_shared() ? nullptr : &out, 0);
    } catch (const std::exception& e) {
      throw Error("device " + stage.describe() + ": " + e.what());
    }
    hidden.swap(out);
    std::lock_guard lock(mutex_);
    ++handoffs_[s].handoffs;
  }
}

std::vector<HandoffProfile> StagePipeline::handoffs() const {
  std::lock_guard lock(mutex_);
  return handoffs_;
}

void StagePipeline::worker(size_t s) {
  LayerStage& stage = *stages_[s];
  const bool last = s + 1 == stages_.size();
  std::deque<size_t> submitted;  // pieces on the device, oldest first
  std::unique_lock lock(mutex_);
  for (;;) {
    const bool idle = queues_[s].empty() && submitted.empty();  // then the next piece's wait includes waking this thread
    changed_.wait(lock, [&] { return stop_ || !queues_[s].empty() || !submitted.empty(); });
    if (stop_) return;
    // Take the next piece onto the device before waiting for the one it runs, where the stage can
    // hold both: the device then never waits for the host between them.
    if (!queues_[s].empty() && (submitted.empty() || stage.can_submit_ahead())) {
      Work work = std::move(queues_[s].front());
      queues_[s].pop_front();
      const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - work.queued).count();
      HandoffProfile& h = handoffs_[s];
      ++h.handoffs;
      (idle ? h.wake_s : h.queue_s) += waited;
      if (!failure_.empty()) {  // an earlier piece failed: drop this one
        ++finished_;
        changed_.notify_all();
        continue;
      }
      const Piece& piece = pieces_[work.piece];
      lock.unlock();
      std::string failed;
      try {
        // The stage has one shared slot per piece in flight: the piece that used this slot before
        // has left the pipeline.
        stage.submit(piece.tokens, work.hidden, last ? piece.head : HeadOutput{}, stage.slot_for(work.piece));
      } catch (const std::exception& e) {
        failed = "device " + stage.describe() + ": " + e.what();
      }
      lock.lock();
      if (failed.empty()) {
        if (!submitted.empty()) ++handoffs_[s].submitted_ahead;
        submitted.push_back(work.piece);
        continue;  // maybe take one more before waiting
      }
      if (failure_.empty()) failure_ = failed;
      ++finished_;
      changed_.notify_all();
      continue;
    }
    const size_t piece = submitted.front();
    submitted.pop_front();
    lock.unlock();
    std::string failed;
    std::vector<float> out;
    try {
      stage.finish(last || stage.sends_shared() ? nullptr : &out);
    } catch (const std::exception& e) {
      failed = "device " + stage.describe() + ": " + e.what();
    }
    lock.lock();
    if (!failed.empty() && failure_.empty()) failure_ = failed;
    if (last || !failure_.empty()) ++finished_;
    else queues_[s + 1].push_back({piece, std::move(out), std::chrono::steady_clock::now()});
    changed_.notify_all();
  }
}

}  // namespace infini::model
