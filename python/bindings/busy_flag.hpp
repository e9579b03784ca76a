#pragma once
// One call at a time on an object whose calls run with the GIL released (a session, a layer): a
// second call meanwhile, from another thread or while a generation stream holds the flag, is
// refused with one line instead of racing on the device.
#include <atomic>
#include <string>

#include "infini/error.hpp"

namespace infini::python {

class BusyFlag {
 public:
  // Takes the flag, or throws infini::Error(refusal()) when it is held.
  template <typename Refusal>
  void take(const Refusal& refusal) {
    if (held_.exchange(true)) throw Error(refusal());
  }
  void give_back() noexcept { held_ = false; }

 private:
  std::atomic<bool> held_{false};
};

// Holds a BusyFlag for one call.
class BusyGuard {
 public:
  template <typename Refusal>
  BusyGuard(BusyFlag& flag, const Refusal& refusal) : flag_(flag) {
    flag_.take(refusal);
  }
  ~BusyGuard() { flag_.give_back(); }
  BusyGuard(const BusyGuard&) = delete;
  BusyGuard& operator=(const BusyGuard&) = delete;

 private:
  BusyFlag& flag_;
};

}  // namespace infini::python
