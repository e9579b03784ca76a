// Devices with small buffer limits (phones, iGPUs: maxStorageBufferRange of 128 MiB to 2 GiB) get
// weight matrices split into row chunks and pieces shrunk to fit. A logical device that pretends
// to have tiny limits runs the whole model through those paths; the logits must still match the
// float64 reference, and a row that cannot fit at all is refused naming the limit.
#include <memory>
#include <span>
#include <vector>

#include "support/gpu_fixture.hpp"
#include "infini/error.hpp"
#include "formats/gguf_file.hpp"
#include "model/llama_loader.hpp"
#include "reference/llama_reference.hpp"
#include "reference/random_llama.hpp"
#include "exec/llama_runner.hpp"
#include "support/tiny_llama.hpp"
#include "util/nmse.hpp"
#include "vk/buffer.hpp"
#include "vk/device.hpp"

namespace infini::test {
namespace {

using infini::ElementType;

const std::vector<int32_t> kTokens = {3, 17, 42, 0, 49, 8, 8, 21, 33, 5, 12, 40, 7, 19, 2, 44, 30};

TEST_CASE_METHOD(GpuTest, "tensors larger than the device's buffer limits are split and still correct",
                 "[gpu][model][limits]") {
  const ElementType type = GENERATE(ElementType::F32, ElementType::F16);
  const bool tied = GENERATE(false, true);
  INFO((type == ElementType::F16 ? "f16" : "f32") << " tied " << tied);
  testing::TinyLlamaSpec spec;  // vocab 50, embd 32, ffn 48: token_embd is 6400 bytes in f32
  spec.type = type;
  spec.tied = tied;
  testing::TinyLlama tiny(spec);
  constexpr uint64_t kLimit = 1024;  // 8 rows of token_embd in f32, 16 in f16; pieces of 5 tokens
  auto small = open_second_device({.disk_pipeline_cache = false, .max_buffer_bytes = kLimit});
  CHECK_THROWS_WITH(vk::Buffer(*small, kLimit + 4, vk::MemoryUse::DeviceLocal, "too big"),
                    Catch::Contains("maxMemoryAllocationSize"));

  model::RunnerOptions o;
  o.infini.segment = 6;
  o.infini.memory = true;
  o.max_piece = 256;
  model::LlamaRunner runner(*small, tiny.weights, o);
  CHECK(runner.options().max_piece == kLimit / (4 * 50));  // the widest activation row is the logits'
  const std::vector<double> want = model::LlamaReference(tiny.weights, runner.options().infini).prefill(kTokens);
  const std::vector<float> got = runner.forward(kTokens, true);
  CHECK(nmse(std::span<const float>(got), std::span<const double>(want)) <= (type == ElementType::F16 ? 1e-4 : 1e-5));

  // Decode on the vector kernel: the FFN's gate and up chunks read in one pass, chunk by chunk.
  o.matmul_kernel = ops::MatmulKernel::Vector;
  model::LlamaRunner decoder(*small, tiny.weights, o);
  std::vector<float> decoded;
  for (const int32_t id : kTokens) {
    const std::vector<float> row = decoder.forward(std::span<const int32_t>(&id, 1), true);
    decoded.insert(decoded.end(), row.begin(), row.end());
  }
  CHECK(nmse(std::span<const float>(decoded), std::span<const double>(want)) <= (type == ElementType::F16 ? 1e-4 : 1e-5));
}

TEST_CASE_METHOD(GpuTest, "qwen2's biases follow the row chunks in decode's projections", "[gpu][model][limits]") {
  model::RandomLlamaOptions ro;
  ro.arch = "qwen2";
  ro.vocab = 50;
  ro.embd = 64;  // f32 rows of 256 bytes: Q, K, V in chunks of 8 rows (the memory M takes 2048 bytes)
  ro.heads = 4;
  ro.heads_kv = 2;
  ro.ffn = 96;
  ro.segment = 6;
  const std::vector<std::byte> bytes = model::random_llama(ro).to_bytes();
  const model::GgufFile file(bytes, "qwen2.gguf");
  const model::LlamaWeights weights = model::load_llama(file);
  auto small = open_second_device({.disk_pipeline_cache = false, .max_buffer_bytes = 2048});
  model::RunnerOptions o;
  o.infini = weights.config.infini;
  o.matmul_kernel = ops::MatmulKernel::Vector;
  model::LlamaRunner runner(*small, weights, o);
  const std::vector<double> want = model::LlamaReference(weights, runner.options().infini).prefill(kTokens);
  std::vector<float> decoded;
  for (const int32_t id : kTokens) {
    const std::vector<float> row = runner.forward(std::span<const int32_t>(&id, 1), true);
    decoded.insert(decoded.end(), row.begin(), row.end());
  }
  CHECK(nmse(std::span<const float>(decoded), std::span<const double>(want)) <= 1e-5);
}

TEST_CASE_METHOD(GpuTest, "a model whose single row exceeds the device's buffer limit is refused naming it",
                 "[gpu][model][limits]") {
  testing::TinyLlama tiny(testing::TinyLlamaSpec{});
  auto small = open_second_device({.disk_pipeline_cache = false, .max_buffer_bytes = 64});  // a row of 32 f32 is 128
  model::RunnerOptions o;
  o.infini.segment = 6;
  CHECK_THROWS_WITH(model::LlamaRunner(*small, tiny.weights, o),
                    Catch::Contains("maxStorageBufferRange") && Catch::Contains("64 bytes"));
}

TEST_CASE_METHOD(GpuTest, "a segment whose caches exceed the device's buffer limit is refused naming it",
                 "[gpu][model][limits]") {
  testing::TinyLlama tiny(testing::TinyLlamaSpec{});
  auto small = open_second_device({.disk_pipeline_cache = false, .max_buffer_bytes = 4096});
  model::RunnerOptions o;
  o.infini.segment = 4096;  // the open segment's K cache alone: 4096 tokens x 2 heads x 8 x 4 bytes
  o.infini.memory = true;
  o.max_piece = 4;
  CHECK_THROWS_WITH(model::LlamaRunner(*small, tiny.weights, o),
                    Catch::Contains("maxMemoryAllocationSize") && Catch::Contains("4096 bytes"));
}

TEST_CASE_METHOD(GpuTest, "a model larger than the device's memory heap is refused before uploading",
                 "[gpu][model][limits]") {
  testing::TinyLlama tiny(testing::TinyLlamaSpec{});
  auto small = open_second_device({.disk_pipeline_cache = false, .max_heap_bytes = 4096});
  model::RunnerOptions o;
  o.infini.segment = 6;
  CHECK_THROWS_WITH(model::LlamaRunner(*small, tiny.weights, o),
                    Catch::Contains("the weights of layers 0-1 need") && Catch::Contains("heap") && Catch::Contains("4096 bytes"));
  CHECK(small->allocated_bytes() == 0);
}

}  // namespace
}  // namespace infini::test
