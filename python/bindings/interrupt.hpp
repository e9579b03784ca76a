#pragma once
// Ctrl-C during a long call: the library runs with the GIL released and calls back between pieces
// (segments of a feed, tokens of a generation); there the callback takes the GIL, lets Python run
// its signal handlers, and stops the call when one raised. The error is raised once the call has
// returned, so the library always finishes its piece and stays usable.
#include <pybind11/pybind11.h>

#include <optional>

namespace infini::python {

class PythonStop {
 public:
  // With the GIL held: false when a signal handler raised (KeyboardInterrupt), which is kept.
  bool keep_going() {
    if (error_) return false;
    if (PyErr_CheckSignals() != 0) {
      error_.emplace();  // takes the raised exception
      return false;
    }
    return true;
  }
  // With the GIL held: keeps the exception a Python callback raised.
  void keep(pybind11::error_already_set&& e) {
    if (!error_) error_.emplace(std::move(e));
  }
  bool stopped() const noexcept { return error_.has_value(); }
  // With the GIL held, after the call returned: raises what stopped it, if anything did.
  void raise_if_stopped() {
    if (!error_) return;
    pybind11::error_already_set e = std::move(*error_);
    error_.reset();
    throw e;
  }

 private:
  std::optional<pybind11::error_already_set> error_;
};

}  // namespace infini::python
