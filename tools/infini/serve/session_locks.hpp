#pragma once
// One mutex per session id, so that requests for one session run one at a time while requests
// for different sessions run in parallel. Entries live as long as someone holds or waits on them.
// At most kMaxWaiting requests may wait for one session; more are refused (429), so one busy
// session cannot take every place of the server's queue.
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "serve/api_error.hpp"

namespace infini::serve {

class SessionLocks {
 public:
  static constexpr int kMaxWaiting = 4;

  struct Entry {
    std::mutex mutex;
    int waiting = 0;  // guarded by SessionLocks::mutex_
  };

  class Held {
   public:
    Held(std::shared_ptr<Entry> e, SessionLocks& owner) : entry_(std::move(e)), lock_(entry_->mutex) {
      std::lock_guard guard(owner.mutex_);
      --entry_->waiting;
    }

   private:
    std::shared_ptr<Entry> entry_;  // declared first: outlives the lock
    std::unique_lock<std::mutex> lock_;
  };

  // Blocks until no other request of this process holds `id`.
  Held lock(const std::string& id) {
    std::shared_ptr<Entry> e;
    {
      std::lock_guard guard(mutex_);
      std::weak_ptr<Entry>& slot = entries_[id];
      e = slot.lock();
      if (!e) slot = e = std::make_shared<Entry>();
      if (e->waiting >= kMaxWaiting)
        throw ApiError(429, "rate_limit_error",
                       "session '" + id + "' already has " + std::to_string(kMaxWaiting) + " requests waiting");
      ++e->waiting;
      if (entries_.size() > 1024) std::erase_if(entries_, [](const auto& x) { return x.second.expired(); });
    }
    return Held(std::move(e), *this);
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::weak_ptr<Entry>> entries_;
};

}  // namespace infini::serve
