#pragma once
// Session.generate(stream=True): the generation runs on a worker thread (no Python on it), which
// hands each token to the iterator and waits until the iterator asks for the next one before it
// goes on; next() waits with the GIL released and checks for Ctrl-C every 50 ms. Closing the
// iterator (or dropping it) stops the generation after the token in hand, leaving the session as
// a stop by the callback leaves it: exactly the tokens handed out are fed.
#include <pybind11/pybind11.h>

#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "infini/session.hpp"
#include "session_handle.hpp"

namespace infini::python {

class GenerationStream {
 public:
  GenerationStream(std::shared_ptr<SessionHandle> session, int64_t max_tokens, SamplingOptions options);
  ~GenerationStream();
  GenerationStream(const GenerationStream&) = delete;
  GenerationStream& operator=(const GenerationStream&) = delete;

  // The next (id, bytes); raises StopIteration at the end, or what stopped the generation.
  pybind11::tuple next();
  void close();

 private:
  void finish();  // joins the worker and gives the session back

  std::shared_ptr<SessionHandle> session_;
  // Under mutex_: the token handed over and not yet taken, how many the iterator has asked for and
  // how many the worker has produced, the end, its error, and the stop asked for.
  std::mutex mutex_;
  std::condition_variable ready_cv_;   // the worker has handed a token over, or ended
  std::condition_variable wanted_cv_;  // the iterator wants the next token, or stops
  std::optional<std::pair<int32_t, std::string>> ready_;
  uint64_t requested_ = 0, produced_ = 0;
  bool done_ = false;
  std::exception_ptr error_;
  bool cancel_ = false;
  std::once_flag joined_;
  std::thread worker_;
};

void bind_generation_stream(pybind11::module_& m);

}  // namespace infini::python
