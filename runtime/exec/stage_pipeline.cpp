#include "exec/stage_pipeline.hpp"

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
    queues_.front().push_back({p, ++tickets_, {}, std::chrono::steady_clock::now(), {}});
    changed_.notify_all();
  }
  // Every piece has left the last stage, and every stage has finished its own (a stage that handed
  // a piece on by semaphore may finish it after the stages after it did).
  changed_.wait(lock, [&] { return finished_ == pieces.size() && unfinished_ == 0; });
  pieces_ = {};
  if (!failure_.empty()) throw Error(failure_);
}

// One piece (a decode step) has nothing to overlap: the stages run it one after the other on the
// calling thread, with no worker to wake between them. Where a stage's device waits for the one
// before it on the GPU, the host submits both before waiting for either.
void StagePipeline::run_here(const Piece& piece) {
  const uint64_t ticket = ++tickets_;
  std::vector<float> hidden, out;
  vk::SignalToken ready;  // what the last stage submitted hands on to the next
  std::string failure;
  // Finishes stages [from, to] (all submitted), in order; the last of them gives its hidden states
  // to `out` when it hands them on through the host.
  auto finish = [&](size_t from, size_t to) {
    for (size_t t = from; t <= to; ++t) {
      LayerStage& stage = *stages_[t];
      const bool gives = t == to && t + 1 < stages_.size() && !stage.sends_shared();
      try {
        stage.finish(gives ? &out : nullptr);
      } catch (const std::exception& e) {
        if (failure.empty()) failure = "device " + stage.describe() + ": " + e.what();
        stage.release_next(ticket);
      }
    }
  };
  size_t unfinished = 0;  // stages [unfinished, s) were submitted and not finished
  for (size_t s = 0; s < stages_.size(); ++s) {
    LayerStage& stage = *stages_[s];
    const bool last = s + 1 == stages_.size();
    try {
      ready = stage.submit(piece.tokens, hidden, last ? piece.head : HeadOutput{}, 0, ticket, std::move(ready));
    } catch (const std::exception& e) {
      failure = "device " + stage.describe() + ": " + e.what();
      if (s > unfinished) finish(unfinished, s - 1);
      break;
    }
    const bool hands_early = !last && stage.signals_next();  // the next stage's device waits for this one
    {
      std::lock_guard lock(mutex_);
      ++handoffs_[s].handoffs;
      if (hands_early) ++handoffs_[s + 1].device_waits;
    }
    if (hands_early) continue;
    finish(unfinished, s);
    unfinished = s + 1;
    if (!failure.empty()) break;
    hidden.swap(out);
  }
  if (!failure.empty()) throw Error(failure);
}

