// `infini._infini`: the extension the `infini` package wraps (python/infini/__init__.py).
#include <pybind11/pybind11.h>

#include "bindings.hpp"
#include "infini/error.hpp"

PYBIND11_MODULE(_infini, m) {
  m.doc() = "infini: Infini-attention and GGUF models on Vulkan (bindings over the C++ public API)";
  // infini::Error and its kinds arrive as infini.Error, carrying the library's one-line message.
  pybind11::register_exception<infini::Error>(m, "Error", PyExc_RuntimeError);
  infini::python::bind_devices(m);
  infini::python::bind_model(m);
  infini::python::bind_session(m);
  infini::python::bind_attention(m);
}
