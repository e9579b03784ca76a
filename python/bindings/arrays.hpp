#pragma once
// Host vectors handed to NumPy without a copy: the array owns the vector the library returned.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace infini::python {

template <typename T>
pybind11::array_t<T> to_numpy(std::vector<T>&& values, std::vector<pybind11::ssize_t> shape) {
  auto* owned = new std::vector<T>(std::move(values));
  pybind11::capsule free_when_done(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return pybind11::array_t<T>(std::move(shape), owned->data(), free_when_done);
}

template <typename T>
pybind11::array_t<T> to_numpy(std::vector<T>&& values) {
  const auto n = static_cast<pybind11::ssize_t>(values.size());
  return to_numpy(std::move(values), {n});
}

}  // namespace infini::python
