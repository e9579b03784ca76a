#pragma once
// A Session as Python holds it: with the model it streams, and the flag that lets one call run on
// it at a time (a generation stream holds it until it ends or is closed).
#include <memory>
#include <string>

#include "busy_flag.hpp"
#include "infini/session.hpp"
#include "model_handle.hpp"

namespace infini::python {

struct SessionHandle {
  std::shared_ptr<ModelHandle> model;
  std::unique_ptr<Session> session;
  BusyFlag busy;

  // Why `what` cannot run now.
  static std::string refusal(const char* what) {
    return std::string("session: cannot ") + what +
           " while the session is busy (another call, or a generation stream not yet finished or closed)";
  }
  // Takes the session for one call.
  BusyGuard hold(const char* what) {
    return BusyGuard(busy, [what] { return refusal(what); });
  }
};

}  // namespace infini::python
