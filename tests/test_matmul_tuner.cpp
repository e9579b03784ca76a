// The autotuner (ops/matmul_tuner.hpp, graph/matmul_tuning.hpp): its choice from a timing table
// (injected here) is the fastest correct candidate, deterministic, never a wrong one; the cache
// file round-trips and a damaged, foreign or stale one is refused; on the device every candidate
// it measures gives the reference kernel's product; and a model whose weights were tuned computes
// what the float64 reference does, from measurements or from the cache.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "exec/llama_runner.hpp"
#include "formats/gguf_file.hpp"
#include "graph/device_weights.hpp"
#include "graph/matmul_tuning.hpp"
#include "model/llama_loader.hpp"
#include "ops/host_tensor.hpp"
#include "ops/matmul_tuner.hpp"
#include "reference/llama_reference.hpp"
#include "reference/random_llama.hpp"
#include "support/gpu_fixture.hpp"
#include "support/temp_path.hpp"
#include "util/nmse.hpp"
#include "vk/device.hpp"

namespace infini::test {
namespace {

using ops::CandidateTiming;
using ops::MatmulKernel;

// INFINI_CACHE_DIR pointed at a fresh folder for one test case, and back after it.
struct ScopedCacheDir {
  std::filesystem::path dir = temp_path("tuning-cache");
  std::string before;
  bool had = false;
  ScopedCacheDir() {
    if (const char* v = std::getenv("INFINI_CACHE_DIR")) had = true, before = v;
    std::filesystem::remove_all(dir);
    ::setenv("INFINI_CACHE_DIR", dir.c_str(), 1);
  }
  ~ScopedCacheDir() {
    std::filesystem::remove_all(dir);
    if (had) ::setenv("INFINI_CACHE_DIR", before.c_str(), 1);
    else ::unsetenv("INFINI_CACHE_DIR");
  }
};

}  // namespace

TEST_CASE("the tuner chooses the fastest correct candidate, deterministically", "[tuner]") {
  const std::vector<CandidateTiming> table = {{MatmulKernel::Auto, 2.0, 1e-14, true},
                                              {MatmulKernel::Tiled, 5.0, 1e-14, true},
                                              {MatmulKernel::Registers, 1.5, 1e-14, true},
                                              {MatmulKernel::Lanes, 1.5, 1e-14, true}};
  CHECK(ops::choose_kernel(table) == MatmulKernel::Registers);  // the earlier of equal times
  CHECK(ops::choose_kernel(table) == ops::choose_kernel(table));
  // A wrong candidate is never chosen, however fast.
  std::vector<CandidateTiming> wrong = table;
  wrong.push_back({MatmulKernel::TiledHalf, 0.1, 0.5, false});
  CHECK(ops::choose_kernel(wrong) == MatmulKernel::Registers);
  // Nothing correct: the rule.
  const std::vector<CandidateTiming> none = {{MatmulKernel::Auto, 2.0, 1.0, false}, {MatmulKernel::Tiled, 1.0, 1.0, false}};
  CHECK(ops::choose_kernel(none) == MatmulKernel::Auto);
  CHECK(ops::choose_kernel({}) == MatmulKernel::Auto);
  // Correctness is judged by each kernel's arithmetic: f32 sums against f16 operands.
  CHECK(ops::candidate_tolerance(MatmulKernel::Registers) < ops::candidate_tolerance(MatmulKernel::Matrix));
}

TEST_CASE_METHOD(GpuTest, "the tuning cache round-trips, and a damaged, foreign or stale one is refused",
                 "[gpu][tuner]") {
  const vk::Capabilities& caps = dev().caps();
  model::MatmulTunings t;
  t[{ElementType::Q4_0, 2048, 2048}] = {MatmulKernel::Lanes, {}};
  t[{ElementType::F16, 32000, 2048}] = {MatmulKernel::Tiled, {}};
  const uint64_t digest = ops::matmul_kernels_digest();
  const std::string text = model::encode_tunings(t, caps, digest);
  std::string why;
  const auto back = model::decode_tunings(text, caps, digest, why);
  REQUIRE(back.has_value());
  CHECK(back->size() == 2);
  CHECK(back->at({ElementType::Q4_0, 2048, 2048}).kernel == MatmulKernel::Lanes);
  CHECK(back->at({ElementType::F16, 32000, 2048}).kernel == MatmulKernel::Tiled);

  struct Bad {
    const char* name;
    std::string text;
    const char* why;
  };
  std::string flipped = text;
  flipped[flipped.find("lanes")] = 'L';
  vk::Capabilities other = caps;
  other.driver_version += 1;
  const std::vector<Bad> bad = {
      {"a changed character", flipped, "checksum"},
      {"cut short", text.substr(0, text.size() / 2), "checksum"},
      {"empty", "", "checksum"},
      {"another driver", model::encode_tunings(t, other, digest), "another device, driver or build"},
      {"other kernels", model::encode_tunings(t, caps, digest ^ 1), "another device, driver or build"},
  };
  for (const Bad& b : bad) {
    INFO(b.name);
    std::string reason;
    CHECK_FALSE(model::decode_tunings(b.text, caps, digest, reason).has_value());
    CHECK(reason.find(b.why) != std::string::npos);
  }
  // The cache file is the pipeline cache's name for the device, as text.
  CHECK(model::tuning_cache_path("/c", caps).filename().string().starts_with("tuning-"));
  CHECK(model::tuning_cache_path("/c", caps).extension() == ".txt");
}

TEST_CASE_METHOD(GpuTest, "every candidate the tuner measures gives the reference kernel's product", "[gpu][tuner]") {
  const ElementType type = GENERATE(ElementType::F32, ElementType::F16, ElementType::Q4_0);
  INFO(element_name(type));
  const uint32_t n = 96, k = 256, rows = 70;
  const std::vector<float> w = random_floats(size_t(n) * k, 3, -1.0f, 1.0f);
  const vk::Buffer wb = ops::upload_tensor(dev(), w, type, "W");
  const std::vector<CandidateTiming> timings =
      ops::time_piece_candidates(dev(), type, vk::BufferRange::whole(wb), n, k, rows, 1);
  REQUIRE(!timings.empty());
  CHECK(timings.front().kernel == MatmulKernel::Auto);
  const MatmulKernel rule = ops::Matmul(dev(), ElementType::F32, type).kernel();
  for (const CandidateTiming& t : timings) {
    INFO(ops::matmul_kernel_name(t.kernel));
    CHECK((t.kernel == MatmulKernel::Auto || t.kernel != rule));  // the rule's kernel is measured once, as Auto
    CHECK(t.correct);
    CHECK(t.nmse <= ops::candidate_tolerance(t.kernel));
    CHECK(t.seconds > 0);
  }
}

TEST_CASE_METHOD(GpuTest, "a matmul with a piece kernel runs it for a piece's rows and the rule for fewer", "[gpu][tuner]") {
  const uint32_t n = 64, k = 128;
  const std::vector<float> w = random_floats(size_t(n) * k, 5, -1.0f, 1.0f);
  const vk::Buffer wb = ops::upload_tensor(dev(), w, ElementType::F16, "W");
  const ops::Matmul rule(dev(), ElementType::F32, ElementType::F16);
  const ops::Matmul tuned(dev(), ElementType::F32, ElementType::F16, {}, MatmulKernel::Auto, ops::kAutoMatrixTiles, {},
                          MatmulKernel::Tiled);
  for (const uint32_t rows : {1u, ops::kPieceMinRows - 1, ops::kPieceMinRows, 100u}) {
    INFO(rows << " rows");
    const std::vector<float> a = random_floats(size_t(rows) * k, rows, -1.0f, 1.0f);
    const vk::Buffer ab = ops::upload_tensor(dev(), a, ElementType::F32, "A");
    vk::Buffer c1(dev(), uint64_t(rows) * n * 4, vk::MemoryUse::DeviceLocal, "C"), c2(dev(), uint64_t(rows) * n * 4,
                                                                                     vk::MemoryUse::DeviceLocal, "C");
    const ops::MatmulArgs args1{rows, n, k, vk::BufferRange::whole(ab), vk::BufferRange::whole(wb), vk::BufferRange::whole(c1)};
    ops::MatmulArgs args2 = args1;
    args2.c = vk::BufferRange::whole(c2);
    const bool piece = rows >= ops::kPieceMinRows;
    CHECK(tuned.kernel_for_call(args2) == (piece ? MatmulKernel::Tiled : rule.kernel_for_call(args1)));
    vk::CommandStream stream(dev());
    stream.begin();
    rule.record(stream, args1);
    tuned.record(stream, args2);
    stream.end();
    stream.submit_and_wait();
    const std::vector<float> x = ops::download_floats(c1, size_t(rows) * n), y = ops::download_floats(c2, size_t(rows) * n);
    CHECK(nmse(std::span<const float>(y), std::span<const float>(x)) <= 1e-10);
  }
}

TEST_CASE_METHOD(GpuTest, "a tuned model computes the reference's logits, measured or from the cache", "[gpu][tuner][model]") {
  const ScopedCacheDir cache;
  model::RandomLlamaOptions r;
  r.vocab = 300;
  r.embd = 128;
  r.heads = 4;
  r.heads_kv = 2;
  r.ffn = 256;
  r.segment = 40;
  r.dtype = ElementType::Q4_0;
  const std::vector<std::byte> bytes = model::random_llama(r).to_bytes();
  const model::GgufFile file(bytes, "tuned.gguf");
  const model::LlamaWeights weights = model::load_llama(file);
  const model::LlamaConfig& c = weights.config;
  std::vector<int32_t> ids(90);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = int32_t((i * 37 + 5) % 300);
  const std::vector<double> want = model::LlamaReference(weights, c.infini).prefill(ids);

  size_t measured = 0;
  {
    const model::DeviceWeights tuned(dev(), weights, {0, c.layers}, model::TuneMode::Auto);
    CHECK(tuned.tunings().size() == model::weights_to_tune(tuned, c).size());
    for (const auto& [shape, t] : tuned.tunings()) measured += t.timings.empty() ? 0 : 1;
    CHECK(measured == tuned.tunings().size());  // nothing cached yet: every shape measured
  }
  CHECK(std::filesystem::exists(model::tuning_cache_path(cache.dir, dev().caps())));
  // From the cache now: nothing measured, the same choices; a runner on it computes the reference.
  model::RunnerOptions o;
  o.infini = c.infini;
  o.max_piece = 90;  // one piece: the tuned kernels run (at least ops::kPieceMinRows rows)
  o.tune = model::TuneMode::Auto;
  model::LlamaRunner runner(dev(), weights, o);
  CHECK(nmse(std::span<const float>(runner.forward(ids, true)), std::span<const double>(want)) <= 1e-5);
  const model::DeviceWeights cached(dev(), weights, {0, c.layers}, model::TuneMode::Auto);
  for (const auto& [shape, t] : cached.tunings()) CHECK(t.timings.empty());
  // A damaged cache is ignored (with a line on stderr) and measured again.
  {
    std::fstream f(model::tuning_cache_path(cache.dir, dev().caps()), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(30);
    f.put('#');
  }
  const model::DeviceWeights remeasured(dev(), weights, {0, c.layers}, model::TuneMode::Auto);
  for (const auto& [shape, t] : remeasured.tunings()) CHECK_FALSE(t.timings.empty());
  // Off: no choices, the rules.
  CHECK(model::DeviceWeights(dev(), weights, {0, c.layers}, model::TuneMode::Off).tunings().empty());
}

}  // namespace infini::test
