// devices() and selfcheck(): what a program asks first on a machine it has not seen.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>

#include "bindings.hpp"
#include "infini/context.hpp"
#include "infini/selfcheck.hpp"

namespace py = pybind11;

namespace infini::python {

void bind_devices(py::module_& m) {
  m.def(
      "devices",
      [] {
        py::list out;
        for (const DeviceDescription& d : list_devices()) {
          py::dict row;
          row["index"] = d.index;
          row["name"] = d.name;
          row["vendor"] = d.vendor;
          row["type"] = d.type;
          row["driver"] = d.driver;
          row["api_version"] = d.api_version;
          row["capabilities"] = d.capabilities;
          row["usable"] = d.usable;
          row["default"] = d.default_choice;
          out.append(row);
        }
        return out;
      },
      "The Vulkan devices infini sees, one dict each (index, name, vendor, type, driver, ...).");
  m.def(
      "selfcheck",
      [](const std::string& device) {
        std::vector<SelfcheckResult> results;
        {
          py::gil_scoped_release release;
          ContextOptions options;
          options.device = device;
          Context context(options);
          results = selfcheck(context);
        }
        py::list out;
        for (const SelfcheckResult& r : results) {
          py::dict row;
          row["name"] = r.name;
          row["max_error"] = r.max_error;
          row["passed"] = r.passed;
          out.append(row);
        }
        return out;
      },
      py::arg("device") = "",
      "Runs the kernels on awkward shapes and every weight type with exact integer inputs on one "
      "device; a list of {name, max_error, passed}.");
}

}  // namespace infini::python
