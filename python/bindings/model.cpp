// infini.Model: a GGUF file opened on a context of devices, its tokenizer and its facts.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <string>
#include <vector>

#include "bindings.hpp"
#include "infini/model.hpp"
#include "model_handle.hpp"

namespace py = pybind11;

namespace infini::python {
namespace {

// "0,0" or ["0", "0"]: the devices of a pipeline, as --devices takes them.
std::vector<std::string> device_list(const py::object& devices) {
  std::vector<std::string> out;
  if (devices.is_none()) return out;
  if (py::isinstance<py::str>(devices)) {
    const std::string text = devices.cast<std::string>();
    for (size_t start = 0; start <= text.size();) {
      const size_t comma = std::min(text.find(',', start), text.size());
      if (comma > start) out.push_back(text.substr(start, comma - start));
      start = comma + 1;
    }
    return out;
  }
  for (const py::handle d : devices) out.push_back(py::str(d).cast<std::string>());
  return out;
}

MemoryMode memory_mode(const py::handle value) {
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>() ? MemoryMode::On : MemoryMode::Off;
  const std::string name = py::str(value).cast<std::string>();
  if (const auto mode = memory_mode_from_name(name)) return *mode;
  throw py::value_error("memory must be 'auto', 'on', 'off' or a bool, not '" + name + "'");
}

// The keyword options of Model(), by ModelOptions' field names.
ModelOptions model_options(const py::kwargs& options) {
  ModelOptions o;
  for (const auto& [key, value] : options) {
    const std::string name = key.cast<std::string>();
    if (name == "segment") o.segment = value.cast<int64_t>();
    else if (name == "context") o.context = value.cast<int64_t>();
    else if (name == "sinks") o.sinks = value.cast<int64_t>();
    else if (name == "memory") o.memory = memory_mode(value);
    else if (name == "max_piece") o.max_piece = value.cast<uint32_t>();
    else if (name == "decode_chain") o.decode_chain = value.cast<uint32_t>();
    else if (name == "split") o.split = value.cast<std::vector<double>>();
    else
      throw py::type_error("Model() got an unknown option '" + name +
                           "' (options: segment, context, sinks, memory, max_piece, decode_chain, split)");
  }
  return o;
}

py::dict info_dict(const ModelInfo& i) {
  py::dict d;
  d["name"] = i.name;
  d["vocab"] = i.vocab;
  d["embd"] = i.embd;
  d["layers"] = i.layers;
  d["heads"] = i.heads;
  d["heads_kv"] = i.heads_kv;
  d["head_dim"] = i.head_dim;
  d["ffn"] = i.ffn;
  d["context_length"] = i.context_length;
  d["segment"] = i.segment;
  d["context"] = i.context;
  d["sinks"] = i.sinks;
  d["state_bytes"] = i.state_bytes;
  d["weight_bytes"] = i.weight_bytes;
  d["memory"] = i.memory;
  d["has_infini_keys"] = i.has_infini_keys;
  d["bos"] = i.bos;
  d["eos"] = i.eos;
  d["add_bos"] = i.add_bos;
  d["chat_template"] = i.chat_template;
  d["digest"] = digest_hex(i.digest);
  return d;
}

}  // namespace

void bind_model(py::module_& m) {
  py::class_<ModelHandle, std::shared_ptr<ModelHandle>>(m, "Model",
                                                         "A GGUF model on one device or a pipeline of devices.")
      .def(py::init([](const std::filesystem::path& path, const py::object& devices, const std::string& device,
                       const py::kwargs& options) {
             ContextOptions co;
             co.devices = device_list(devices);
             co.device = device;
             const ModelOptions mo = model_options(options);
             auto handle = std::make_shared<ModelHandle>();
             py::gil_scoped_release release;
             handle->context = std::make_unique<Context>(co);
             handle->model = std::make_unique<Model>(*handle->context, path, mo);
             return handle;
           }),
           py::arg("path"), py::kw_only(), py::arg("devices") = py::none(), py::arg("device") = "",
           "Model(path, *, devices=None, device='', segment=0, context=0, sinks=4, memory='auto', "
           "max_piece=256, decode_chain=0, split=None): `devices` a pipeline as --devices takes it "
           "('0,0' or a list), `device` one device by index or name; the options are ModelOptions'.")
      .def_property_readonly("info", [](const ModelHandle& h) { return info_dict(h.model->info()); },
                             "The model's shape, context, segment, special tokens and digest.")
      .def_property_readonly("warnings", [](const ModelHandle& h) { return h.model->warnings(); })
      .def_property_readonly("devices", [](const ModelHandle& h) {
        std::vector<std::string> names;
        for (const DeviceDescription& d : h.context->devices()) names.push_back(d.name);
        return names;
      })
      .def(
          "tokenize",
          [](const ModelHandle& h, const std::string& text, const py::object& add_bos, bool parse_special) {
            const bool bos = add_bos.is_none() ? h.model->info().add_bos : add_bos.cast<bool>();
            return h.model->tokenize(text, bos, parse_special);
          },
          py::arg("text"), py::arg("add_bos") = py::none(), py::arg("parse_special") = false,
          "Token ids of `text`, as llama.cpp tokenizes it; add_bos defaults to what the file asks for.")
      .def(
          "detokenize",
          [](const ModelHandle& h, const std::vector<int32_t>& ids) {
            const std::string text = h.model->detokenize(ids);
            // Ids that end inside a character leave bytes that are not UTF-8: replaced, not raised.
            PyObject* decoded = PyUnicode_DecodeUTF8(text.data(), py::ssize_t(text.size()), "replace");
            if (!decoded) throw py::error_already_set();
            return py::reinterpret_steal<py::str>(decoded);
          },
          py::arg("ids"), "The text of `ids` (bytes that are not UTF-8 replaced by U+FFFD).")
      .def(
          "piece", [](const ModelHandle& h, int32_t id) { return py::bytes(h.model->piece(id)); }, py::arg("id"),
          "The bytes one token stands for.")
      .def("device_memory_bytes", [](const ModelHandle& h) { return h.context->device_memory_bytes(); },
           "Device memory infini holds now on the model's devices (weights and every session's state).")
      .def("peak_device_memory_bytes", [](const ModelHandle& h) { return h.context->peak_device_memory_bytes(); });
}

}  // namespace infini::python
