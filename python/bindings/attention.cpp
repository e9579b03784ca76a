// infini.InfiniAttention: one Infini-attention layer on NumPy arrays, with its memory state.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "bindings.hpp"
#include "busy_flag.hpp"
#include "infini/infini_attention.hpp"

namespace py = pybind11;

namespace infini::python {
namespace {

struct AttentionHandle {
  std::unique_ptr<Context> context;
  std::unique_ptr<InfiniAttention> layer;
  bool f16 = false;
  BusyFlag busy;

  BusyGuard hold() {
    return BusyGuard(busy, [] { return std::string("infini attention: the layer is busy with another call"); });
  }
};

// A copy of the layer's state off the device, with the GIL released while it is read.
template <typename Read>
std::vector<float> read_state(AttentionHandle& h, Read read) {
  const BusyGuard busy = h.hold();
  py::gil_scoped_release release;
  return read(*h.layer);
}

UpdateRule update_rule(const std::string& name) {
  if (name == "delta") return UpdateRule::Delta;
  if (name == "linear") return UpdateRule::Linear;
  throw py::value_error("update must be 'delta' or 'linear', not '" + name + "'");
}

// Rows of `heads` x `dim` per token from [T, heads, dim] or [T, heads * dim]; T.
int64_t tokens_of(const py::buffer_info& b, int heads, int dim, const char* what) {
  const py::ssize_t row = py::ssize_t(heads) * dim;
  const bool shaped = (b.ndim == 3 && b.shape[1] == heads && b.shape[2] == dim) || (b.ndim == 2 && b.shape[1] == row);
  if (!shaped)
    throw py::value_error(std::string(what) + " must be [tokens, " + std::to_string(heads) + ", " +
                          std::to_string(dim) + "] or [tokens, " + std::to_string(row) + "]");
  return int64_t(b.shape[0]);
}

template <typename T>
std::span<const T> values(const py::array_t<T, py::array::c_style | py::array::forcecast>& a) {
  return {a.data(), size_t(a.size())};
}

}  // namespace

void bind_attention(py::module_& m) {
  py::class_<AttentionHandle>(m, "InfiniAttention",
                              "One Infini-attention layer: segment-wise attention with RoPE and a "
                              "compressive memory carried across calls.")
      .def(py::init([](int heads_q, int heads_kv, int head_dim, int value_dim, const std::vector<float>& beta,
                       int64_t segment, const std::string& update, bool memory, double rope_base,
                       const std::string& dtype, const std::string& device) {
             if (dtype != "float32" && dtype != "float16")
               throw py::value_error("dtype must be 'float32' or 'float16', not '" + dtype + "'");
             AttentionShape shape{heads_q, heads_kv, head_dim, value_dim};
             InfiniOptions o;
             o.segment = segment;
             o.update = update_rule(update);
             o.memory = memory;
             o.rope.base = rope_base;
             auto h = std::make_unique<AttentionHandle>();
             h->f16 = dtype == "float16";
             py::gil_scoped_release release;
             ContextOptions co;
             co.device = device;
             h->context = std::make_unique<Context>(co);
             h->layer = std::make_unique<InfiniAttention>(*h->context, shape, o, beta,
                                                          h->f16 ? ElementType::F16 : ElementType::F32);
             return h;
           }),
           py::arg("heads_q"), py::arg("heads_kv"), py::arg("head_dim"), py::arg("value_dim"), py::arg("beta"),
           py::kw_only(), py::arg("segment") = kDefaultSegment, py::arg("update") = "delta",
           py::arg("memory") = true, py::arg("rope_base") = 10000.0, py::arg("dtype") = "float32",
           py::arg("device") = "",
           "beta: one gate logit per query head. dtype: what q, k, v are sent as (other arrays are "
           "converted, a copy).")
      .def(
          "__call__",
          [](AttentionHandle& h, const py::array& q, const py::array& k, const py::array& v) {
            const BusyGuard busy = h.hold();
            const AttentionShape& s = h.layer->shape();
            const int64_t t = tokens_of(q.request(), s.heads_q, s.head_dim, "q");
            if (tokens_of(k.request(), s.heads_kv, s.head_dim, "k") != t ||
                tokens_of(v.request(), s.heads_kv, s.value_dim, "v") != t)
              throw py::value_error("q, k and v must have the same number of tokens");
            std::vector<float> out;
            if (h.f16) {
              using A = py::array_t<uint16_t, py::array::c_style | py::array::forcecast>;
              // IEEE half bits: NumPy's float16, viewed as uint16 without a conversion.
              const py::module_ np = py::module_::import("numpy");
              const auto bits = [&](const py::array& a) {
                return A(np.attr("ascontiguousarray")(a, "float16").attr("view")("uint16"));
              };
              const A qa = bits(q), ka = bits(k), va = bits(v);
              py::gil_scoped_release release;
              out = h.layer->process(values(qa), values(ka), values(va), t);
            } else {
              using A = py::array_t<float, py::array::c_style | py::array::forcecast>;
              const A qa(q), ka(k), va(v);
              py::gil_scoped_release release;
              out = h.layer->process(values(qa), values(ka), values(va), t);
            }
            return to_numpy(std::move(out), {py::ssize_t(t), s.heads_q, s.value_dim});
          },
          py::arg("q"), py::arg("k"), py::arg("v"),
          "q [T, Hq, D], k [T, Hkv, D], v [T, Hkv, Dv] (or each flattened per token) -> [T, Hq, Dv] float32.")
      .def(
          "finish",
          [](AttentionHandle& h) {
            const BusyGuard busy = h.hold();
            py::gil_scoped_release release;
            h.layer->finish();
          },
          "Writes a last, shorter segment into the memory.")
      .def("reset",
           [](AttentionHandle& h) {
             const BusyGuard busy = h.hold();
             py::gil_scoped_release release;
             h.layer->reset();
           })
      .def(
          "memory",
          [](AttentionHandle& h) {
            const AttentionShape& s = h.layer->shape();
            return to_numpy(read_state(h, [](const InfiniAttention& l) { return l.memory(); }),
                            {s.heads_kv, s.head_dim, s.value_dim});
          },
          "The memory M [Hkv, D, Dv].")
      .def(
          "norm",
          [](AttentionHandle& h) {
            const AttentionShape& s = h.layer->shape();
            return to_numpy(read_state(h, [](const InfiniAttention& l) { return l.norm(); }), {s.heads_kv, s.head_dim});
          },
          "The normalisation z [Hkv, D].")
      .def_property_readonly("tokens_processed",
                             [](AttentionHandle& h) {
                               const BusyGuard busy = h.hold();
                               return h.layer->tokens_processed();
                             })
      .def_property_readonly("segments_written", [](AttentionHandle& h) {
        const BusyGuard busy = h.hold();
        return h.layer->segments_written();
      });
}

}  // namespace infini::python
