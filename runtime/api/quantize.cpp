#include "infini/quantize.hpp"

#include <algorithm>
#include <charconv>
#include <string>
#include <vector>

#include "infini/error.hpp"
#include "formats/gguf_file.hpp"
#include "formats/gguf_writer.hpp"
#include "model/tensor_values.hpp"
#include "util/block_codec.hpp"

namespace infini {
namespace {

// What the mixtures ask of the model: its layer count (one more than the largest N of a "blk.N."
// tensor), query heads per KV head (the widths of the first layer's Q and K projections, which
// share a head size), and whether it has no output.weight of its own.
QuantModel quant_model(const model::GgufFile& file) {
  QuantModel m{0, 1, true};
  int64_t q = 0, k = 0;
  for (const model::TensorView& t : file.tensors()) {
    int64_t n = -1;
    if (t.name.starts_with("blk.")) std::from_chars(t.name.data() + 4, t.name.data() + t.name.size(), n);
    m.layers = std::max(m.layers, n + 1);
    if (t.name == "output.weight") m.tied = false;
    if (t.shape.size() == 2 && t.name == "blk.0.attn_q.weight") q = t.shape[1];
    if (t.shape.size() == 2 && t.name == "blk.0.attn_k.weight") k = t.shape[1];
  }
  if (q > 0 && k > 0 && q % k == 0) m.gqa = q / k;
  return m;
}

// A row length every block type divides: the type a scheme means for a tensor before any
// fallback.
constexpr uint64_t kAnyBlockRow = 1u << 20;

// The matrices a model multiplies by: two-dimensional weights (norms are one-dimensional, the
// Infini gates are not weights of a product).
bool is_weight_matrix(const model::TensorView& t) {
  return t.shape.size() == 2 && t.name.ends_with(".weight");
}

}  // namespace

std::optional<QuantizedTensor> first_quantized_tensor(const std::filesystem::path& gguf) {
  const model::GgufFile file(gguf);
  for (const model::TensorView& t : file.tensors())
    if (element_traits(t.type).block_elements > 1) return QuantizedTensor{t.name, t.type};
  return std::nullopt;
}

QuantizeReport quantize_model(const std::filesystem::path& in, const std::filesystem::path& out, QuantScheme scheme,
                              unsigned threads) {
  const model::GgufFile file(in);
  const QuantModel model = quant_model(file);
  model::GgufWriter writer(uint32_t(file.alignment()));
  for (const model::GgufKeyValue& kv : file.metadata())
    if (kv.key != "general.alignment") writer.set_value(kv.key, kv.value);
  writer.set_u32("general.file_type", quant_scheme_file_type(scheme));
  QuantizeReport report;
  for (const model::TensorView& t : file.tensors()) {
    ++report.tensors;
    const std::optional<ElementType> target =
        is_weight_matrix(t) ? quant_type_for(scheme, t.name, t.shape[0], model) : std::nullopt;
    const ElementType type = target.value_or(t.type);
    if (target && t.type != type) {
      const std::vector<double> wide = model::widen_all(t);
      const std::vector<float> values(wide.begin(), wide.end());
      try {
        writer.add_tensor(t.name, type, t.shape, encode_blocks(type, values, threads));
      } catch (const Error& e) {
        throw Error("quantize: tensor '" + t.name + "': " + e.what());
      }
      ++report.quantized;
      if (type != quant_type_for(scheme, t.name, kAnyBlockRow, model)) ++report.fell_back;
    } else {
      if (is_weight_matrix(t) && !target) ++report.kept_unfit;
      writer.add_tensor(t.name, t.type, t.shape, std::vector<std::byte>(t.data.begin(), t.data.end()));
    }
  }
  report.bytes_in = file.bytes().size();
  report.bytes_out = writer.write(out);
  return report;
}

}  // namespace infini
