#pragma once
// Continuous batching of decode steps: the sessions of a model on one device (or one pipeline of
// devices) that are generating
// at the same time (each on its own thread, as infini serve's workers are) hand their next token
// to the device's StepBatcher, and every token waiting when the device is free runs in one
// batched step (exec/batch_decoder.hpp). Sessions join and leave between steps by simply
// calling or not. A step starts once every generating session has handed in its token, or when
// the oldest has waited a quarter of the last step (at most 2 ms) for the others, which are
// sampling or streaming their last token: batches fill, and a session never waits long for
// one that is busy elsewhere. Another session's prefill
// pieces go to the same device queue between steps, so a long prompt delays the batch by at most
// one piece (RunnerOptions::max_piece tokens).
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>

#include "exec/batch_decoder.hpp"
#include "exec/llama_runner.hpp"
#include "infini/model.hpp"

namespace infini::model {

// The weights of a model's stages, in pipeline order (one: the whole model on one device).
using StageWeights = std::vector<std::shared_ptr<const DeviceWeights>>;
StageWeights stage_weights(const LlamaRunner& runner);

class StepBatcher {
 public:
  StepBatcher(StageWeights weights, const LlamaConfig& config, const GraphOptions& options, uint32_t max_batch);
  ~StepBatcher();

  // Feeds `token` to `runner` (whose stages run this batcher's weights) in the next batched
  // step, beside every other session's token waiting then, and gives back its k best
  // logits (1..ops::TopK::kMaxK), as LlamaRunner::forward_ranked would. Blocks until that step
  // is done. What is wrong with this session's own request (its token, its runner, k) is thrown
  // to it alone before it joins; a step that fails throws to each session in it.
  std::vector<ops::RankedLogit> step(LlamaRunner& runner, int32_t token, uint32_t k);

  // While one lives, its session counts as generating; sessions decode through the batcher while
  // more than one generates (alone, a session keeps its own recorded steps and chains).
  class Generating {
   public:
    explicit Generating(StepBatcher& batcher);
    ~Generating();
    Generating(const Generating&) = delete;
    Generating& operator=(const Generating&) = delete;

   private:
    StepBatcher& batcher_;
  };
  uint32_t generating() const;
  DecodeBatchStats stats() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Request;
  void run_batch(std::unique_lock<std::mutex>& lock);
  Clock::duration join_wait() const;

  StageWeights weights_;
  LlamaConfig config_;
  GraphOptions options_;
  uint32_t max_batch_;
  std::unique_ptr<BatchDecoder> decoder_;  // made at the first step, remade larger for a larger batch
  mutable std::mutex mutex_;
  std::condition_variable wake_;  // a request came, a step ended, or a session stopped generating
  std::deque<Request*> waiting_;
  bool running_ = false;
  uint32_t generating_ = 0;
  DecodeBatchStats stats_;
};

// The batchers of a model's sessions, one per set of weight copies (so per device, or per list
// of devices a pipeline runs on), shared while any session holds it. Thread-safe.
class StepBatcherCache {
 public:
  std::shared_ptr<StepBatcher> get(const StageWeights& weights, const LlamaConfig& config, const GraphOptions& options,
                                   uint32_t max_batch);
  // Summed over the live batchers.
  DecodeBatchStats stats() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::vector<const DeviceWeights*>, std::weak_ptr<StepBatcher>> batchers_;
};

}  // namespace infini::model
