// infini::quantize_model: an f32 file quantized to Q8_0 holds exactly the tensors of the same
// random model made directly in Q8_0 (the same values, the same encoder), every other tensor and
// every metadata key unchanged; matrices whose rows are not whole blocks are kept.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include "infini/error.hpp"
#include "infini/quantize.hpp"
#include "model/gguf_file.hpp"
#include "reference/random_llama.hpp"
#include "temp_path.hpp"

namespace infini::test {
namespace {

bool same_bytes(std::span<const std::byte> a, std::span<const std::byte> b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

TEST_CASE("quantize: an f32 model quantized equals the model made in that type", "[quant]") {
  const ElementType type = GENERATE(ElementType::Q8_0, ElementType::Q4_0);
  INFO(element_name(type));
  model::RandomLlamaOptions o;
  o.vocab = 300;
  o.embd = 64;
  o.layers = 2;
  o.heads = 4;
  o.heads_kv = 2;
  o.ffn = 96;
  o.dtype = ElementType::F32;
  const std::filesystem::path f32 = temp_path("infini-quantize-f32.gguf"), q8 = temp_path("infini-quantize-q8.gguf");
  model::random_llama(o).write(f32);
  const QuantizeReport r = quantize_model(f32, q8, type);
  o.dtype = type;
  const model::GgufFile got(q8), source(f32);
  const model::GgufWriter direct_writer = model::random_llama(o);
  const std::vector<std::byte> direct_bytes = direct_writer.to_bytes();
  const model::GgufFile direct(direct_bytes, "direct.gguf");

  CHECK(r.tensors == int64_t(source.tensors().size()));
  CHECK(r.kept_unfit == 0);
  CHECK(r.bytes_out == std::filesystem::file_size(q8));
  CHECK(r.bytes_out < r.bytes_in);
  int64_t quantized = 0;
  for (const model::TensorView& t : got.tensors()) {
    INFO(t.name);
    const model::TensorView& s = source.tensor(t.name);
    CHECK(t.shape == s.shape);
    if (t.type == type) {
      ++quantized;
      CHECK(same_bytes(t.data, direct.tensor(t.name).data));
    } else {
      CHECK(t.type == s.type);
      CHECK(same_bytes(t.data, s.data));
    }
  }
  CHECK(quantized == r.quantized);
  CHECK(quantized == 2 + o.layers * 7);  // token_embd, output and every layer's seven matrices
  // Every key copied as it was, but the file type.
  REQUIRE(got.metadata().size() == source.metadata().size());
  for (size_t i = 0; i < got.metadata().size(); ++i) {
    const model::GgufKeyValue &a = got.metadata()[i], &b = source.metadata()[i];
    INFO(a.key);
    CHECK(a.key == b.key);
    if (a.key == "general.file_type") CHECK(model::value_u32(a.value, a.key) == (type == ElementType::Q8_0 ? 7u : 2u));
    else CHECK(same_bytes(a.value.payload, b.value.payload));
  }

  // ffn_down rows of 80 values are not whole blocks: kept as they are.
  o.ffn = 80;
  o.dtype = ElementType::F32;
  model::random_llama(o).write(f32);
  CHECK(quantize_model(f32, q8, type).kept_unfit == o.layers);
  CHECK(model::GgufFile(q8).tensor("blk.1.ffn_down.weight").type == ElementType::F32);
  CHECK(model::GgufFile(q8).tensor("blk.1.ffn_up.weight").type == type);

  CHECK_THROWS_WITH(quantize_model(f32, q8, ElementType::F16), "quantize: f16 is not a quantized type");
  CHECK_THROWS_AS(quantize_model(temp_path("infini-quantize-missing.gguf"), q8, ElementType::Q8_0), Error);
  std::filesystem::remove(f32);
  std::filesystem::remove(q8);
}

}  // namespace
}  // namespace infini::test
