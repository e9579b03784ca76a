#include "infini/quantize.hpp"

#include <string>
#include <vector>

#include "infini/error.hpp"
#include "model/gguf_file.hpp"
#include "model/gguf_writer.hpp"
#include "model/tensor_values.hpp"
#include "util/block_codec.hpp"

namespace infini {
namespace {

// llama.cpp's general.file_type for a file mostly of `type`.
uint32_t file_type_of(ElementType type) {
  switch (type) {
    case ElementType::F32: return 0;
    case ElementType::F16: return 1;
    case ElementType::Q8_0: return 7;
    case ElementType::Q4_0: return 2;
    case ElementType::Q4_K: return 15;  // "mostly Q4_K" files are Q4_K_M
    case ElementType::Q5_K: return 17;
    case ElementType::Q6_K: return 18;
  }
  return 0;
}

// The matrices a model multiplies by: two-dimensional weights (norms are one-dimensional, the
// Infini gates are not weights of a product).
bool is_weight_matrix(const model::TensorView& t) {
  return t.shape.size() == 2 && t.name.ends_with(".weight");
}

}  // namespace

QuantizeReport quantize_model(const std::filesystem::path& in, const std::filesystem::path& out, ElementType type) {
  const ElementTraits& target = element_traits(type);
  if (target.block_elements == 1)
    throw Error("quantize: " + std::string(target.name) + " is not a quantized type");
  const model::GgufFile file(in);
  model::GgufWriter writer(uint32_t(file.alignment()));
  for (const model::GgufKeyValue& kv : file.metadata())
    if (kv.key != "general.alignment") writer.set_value(kv.key, kv.value);
  writer.set_u32("general.file_type", file_type_of(type));
  QuantizeReport report;
  for (const model::TensorView& t : file.tensors()) {
    ++report.tensors;
    const bool fits = t.shape[0] % target.block_elements == 0;
    if (is_weight_matrix(t) && t.type != type && fits) {
      const std::vector<double> wide = model::widen_all(t);
      const std::vector<float> values(wide.begin(), wide.end());
      try {
        writer.add_tensor(t.name, type, t.shape, encode_blocks(type, values));
      } catch (const Error& e) {
        throw Error("quantize: tensor '" + t.name + "': " + e.what());
      }
      ++report.quantized;
    } else {
      if (is_weight_matrix(t) && !fits) ++report.kept_unfit;
      writer.add_tensor(t.name, t.type, t.shape, std::vector<std::byte>(t.data.begin(), t.data.end()));
    }
  }
  report.bytes_in = file.bytes().size();
  report.bytes_out = writer.write(out);
  return report;
}

}  // namespace infini
