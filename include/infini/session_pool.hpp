#pragma once
// infini::SessionPool: many independent streams on several devices at once, for a server that
// serves many users. `sessions_per_model` workers per Model (load the same file once per Context,
// one Context per device or per device set); each worker holds one Session, and the sessions of
// one Model share its one copy of the weights on its devices (each adds only its stream state and
// activations). Workers on one device run at once, their submissions interleaved on its queue. A
// job is a function of a Session: it runs on the first free worker, on a session that starts
// empty (reset), and its result comes back through a std::future.
//
//   std::vector<infini::Model> models;               // one per device
//   for (auto& ctx : contexts) models.emplace_back(ctx, "model.gguf");
//   infini::SessionPool pool(models);
//   auto reply = pool.submit([&](infini::Session& s) {
//     s.restore("user42.state");                     // state files do not depend on the device
//     s.feed(models[0].tokenize(message, false));
//     ...
//     s.save("user42.state");
//     return text;
//   });
//
// Jobs of one user must not run at the same time (the pool does not order them). This header
// needs no Vulkan headers.
#include <cstddef>
#include <functional>
#include <future>
#include <memory>
#include <type_traits>
#include <vector>

#include "infini/model.hpp"
#include "infini/session.hpp"

namespace infini {

class SessionPool {
 public:
  // Creates sessions_per_model (1 to kMaxSessionsPerModel) sessions per model, the first of each
  // uploading its weights, and starts a worker for each.
  explicit SessionPool(const std::vector<Model>& models, size_t sessions_per_model = 1);
  static constexpr size_t kMaxSessionsPerModel = 256;
  // Runs the jobs already submitted, then stops the workers.
  ~SessionPool();
  SessionPool(const SessionPool&) = delete;
  SessionPool& operator=(const SessionPool&) = delete;

  // Queues `job(Session&)`; the future holds its result or the exception it threw.
  template <typename Job>
  auto submit(Job job) -> std::future<std::invoke_result_t<Job&, Session&>> {
    using Result = std::invoke_result_t<Job&, Session&>;
    auto task = std::make_shared<std::packaged_task<Result(Session&)>>(std::move(job));
    std::future<Result> result = task->get_future();
    enqueue([task](Session& s) { (*task)(s); });
    return result;
  }

  size_t workers() const noexcept;
  // How many jobs each worker has run so far (worker i runs on models[i % models.size()]'s devices).
  std::vector<size_t> jobs_run() const;

 private:
  void enqueue(std::function<void(Session&)> job);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace infini
