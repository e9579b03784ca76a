// infini::quantize_model: an f32 file quantized in a scheme holds exactly the tensors of the same
// random model made directly in that scheme (the same values, the same encoder, the same types),
// every other tensor and every metadata key unchanged; the K schemes give Q8_0 to matrices whose
// rows are not whole 256-value blocks, and matrices whose rows are not whole blocks are kept.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include "infini/error.hpp"
#include "infini/quantize.hpp"
#include "formats/gguf_file.hpp"
#include "reference/random_llama.hpp"
#include "temp_path.hpp"

namespace infini::test {
namespace {

bool same_bytes(std::span<const std::byte> a, std::span<const std::byte> b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

TEST_CASE("quantize: an f32 model quantized equals the model made in that scheme", "[quant]") {
  const QuantScheme scheme = GENERATE(QuantScheme::Q8_0, QuantScheme::Q4_0, QuantScheme::Q4_K_M, QuantScheme::Q5_K_M,
                                      QuantScheme::Q6_K);
  INFO(quant_scheme_name(scheme));
  model::RandomLlamaOptions o;
  o.vocab = 300;
  o.embd = 256;  // rows of whole 256-value blocks, for the K formats
  o.layers = 2;
  o.heads = 4;
  o.heads_kv = 2;
  o.ffn = 512;
  o.dtype = ElementType::F32;
  const std::filesystem::path f32 = temp_path("infini-quantize-f32.gguf"), qf = temp_path("infini-quantize-q.gguf");
  model::random_llama(o).write(f32);
  const QuantizeReport r = quantize_model(f32, qf, scheme);
  o.scheme = scheme;
  const model::GgufFile got(qf), source(f32);
  const model::GgufWriter direct_writer = model::random_llama(o);
  const std::vector<std::byte> direct_bytes = direct_writer.to_bytes();
  const model::GgufFile direct(direct_bytes, "direct.gguf");

  CHECK(r.tensors == int64_t(source.tensors().size()));
  CHECK(r.kept_unfit == 0);
  CHECK(r.fell_back == 0);
  CHECK(r.bytes_out == std::filesystem::file_size(qf));
  CHECK(r.bytes_out < r.bytes_in);
  int64_t quantized = 0;
  for (const model::TensorView& t : got.tensors()) {
    INFO(t.name);
    const model::TensorView& s = source.tensor(t.name);
    CHECK(t.shape == s.shape);
    CHECK(t.type == direct.tensor(t.name).type);
    if (element_traits(t.type).block_elements > 1) {
      ++quantized;
      CHECK(same_bytes(t.data, direct.tensor(t.name).data));
    } else {
      CHECK(t.type == s.type);
      CHECK(same_bytes(t.data, s.data));
    }
  }
  CHECK(quantized == r.quantized);
  CHECK(quantized == 2 + o.layers * 7);  // token_embd, output and every layer's seven matrices
  // The mixtures: Q6_K for the output and, of 2 layers, the last layer's attn_v and ffn_down.
  const bool mixture = scheme == QuantScheme::Q4_K_M || scheme == QuantScheme::Q5_K_M;
  const ElementType base = scheme == QuantScheme::Q4_K_M ? ElementType::Q4_K
                           : scheme == QuantScheme::Q5_K_M ? ElementType::Q5_K
                           : scheme == QuantScheme::Q8_0   ? ElementType::Q8_0
                           : scheme == QuantScheme::Q4_0   ? ElementType::Q4_0
                                                           : ElementType::Q6_K;
  const ElementType more = mixture ? ElementType::Q6_K : base;
  CHECK(got.tensor("token_embd.weight").type == base);
  CHECK(got.tensor("output.weight").type == more);
  CHECK(got.tensor("blk.0.attn_v.weight").type == base);
  CHECK(got.tensor("blk.1.attn_v.weight").type == more);
  CHECK(got.tensor("blk.1.ffn_down.weight").type == more);
  CHECK(got.tensor("blk.1.ffn_up.weight").type == base);
  // Every key copied as it was, but the file type.
  REQUIRE(got.metadata().size() == source.metadata().size());
  for (size_t i = 0; i < got.metadata().size(); ++i) {
    const model::GgufKeyValue &a = got.metadata()[i], &b = source.metadata()[i];
    INFO(a.key);
    CHECK(a.key == b.key);
    if (a.key == "general.file_type") CHECK(model::value_u32(a.value, a.key) == quant_scheme_file_type(scheme));
    else CHECK(same_bytes(a.value.payload, b.value.payload));
  }

  // ffn_down rows of 288 values are whole 32-value blocks but not 256-value ones: the K schemes
  // give them Q8_0.
  o.ffn = 288;
  o.scheme.reset();
  model::random_llama(o).write(f32);
  const QuantizeReport fallback = quantize_model(f32, qf, scheme);
  const bool k_scheme = scheme != QuantScheme::Q8_0 && scheme != QuantScheme::Q4_0;
  CHECK(fallback.fell_back == (k_scheme ? o.layers : 0));
  CHECK(model::GgufFile(qf).tensor("blk.0.ffn_down.weight").type == (k_scheme ? ElementType::Q8_0 : base));
  // Rows of 80 values are not whole blocks at all: kept as they are.
  o.ffn = 80;
  model::random_llama(o).write(f32);
  CHECK(quantize_model(f32, qf, scheme).kept_unfit == o.layers);
  CHECK(model::GgufFile(qf).tensor("blk.1.ffn_down.weight").type == ElementType::F32);
  CHECK(model::GgufFile(qf).tensor("blk.1.ffn_up.weight").type == base);

  CHECK_THROWS_AS(quantize_model(temp_path("infini-quantize-missing.gguf"), qf, scheme), Error);
  std::filesystem::remove(f32);
  std::filesystem::remove(qf);
}

TEST_CASE("quantization schemes: names, file types and the layers that get more bits", "[quant]") {
  CHECK(quant_scheme_named("q4_k_m") == QuantScheme::Q4_K_M);
  CHECK(quant_scheme_named("q4_k") == std::nullopt);
  CHECK(quant_scheme_file_type(QuantScheme::Q4_K_M) == 15);
  CHECK(quant_scheme_file_type(QuantScheme::Q6_K) == 18);
  // 32 layers: the first 4, the last 4, and layers 4 + 3i + 2 between get Q6_K.
  std::vector<int> more;
  for (int i = 0; i < 32; ++i)
    if (quant_type_for(QuantScheme::Q4_K_M, "blk." + std::to_string(i) + ".ffn_down.weight", 2048, 32) == ElementType::Q6_K)
      more.push_back(i);
  CHECK(more == std::vector<int>{0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31});
  CHECK(quant_type_for(QuantScheme::Q4_K_M, "blk.6.attn_q.weight", 2048, 32) == ElementType::Q4_K);
  CHECK(quant_type_for(QuantScheme::Q4_K_M, "blk.6.attn_v.weightx", 2048, 32) == ElementType::Q4_K);
  CHECK(quant_type_for(QuantScheme::Q5_K_M, "output.weight", 2048, 32) == ElementType::Q6_K);
  CHECK(quant_type_for(QuantScheme::Q6_K, "blk.0.attn_q.weight", 96, 32) == ElementType::Q8_0);
  CHECK(quant_type_for(QuantScheme::Q4_0, "blk.0.attn_q.weight", 96, 32) == ElementType::Q4_0);
  CHECK(quant_type_for(QuantScheme::Q8_0, "blk.0.attn_q.weight", 40, 32) == std::nullopt);
}

}  // namespace
}  // namespace infini::test
