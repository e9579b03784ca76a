#pragma once
// A Model as Python holds it: with the Context it runs on (a Model refers to its Context, so both
// live as long as any Python object or Session uses them).
#include <memory>

#include "infini/context.hpp"
#include "infini/model.hpp"

namespace infini::python {

struct ModelHandle {
  std::unique_ptr<Context> context;
  std::unique_ptr<Model> model;
};

}  // namespace infini::python