void StagePipeline::run_chain(int32_t first, uint32_t steps, const ops::PickToken::Draws& draws, uint32_t k,
                              uint32_t* picks, uint32_t* last_ranked, float* last_row) {
  const size_t count = stages_.size();
  const size_t slots = stages_.front()->slot_count();
  std::vector<uint64_t> tickets(steps, 0);
  std::vector<uint32_t> submitted(count, 0), finished(count, 0);  // steps per stage
  std::string failure;
  // Finishes step `step` on every stage that holds it, in pipeline order: each waited on its
  // device for the stage before (and the first for the head's step before), all finished by now,
  // so a failed stage releases the one waiting for it before that one is waited for.
  auto finish_step = [&](uint32_t step) {
    for (size_t s = 0; s < count; ++s) {
      if (finished[s] != step || submitted[s] <= step) continue;
      LayerStage& stage = *stages_[s];
      try {
        stage.finish(nullptr);
      } catch (const std::exception& e) {
        if (failure.empty()) failure = "device " + stage.describe() + ": " + e.what();
        stage.release_next(tickets[submitted[s] - 1]);
      }
      ++finished[s];
    }
  };
  stages_.back()->set_chain_draws(draws);
  vk::SignalToken token;  // the head's pick of the step before, on its way round the ring
  uint32_t done = 0;      // steps finished on every stage
  for (uint32_t i = 0; i < steps && failure.empty(); ++i) {
    while (i - done >= slots) finish_step(done++);  // a slot's inputs and waits are free again
    if (!failure.empty()) break;
    tickets[i] = ++tickets_;
    vk::SignalToken ready;
    for (size_t s = 0; s < count; ++s) {
      LayerStage& stage = *stages_[s];
      const bool last = s + 1 == count;
      const bool ahead = stage.in_flight() > 0;
      LayerStage::ChainStep step{i, s == 0 ? std::move(token) : vk::SignalToken{}, i + 1 == steps};
      const HeadOutput head = !last        ? HeadOutput{}
                              : step.last  ? HeadOutput{1, last_row, k, last_ranked}
                                           : HeadOutput{1, nullptr, k, picks + 2 * size_t(i)};
      try {
        vk::SignalToken handed = stage.submit(std::span<const int32_t>(&first, 1), {}, head, uint32_t(i % slots),
                                              tickets[i], std::move(ready), &step);
        (last ? token : ready) = std::move(handed);
        ++submitted[s];
      } catch (const std::exception& e) {
        failure = "device " + stage.describe() + ": " + e.what();
        // The stages before it have this step on their devices; none after it waits for it.
        break;
      }
      std::lock_guard lock(mutex_);
      ++handoffs_[s].handoffs;
      if (ahead) ++handoffs_[s].submitted_ahead;
      if (!last) ++handoffs_[s + 1].device_waits;
    }
  }
  while (done < steps) finish_step(done++);
  if (!failure.empty()) throw Error(failure);
}

std::vector<HandoffProfile> StagePipeline::handoffs() const {
  std::lock_guard lock(mutex_);
  return handoffs_;
}

void StagePipeline::worker(size_t s) {
  LayerStage& stage = *stages_[s];
  const bool last = s + 1 == stages_.size();
  // The next stage's device waits for this one's pieces on the GPU: hand each on once submitted.
  const bool hands_early = !last && stage.signals_next();
  std::deque<std::pair<size_t, uint64_t>> submitted;  // pieces (and tickets) on the device, oldest first
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
      vk::SignalToken handed;
      try {
        // The stage has one shared slot per piece in flight: the piece that used this slot before
        // has left the pipeline.
        handed = stage.submit(piece.tokens, work.hidden, last ? piece.head : HeadOutput{},
                              stage.slot_for(work.piece), work.ticket, std::move(work.ready));
      } catch (const std::exception& e) {
        failed = "device " + stage.describe() + ": " + e.what();
      }
      lock.lock();
      if (failed.empty()) {
        if (!submitted.empty()) ++handoffs_[s].submitted_ahead;
        submitted.emplace_back(work.piece, work.ticket);
        ++unfinished_;
        if (hands_early) {
          ++handoffs_[s + 1].device_waits;
          queues_[s + 1].push_back({work.piece, work.ticket, {}, std::chrono::steady_clock::now(), std::move(handed)});
          changed_.notify_all();
        }
        continue;  // maybe take one more before waiting
      }
      if (failure_.empty()) failure_ = failed;
      ++finished_;
      changed_.notify_all();
      continue;
    }
    const auto [piece, ticket] = submitted.front();
    submitted.pop_front();
    const uint64_t last_handed = submitted.empty() ? ticket : submitted.back().second;
    lock.unlock();
    std::string failed;
    std::vector<float> out;
    try {
      stage.finish(last || stage.sends_shared() ? nullptr : &out);
    } catch (const std::exception& e) {
      failed = "device " + stage.describe() + ": " + e.what();
      // The next stage may wait on its device for pieces this one will not finish.
      if (hands_early) stage.release_next(last_handed);
    }
    lock.lock();
    --unfinished_;
    if (!failed.empty() && failure_.empty()) failure_ = failed;
    if (hands_early) {
      // Already with the next stage, which counts it out.
    } else if (last || !failure_.empty()) {
      ++finished_;
    } else {
      queues_[s + 1].push_back({piece, ticket, std::move(out), std::chrono::steady_clock::now(), {}});
    }
    changed_.notify_all();
  }
}

}  // namespace infini::model
