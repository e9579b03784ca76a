#pragma once
// The parts of the `infini._infini` extension, each binding one concept of the public API.
#include <pybind11/pybind11.h>

namespace infini::python {

void bind_devices(pybind11::module_& m);    // devices(), selfcheck()
void bind_model(pybind11::module_& m);      // Model
void bind_session(pybind11::module_& m);    // Session and its generation stream
void bind_attention(pybind11::module_& m);  // InfiniAttention

}  // namespace infini::python
