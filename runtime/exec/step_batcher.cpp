#include "exec/step_batcher.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <string>

#include "infini/error.hpp"

namespace infini::model {

struct StepBatcher::Request {
  BatchDecoder::Entry entry;
  uint32_t k;
  Clock::time_point arrived;
  bool done = false;
  std::vector<ops::RankedLogit> ranked;
  std::exception_ptr error;
};

StageWeights stage_weights(const LlamaRunner& runner) {
  StageWeights out;
  for (size_t i = 0; i < runner.stage_count(); ++i) out.push_back(runner.stage(i).graph().shared_weights());
  return out;
}

StepBatcher::StepBatcher(StageWeights weights, const LlamaConfig& config, const GraphOptions& options,
                         uint32_t max_batch)
    : weights_(std::move(weights)), config_(config), options_(options), max_batch_(max_batch) {
  if (max_batch == 0) throw Error("model: a batched step takes at least one stream");
}

StepBatcher::~StepBatcher() = default;

StepBatcher::Generating::Generating(StepBatcher& batcher) : batcher_(batcher) {
  std::lock_guard lock(batcher_.mutex_);
  ++batcher_.generating_;
}

StepBatcher::Generating::~Generating() {
  std::lock_guard lock(batcher_.mutex_);
  --batcher_.generating_;
  batcher_.wake_.notify_all();  // a step waiting for this session to join need not
}

uint32_t StepBatcher::generating() const {
  std::lock_guard lock(mutex_);
  return generating_;
}

DecodeBatchStats StepBatcher::stats() const {
  std::lock_guard lock(mutex_);
  DecodeBatchStats s = stats_;
  s.waiting = uint32_t(waiting_.size());
  s.generating = generating_;
  return s;
}

std::vector<ops::RankedLogit> StepBatcher::step(LlamaRunner& runner, int32_t token, uint32_t k) {
  if (stage_weights(runner) != weights_)
    throw Error("model: a batched step runs sessions on the batcher's weights and devices");
  if (token < 0 || token >= config_.vocab)
    throw Error("model: token id " + std::to_string(token) + " is outside the vocabulary of " +
                std::to_string(config_.vocab));
  if (k == 0 || k > ops::TopK::kMaxK)
    throw Error("model: a device ranking takes 1.." + std::to_string(ops::TopK::kMaxK) + " logits, got " +
                std::to_string(k));
  Request request{{&runner, token}, k, Clock::now()};
  std::unique_lock lock(mutex_);
  waiting_.push_back(&request);
  wake_.notify_all();
  // Whoever finds the device free runs a step of everything waiting, once every generating
  // session has joined or the oldest has waited long enough; the others wait for theirs.
  while (!request.done) {
    if (running_) {
      wake_.wait(lock);
      continue;
    }
    const Clock::time_point deadline = waiting_.front()->arrived + join_wait();
    if (waiting_.size() >= std::min(generating_, max_batch_) || Clock::now() >= deadline) run_batch(lock);
    else wake_.wait_until(lock, deadline);
  }
  if (request.error) std::rethrow_exception(request.error);
  return std::move(request.ranked);
}

// How long a step waits for generating sessions that have not handed in their token yet (they
// are sampling or streaming the last one): a quarter of the last step, at most 2 ms, so that
// batches fill without a lone session ever waiting long.
StepBatcher::Clock::duration StepBatcher::join_wait() const {
  const double s = stats_.steps ? std::min(stats_.last_seconds / 4, 0.002) : 0.002;
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

void StepBatcher::run_batch(std::unique_lock<std::mutex>& lock) {
  running_ = true;
  const size_t b = std::min<size_t>(waiting_.size(), max_batch_);
  std::vector<Request*> batch(waiting_.begin(), waiting_.begin() + std::ptrdiff_t(b));
  waiting_.erase(waiting_.begin(), waiting_.begin() + std::ptrdiff_t(b));
  lock.unlock();
  const auto t0 = Clock::now();
  try {
    // Rows for the batches seen so far (doubling, up to max_batch): a server's few sessions do
    // not hold activations and logits for 64.
    if (!decoder_ || decoder_->max_batch() < b) {
      const uint32_t grown = decoder_ ? 2 * decoder_->max_batch() : 2;
      const uint32_t rows = std::min(max_batch_, std::max(uint32_t(b), grown));
      decoder_.reset();
      decoder_ = std::make_unique<BatchDecoder>(weights_, config_, options_, rows);
    }
    std::vector<BatchDecoder::Entry> entries;
    uint32_t k = 1;
    for (const Request* r : batch) {
      entries.push_back(r->entry);
      k = std::max(k, r->k);
    }
    // One ranking as deep as the deepest asked for: the first k of it are any shallower one's.
    std::vector<std::vector<ops::RankedLogit>> ranked = decoder_->step(entries, k);
    for (size_t i = 0; i < b; ++i) {
      ranked[i].resize(batch[i]->k);
      batch[i]->ranked = std::move(ranked[i]);
    }
  } catch (...) {
    for (Request* r : batch) r->error = std::current_exception();
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  lock.lock();
  ++stats_.steps;
  stats_.tokens += b;
  stats_.largest = std::max<uint32_t>(stats_.largest, uint32_t(b));
  stats_.last = uint32_t(b);
  stats_.seconds += seconds;
  stats_.last_seconds = seconds;
  for (Request* r : batch) r->done = true;
  running_ = false;
  wake_.notify_all();
}

std::shared_ptr<StepBatcher> StepBatcherCache::get(const StageWeights& weights, const LlamaConfig& config,
                                                   const GraphOptions& options, uint32_t max_batch) {
  std::lock_guard lock(mutex_);
  std::vector<const DeviceWeights*> key;
  for (const std::shared_ptr<const DeviceWeights>& w : weights) key.push_back(w.get());
  std::weak_ptr<StepBatcher>& slot = batchers_[key];
  if (std::shared_ptr<StepBatcher> live = slot.lock()) return live;
  auto made = std::make_shared<StepBatcher>(weights, config, options, max_batch);
  slot = made;
  return made;
}

DecodeBatchStats StepBatcherCache::stats() const {
  std::lock_guard lock(mutex_);
  DecodeBatchStats sum;
  for (const auto& [key, weak] : batchers_) {
    const std::shared_ptr<StepBatcher> b = weak.lock();
    if (!b) continue;
    const DecodeBatchStats s = b->stats();
    sum.steps += s.steps;
    sum.tokens += s.tokens;
    sum.largest = std::max(sum.largest, s.largest);
    sum.last = s.last;
    sum.seconds += s.seconds;
    sum.last_seconds = s.last_seconds;
    sum.waiting += s.waiting;
    sum.generating += s.generating;
  }
  return sum;
}

}  // namespace infini::model
