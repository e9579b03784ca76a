#include "infini/session_pool.hpp"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

namespace infini {

struct SessionPool::Impl {
  std::vector<Session> sessions;
  std::vector<size_t> jobs_run;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::function<void(Session&)>> queue;
  bool stopping = false;
  std::vector<std::thread> threads;

  void work(size_t worker) {
    std::unique_lock lock(mutex);
    for (;;) {
      changed.wait(lock, [&] { return stopping || !queue.empty(); });
      if (queue.empty()) return;  // stopping, and everything submitted has run
      std::function<void(Session&)> job = std::move(queue.front());
      queue.pop_front();
      lock.unlock();
      Session& session = sessions[worker];
      session.reset();
      job(session);  // a packaged_task: exceptions go to the job's future
      lock.lock();
      ++jobs_run[worker];
    }
  }
};

SessionPool::SessionPool(const std::vector<Model>& models, size_t sessions_per_model)
    : impl_(std::make_unique<Impl>()) {
  if (models.empty()) throw Error("session pool: no models to run sessions on");
  if (sessions_per_model < 1 || sessions_per_model > kMaxSessionsPerModel)
    throw Error("session pool: sessions per model must be 1 to " + std::to_string(kMaxSessionsPerModel) + ", got " +
                std::to_string(sessions_per_model));
  // Worker i on models[i % models.size()]: the first free workers spread over the devices.
  for (size_t k = 0; k < sessions_per_model; ++k)
    for (const Model& m : models) impl_->sessions.emplace_back(m);
  impl_->jobs_run.assign(impl_->sessions.size(), 0);
  for (size_t i = 0; i < impl_->sessions.size(); ++i) impl_->threads.emplace_back([this, i] { impl_->work(i); });
}

SessionPool::~SessionPool() {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
  }
  impl_->changed.notify_all();
  for (std::thread& t : impl_->threads) t.join();
}

void SessionPool::enqueue(std::function<void(Session&)> job) {
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->stopping) throw Error("session pool: stopping, no new jobs");
    impl_->queue.push_back(std::move(job));
  }
  impl_->changed.notify_one();
}

size_t SessionPool::workers() const noexcept { return impl_->sessions.size(); }

std::vector<size_t> SessionPool::jobs_run() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->jobs_run;
}

}  // namespace infini
