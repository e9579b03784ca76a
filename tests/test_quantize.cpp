// infini::quantize_model: an f32 file quantized in a scheme holds exactly the tensors of the same
// random model made directly in that scheme (the same values, the same encoder, the same types),
// every other tensor and every metadata key unchanged; the K schemes give Q8_0 to matrices whose
// rows are not whole 256-value blocks, and matrices whose rows are not whole blocks are kept.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "infini/error.hpp"
#include "infini/quantize.hpp"
#include "formats/gguf_file.hpp"
#include "reference/random_llama.hpp"
#include "support/temp_path.hpp"

namespace infini::test {
namespace {

bool same_bytes(std::span<const std::byte> a, std::span<const std::byte> b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

TEST_CASE("quantize: an f32 model quantized equals the model made in that scheme", "[quant]") {
  const QuantScheme scheme = GENERATE(from_range(quant_schemes()));
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
  // Each matrix in the type the scheme gives it (what llama.cpp gives it: the test below).
  const QuantModel shape{o.layers, o.heads / o.heads_kv, false};
  for (const model::TensorView& t : got.tensors())
    if (t.shape.size() == 2 && t.name.ends_with(".weight")) {
      INFO(t.name);
      CHECK(t.type == quant_type_for(scheme, t.name, uint64_t(t.shape[0]), shape));
    }
  // The type most matrices take (ffn_up's); output.weight takes Q6_K but under q8_0.
  const ElementType base = *quant_type_for(scheme, "blk.0.ffn_up.weight", 256, shape);
  CHECK(got.tensor("output.weight").type == (scheme == QuantScheme::Q8_0 ? ElementType::Q8_0 : ElementType::Q6_K));
  // Every key copied as it was, but the file type.
  REQUIRE(got.metadata().size() == source.metadata().size());
  for (size_t i = 0; i < got.metadata().size(); ++i) {
    const model::GgufKeyValue &a = got.metadata()[i], &b = source.metadata()[i];
    INFO(a.key);
    CHECK(a.key == b.key);
    if (a.key == "general.file_type") CHECK(model::value_u32(a.value, a.key) == quant_scheme_file_type(scheme));
    else CHECK(same_bytes(a.value.payload, b.value.payload));
  }

  // ffn_down rows of 288 values are whole 32-value blocks but not 256-value ones: a 256-value type
  // falls back to llama.cpp's 32-value stand-in.
  o.ffn = 288;
  o.scheme.reset();
  model::random_llama(o).write(f32);
  const QuantizeReport fallback = quantize_model(f32, qf, scheme);
  const ElementType down = *quant_type_for(scheme, "blk.0.ffn_down.weight", 1u << 20, shape);
  const bool falls = element_traits(down).block_elements == 256;
  CHECK(fallback.fell_back == (falls ? o.layers : 0));
  CHECK(model::GgufFile(qf).tensor("blk.0.ffn_down.weight").type == *quant_type_for(scheme, "blk.0.ffn_down.weight", 288, shape));
  CHECK(element_traits(model::GgufFile(qf).tensor("blk.0.ffn_down.weight").type).block_elements == 32);
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

TEST_CASE("every scheme gives each matrix the type llama.cpp's quantizer gives it", "[quant]") {
  // tests/data/llama_quantize_types.txt: what llama_model_quantize wrote for two files, one with
  // 16 layers, 4 query heads per KV head and rows of 256 and 512 values, one tied, with 4 layers
  // and rows of 288.
  std::ifstream table(INFINI_QUANT_TYPES_TABLE);
  REQUIRE(table);
  std::string line;
  int checked = 0;
  std::set<std::string> schemes;
  while (std::getline(table, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string scheme_name, file, kind, type_name;
    fields >> scheme_name >> file >> kind;
    const std::optional<QuantScheme> scheme = quant_scheme_named(scheme_name);
    REQUIRE(scheme);
    schemes.insert(scheme_name);
    const bool wide = file == "plain8";
    const QuantModel model = wide ? QuantModel{16, 4, false} : QuantModel{4, 1, true};
    const uint64_t rows = !wide ? 288 : kind == "ffn_down" ? 512 : 256;
    for (int layer = 0; fields >> type_name; ++layer) {
      const std::string tensor = kind == "output" || kind == "token_embd" ? kind + ".weight"
                                                                          : "blk." + std::to_string(layer) + "." + kind + ".weight";
      INFO(line << ": " << tensor);
      const std::optional<ElementType> got = quant_type_for(*scheme, tensor, rows, model);
      REQUIRE(got);
      CHECK(element_name(*got) == type_name);
      ++checked;
    }
  }
  CHECK(schemes.size() == quant_schemes().size());
  CHECK(checked > 1500);
}

TEST_CASE("quantization schemes: names, file types and the layers that get more bits", "[quant]") {
  CHECK(quant_scheme_named("q4_k_m") == QuantScheme::Q4_K_M);
  CHECK(quant_scheme_named("q4_k") == std::nullopt);
  CHECK(quant_scheme_file_type(QuantScheme::Q4_K_M) == 15);
  CHECK(quant_scheme_file_type(QuantScheme::Q6_K) == 18);
  CHECK(quant_scheme_file_type(QuantScheme::Q5_0) == 8);  // llama.cpp: MOSTLY_Q5_0
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
  CHECK(quant_type_for(QuantScheme::Q4_K_M, "blk.6.attn_q.weight", 96, 32) == ElementType::Q5_0);
  CHECK(quant_type_for(QuantScheme::Q5_K_M, "blk.6.attn_q.weight", 96, 32) == ElementType::Q5_1);
  CHECK(quant_type_for(QuantScheme::Q4_K_M, "output.weight", 96, 32) == ElementType::Q8_0);  // Q6_K's fallback
  CHECK(quant_type_for(QuantScheme::IQ4_XS, "blk.6.attn_q.weight", 96, 32) == ElementType::IQ4_NL);
  CHECK(quant_scheme_file_type(QuantScheme::IQ4_XS) == 30);  // llama.cpp: MOSTLY_IQ4_XS
  CHECK(quant_type_for(QuantScheme::Q4_K_M, "blk.6.attn_q.weight", 80, 32) == std::nullopt);
  CHECK(quant_type_for(QuantScheme::Q4_0, "blk.0.attn_q.weight", 96, 32) == ElementType::Q4_0);
  CHECK(quant_type_for(QuantScheme::Q8_0, "blk.0.attn_q.weight", 40, 32) == std::nullopt);
}

}  // namespace
}  // namespace infini::test
