#pragma once
// One mutex per session id, so that requests for one session run one at a time while requests
// for different sessions run in parallel. Entries live as long as someone holds or waits on them.
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace infini::serve {

class SessionLocks {
 public:
  // Blocks until no other request of this process holds `id`.
  class Held {
   public:
    explicit Held(std::shared_ptr<std::mutex> m) : mutex_(std::move(m)), lock_(*mutex_) {}

   private:
    std::shared_ptr<std::mutex> mutex_;  // declared first: outlives the lock
    std::unique_lock<std::mutex> lock_;
  };

  Held lock(const std::string& id) {
    std::shared_ptr<std::mutex> m;
    {
      std::lock_guard guard(mutex_);
      std::weak_ptr<std::mutex>& slot = locks_[id];
      m = slot.lock();
      if (!m) slot = m = std::make_shared<std::mutex>();
      if (locks_.size() > 1024) std::erase_if(locks_, [](const auto& e) { return e.second.expired(); });
    }
    return Held(std::move(m));
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::weak_ptr<std::mutex>> locks_;
};

}  // namespace infini::serve
