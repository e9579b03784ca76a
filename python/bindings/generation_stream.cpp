#include "generation_stream.hpp"

#include <chrono>

namespace py = pybind11;

namespace infini::python {

GenerationStream::GenerationStream(std::shared_ptr<SessionHandle> session, int64_t max_tokens,
                                   SamplingOptions options)
    : session_(std::move(session)) {
  // Held until the generation ends or the stream is closed (finish()), not for this call alone.
  session_->busy.take([] { return SessionHandle::refusal("generate"); });
  try {
    worker_ = std::thread([this, max_tokens, options] {
      std::exception_ptr error;
      try {
        session_->session->generate(max_tokens, options, [this](int32_t token, std::string_view text) {
          std::unique_lock lock(mutex_);
          ready_.emplace(token, std::string(text));
          ++produced_;
          ready_cv_.notify_one();
          // The next token only once this one is taken and another asked for.
          wanted_cv_.wait(lock, [&] { return cancel_ || requested_ > produced_; });
          return !cancel_;
        });
      } catch (...) {
        error = std::current_exception();
      }
      const std::lock_guard lock(mutex_);
      error_ = error;
      done_ = true;
      ready_cv_.notify_one();
    });
  } catch (...) {
    session_->busy.give_back();
    throw;
  }
}

GenerationStream::~GenerationStream() {
  try {
    close();
  } catch (...) {  // a destructor does not raise; the session is given back either way
  }
}

void GenerationStream::finish() {
  {
    const py::gil_scoped_release release;  // the worker never takes the GIL; others may run meanwhile
    std::call_once(joined_, [this] {
      if (worker_.joinable()) worker_.join();
      session_->busy.give_back();
    });
  }
}

void GenerationStream::close() {
  {
    const std::lock_guard lock(mutex_);
    cancel_ = true;
    ready_.reset();  // a token handed over but not taken stays fed; it is not handed out later
    wanted_cv_.notify_one();
  }
  finish();
}

py::tuple GenerationStream::next() {
  {
    const std::lock_guard lock(mutex_);
    if (cancel_) throw py::stop_iteration();
    ++requested_;
    wanted_cv_.notify_one();
  }
  while (true) {
    std::optional<std::pair<int32_t, std::string>> item;
    bool done = false;
    {
      const py::gil_scoped_release release;
      std::unique_lock lock(mutex_);
      ready_cv_.wait_for(lock, std::chrono::milliseconds(50), [&] { return ready_.has_value() || done_; });
      if (ready_) {
        item = std::move(ready_);
        ready_.reset();
      } else {
        done = done_;
      }
    }
    if (item) return py::make_tuple(item->first, py::bytes(item->second));
    if (done) {
      finish();
      if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
      throw py::stop_iteration();
    }
    if (PyErr_CheckSignals() != 0) {
      py::error_already_set interrupted;  // takes the raised KeyboardInterrupt
      close();
      throw interrupted;
    }
  }
}

void bind_generation_stream(py::module_& m) {
  py::class_<GenerationStream, std::shared_ptr<GenerationStream>>(m, "GenerationStream",
                                                                   "The tokens of a generation as they come.")
      .def("__iter__", [](std::shared_ptr<GenerationStream> s) { return s; })
      .def("__next__", &GenerationStream::next)
      .def("close", &GenerationStream::close, "Stops the generation after the token in hand.");
}

}  // namespace infini::python
