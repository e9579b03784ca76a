// infini.Session: one stream of a model. Long calls run with the GIL released and stop on Ctrl-C
// between pieces (interrupt.hpp); a session runs one call at a time.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "arrays.hpp"
#include "bindings.hpp"
#include "generation_stream.hpp"
#include "infini/session.hpp"
#include "interrupt.hpp"
#include "model_handle.hpp"
#include "session_handle.hpp"

namespace py = pybind11;

namespace infini::python {
namespace {

SamplingOptions sampling(double temperature, int top_k, double top_p, uint64_t seed, double frequency_penalty,
                         double presence_penalty) {
  SamplingOptions o;
  o.temperature = temperature;
  o.top_k = top_k;
  o.top_p = top_p;
  o.seed = seed;
  o.frequency_penalty = frequency_penalty;
  o.presence_penalty = presence_penalty;
  return o;
}

std::vector<int32_t> token_ids(const py::object& ids) {
  // Any iterable of ints, a NumPy array included.
  std::vector<int32_t> out;
  for (const py::handle id : ids) out.push_back(id.cast<int32_t>());
  return out;
}

py::bytes state_bytes(const std::vector<std::byte>& state) {
  return py::bytes(reinterpret_cast<const char*>(state.data()), state.size());
}

}  // namespace

void bind_session(py::module_& m) {
  bind_generation_stream(m);
  py::class_<SessionHandle, std::shared_ptr<SessionHandle>>(
      m, "Session", "One unbounded stream of a model: feed tokens, read logits, generate, save and restore.")
      .def(py::init([](std::shared_ptr<ModelHandle> model) {
             auto handle = std::make_shared<SessionHandle>();
             handle->model = std::move(model);
             py::gil_scoped_release release;
             handle->session = std::make_unique<Session>(*handle->model->model);
             return handle;
           }),
           py::arg("model").none(false), "Uploads the model's weights to its devices (once per session).")
      .def(
          "feed",
          [](SessionHandle& h, const py::object& ids, const py::object& progress) {
            const std::vector<int32_t> tokens = token_ids(ids);
            const BusyGuard busy = h.hold("feed");
            PythonStop stop;
            {
              py::gil_scoped_release release;
              h.session->feed(tokens, [&](const FeedProgress& p) {
                py::gil_scoped_acquire acquire;
                if (!stop.keep_going()) return false;
                if (progress.is_none()) return true;
                try {
                  py::dict d;
                  d["fed"] = p.fed;
                  d["total"] = p.total;
                  d["tokens_seen"] = p.tokens_seen;
                  d["at_segment_boundary"] = p.at_segment_boundary;
                  const py::object more = progress(d);
                  if (more.is_none()) return true;
                  const int truth = PyObject_IsTrue(more.ptr());  // Python's truth, whatever the type
                  if (truth < 0) throw py::error_already_set();
                  return truth != 0;
                } catch (py::error_already_set& e) {
                  stop.keep(std::move(e));
                  return false;
                }
              });
            }
            stop.raise_if_stopped();
          },
          py::arg("ids"), py::kw_only(), py::arg("progress") = py::none(),
          "Feeds token ids, in pieces that end on segment boundaries; progress(dict(fed, total, "
          "tokens_seen, at_segment_boundary)) after each may return False to stop. Ctrl-C stops between pieces.")
      .def(
          "logits",
          [](SessionHandle& h) {
            const BusyGuard busy = h.hold("logits");
            std::vector<float> row;
            {
              py::gil_scoped_release release;
              row = h.session->logits();
            }
            return to_numpy(std::move(row));
          },
          "The last fed token's logits: a float32 array of the vocabulary's size (the library's host "
          "copy, handed to NumPy without another).")
      .def(
          "generate",
          [](std::shared_ptr<SessionHandle> h, int64_t max_tokens, double temperature, int top_k, double top_p,
             uint64_t seed, double frequency_penalty, double presence_penalty, bool stream) -> py::object {
            const SamplingOptions options =
                sampling(temperature, top_k, top_p, seed, frequency_penalty, presence_penalty);
            if (stream) return py::cast(std::make_shared<GenerationStream>(std::move(h), max_tokens, options));
            const BusyGuard busy = h->hold("generate");
            PythonStop stop;
            std::vector<int32_t> ids;
            {
              py::gil_scoped_release release;
              ids = h->session->generate(max_tokens, options, [&](int32_t, std::string_view) {
                py::gil_scoped_acquire acquire;
                return stop.keep_going();
              });
            }
            stop.raise_if_stopped();
            return py::cast(ids);
          },
          py::arg("max_tokens"), py::kw_only(), py::arg("temperature") = 0.8, py::arg("top_k") = 40,
          py::arg("top_p") = 0.95, py::arg("seed") = 0, py::arg("frequency_penalty") = 0.0,
          py::arg("presence_penalty") = 0.0, py::arg("stream") = false,
          "Samples up to max_tokens tokens, feeding each back; stops at end-of-sequence. Returns the "
          "ids, or with stream=True an iterator of (id, bytes) as they come.")
      .def(
          "save",
          [](SessionHandle& h) {
            const BusyGuard busy = h.hold("save");
            std::vector<std::byte> state;
            {
              py::gil_scoped_release release;
              state = h.session->save();
            }
            return state_bytes(state);
          },
          "The whole stream state as bytes (memory, open segment, token count, last logits).")
      .def(
          "restore",
          [](SessionHandle& h, const py::bytes& state) {
            const BusyGuard busy = h.hold("restore");
            const std::string_view view(state);
            const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(view.data()), view.size());
            py::gil_scoped_release release;
            h.session->restore(bytes, "state");
          },
          py::arg("state"), "Puts back a state save() gave (same model and options); else raises, changing nothing.")
      .def("reset",
           [](SessionHandle& h) {
             const BusyGuard busy = h.hold("reset");
             py::gil_scoped_release release;
             h.session->reset();
           })
      .def_property_readonly("tokens_seen",
                             [](SessionHandle& h) {
                               const BusyGuard busy = h.hold("read tokens_seen");
                               return h.session->tokens_seen();
                             })
      .def_property_readonly("segment", [](const SessionHandle& h) { return h.session->segment(); })
      .def_property_readonly("model", [](const SessionHandle& h) { return h.model; });
}

}  // namespace infini::python
