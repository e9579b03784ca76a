// The autotuner (ops/matmul_tuner.hpp, graph/kernel_tuning.hpp): its choice from a timing table
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
#include "graph/llama_graph.hpp"
#include "graph/kernel_tuning.hpp"
#include "model/llama_loader.hpp"
#include "ops/attention_kernels.hpp"
#include "ops/attention_tuner.hpp"
#include "ops/host_tensor.hpp"
#include "ops/matmul_tuner.hpp"
#include "ops/matrix_units.hpp"
#include "reference/llama_reference.hpp"
#include "reference/random_llama.hpp"
#include "support/gpu_fixture.hpp"
#include "support/matmul_check.hpp"
#include "support/temp_path.hpp"
#include "util/nmse.hpp"
#include "vk/device.hpp"

namespace infini::test {
namespace {

using ops::CandidateTiming;
using ops::MatmulChoice;
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

// A random model (4 query and 2 KV heads) in `dtype`, loaded, with `tokens` ids and the float64
// reference's logits for them.
struct RandomModel {
  std::vector<std::byte> bytes;
  model::GgufFile file;
  model::LlamaWeights weights;
  std::vector<int32_t> ids;
  std::vector<double> want;
  RandomModel(ElementType dtype, int64_t segment, size_t tokens, int64_t vocab = 300, int64_t embd = 128, int64_t ffn = 256)
      : bytes(model::random_llama(options(dtype, segment, vocab, embd, ffn)).to_bytes()),
        file(bytes, "random.gguf"),
        weights(model::load_llama(file)),
        ids(tokens) {
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = int32_t((i * 37 + 5) % size_t(vocab));
    want = model::LlamaReference(weights, weights.config.infini).prefill(ids);
  }
  static model::RandomLlamaOptions options(ElementType dtype, int64_t segment, int64_t vocab, int64_t embd, int64_t ffn) {
    model::RandomLlamaOptions r;
    r.vocab = vocab;
    r.embd = embd;
    r.heads = 4;
    r.heads_kv = 2;
    r.ffn = ffn;
    r.segment = segment;
    r.dtype = dtype;
    return r;
  }
};

}  // namespace

TEST_CASE("the tuner chooses the fastest correct candidate, deterministically", "[tuner]") {
  const MatmulChoice split4{MatmulKernel::Tiled, {}, ops::kAutoMatrixTiles, 4};
  const MatmulChoice tall{MatmulKernel::Tiled, {128, 64, 16, 8, 4}};
  const std::vector<CandidateTiming> table = {{{MatmulKernel::Auto}, 2.0, 1e-14, true},
                                              {{MatmulKernel::Tiled}, 5.0, 1e-14, true},
                                              {{MatmulKernel::Registers}, 1.5, 1e-14, true},
                                              {{MatmulKernel::Lanes}, 1.5, 1e-14, true},
                                              {tall, 1.6, 1e-14, true}};
  CHECK(ops::choose_kernel(table) == MatmulChoice{MatmulKernel::Registers});  // the earlier of equal times
  CHECK(ops::choose_kernel(table) == ops::choose_kernel(table));
  // A tiling or a split is chosen like a kernel.
  std::vector<CandidateTiming> tiled = table;
  tiled.push_back({split4, 1.2, 1e-13, true});
  CHECK(ops::choose_kernel(tiled) == split4);
  // A wrong candidate is never chosen, however fast.
  std::vector<CandidateTiming> wrong = table;
  wrong.push_back({{MatmulKernel::TiledHalf}, 0.1, 0.5, false});
  wrong.push_back({split4, 0.05, 0.2, false});
  CHECK(ops::choose_kernel(wrong) == MatmulChoice{MatmulKernel::Registers});
  // The rule stays unless a candidate beats it by more than the noise margin.
  const std::vector<CandidateTiming> close = {{{MatmulKernel::Auto}, 2.0, 1e-14, true}, {tall, 1.99, 1e-14, true}};
  CHECK(ops::choose_kernel(close) == MatmulChoice{});
  // Nothing correct: the rule.
  const std::vector<CandidateTiming> none = {{{MatmulKernel::Auto}, 2.0, 1.0, false}, {{MatmulKernel::Tiled}, 1.0, 1.0, false}};
  CHECK(ops::choose_kernel(none) == MatmulChoice{});
  CHECK(ops::choose_kernel({}) == MatmulChoice{});
  // Correctness is judged by each kernel's arithmetic: f32 sums against f16 operands.
  CHECK(ops::candidate_tolerance(MatmulKernel::Registers) < ops::candidate_tolerance(MatmulKernel::Matrix));
}

TEST_CASE("a choice's name round-trips; names of what no kernel takes are refused", "[tuner]") {
  const std::vector<MatmulChoice> choices = {
      {MatmulKernel::Auto},
      {MatmulKernel::Lanes},
      {MatmulKernel::Tiled, {128, 64, 16, 8, 4}},
      {MatmulKernel::TiledHalf, {}, ops::kAutoMatrixTiles, 8},
      {MatmulKernel::Tiled, {32, 32, 16, 4, 4}, ops::kAutoMatrixTiles, 16},
      {MatmulKernel::Matrix, {}, {2, 2, 4, 4, 32, false, 2}},
      {MatmulKernel::MatrixEmulated, {}, ops::kSmallMatrixTiles, 3}};
  for (const MatmulChoice& c : choices) {
    INFO(c.name());
    const auto back = ops::matmul_choice_named(c.name());
    REQUIRE(back.has_value());
    CHECK(*back == c);
  }
  CHECK(MatmulChoice{MatmulKernel::Tiled, {128, 64, 16, 8, 4}, ops::kAutoMatrixTiles, 4}.name() ==
        "tiled:128x64x16x8x4/split4");
  for (const char* bad : {"", "tile", "lanes:64x64x16x4x4", "registers/split2", "tiled/split1", "tiled/split17",
                          "tiled/split", "tiled:64x64x16x4", "tiled:default", "coopmat:auto", "tiled/split2x",
                          "coopmat:2x2x4x4x32x3"}) {
    INFO(bad);
    CHECK_FALSE(ops::matmul_choice_named(bad).has_value());
  }
}

TEST_CASE_METHOD(GpuTest, "every tiling and split the tuner may try gives the float64 reference's product",
                 "[gpu][tuner]") {
  const vk::Capabilities& caps = dev().caps();
  std::vector<MatmulKernel> families{MatmulKernel::Tiled};
  if (caps.shader_float16) families.push_back(MatmulKernel::TiledHalf);
  // 70 x 200 in 64 x 64 tiles is 8 workgroups: few enough to split, and 2056 values of k leave
  // each count of slices a short last one.
  const uint32_t rows = 70, n = 200, k = 2056;
  for (const MatmulKernel family : families) {
    const std::vector<MatmulChoice> variants = ops::tiling_variants(caps, family, n, k, rows);
    size_t splits = 0;
    for (const MatmulChoice& v : variants) {
      INFO(v.name());
      CHECK(v.kernel == family);
      MatmulLayout layout;
      layout.split_k = v.split_k;
      layout.accumulate = v.split_k > 1;  // the partials' sum added to C
      layout.f16_operands = family == MatmulKernel::TiledHalf;
      const MatmulResult r = run_matmul(rows, n, k, ElementType::F32, ElementType::F16, v.tiles, 17, family, layout);
      CHECK(r.nmse <= (family == MatmulKernel::TiledHalf ? 1e-6 : 1e-9));
      CHECK(r.guard_violations == 0);
      CHECK(r.split_ran == (v.split_k > 1));
      splits += v.split_k > 1 ? 1 : 0;
    }
    CHECK(splits == 3);  // 2, 4 and 8 slices (each keeps at least 256 values of k)
    // A product of many tiles is not split.
    for (const MatmulChoice& v : ops::tiling_variants(caps, family, 4096, k, 512)) CHECK(v.split_k == 1);
  }
  // Kernels without tilings have no variants.
  CHECK(ops::tiling_variants(caps, MatmulKernel::Lanes, n, k, rows).empty());
  CHECK(ops::tiling_variants(caps, MatmulKernel::Registers, n, k, rows).empty());
}

TEST_CASE_METHOD(GpuTest, "the tuning cache round-trips, and a damaged, foreign or stale one is refused",
                 "[gpu][tuner]") {
  const vk::Capabilities& caps = dev().caps();
  model::KernelTunings t;
  const MatmulChoice split{MatmulKernel::Matrix, {}, {2, 4, 4, 4, 32}, 4};
  t.matmuls[{ElementType::Q4_0, 2048, 2048}] = {{MatmulKernel::Lanes}, {}};
  t.matmuls[{ElementType::F16, 32000, 2048}] = {{MatmulKernel::Tiled, {128, 64, 16, 8, 4}}, {}};
  t.matmuls[{ElementType::F16, 256, 2048}] = {split, {}};
  const model::AttentionShapeKey segments{16, 4, 64, 64, 2048, false, ElementType::F32};
  const model::AttentionShapeKey window{8, 8, 32, 32, 1024, true, ElementType::F16};
  t.attention[segments] = {ops::AttentionKernel::Rows, {}};
  t.attention[window] = {ops::AttentionKernel::Matrix, {}};
  const uint64_t digest = model::tuning_kernels_digest();
  const std::string text = model::encode_tunings(t, caps, digest);
  std::string why;
  const auto back = model::decode_tunings(text, caps, digest, why);
  REQUIRE(back.has_value());
  CHECK(back->matmuls.size() == 3);
  CHECK(back->matmuls.at({ElementType::Q4_0, 2048, 2048}).choice == MatmulChoice{MatmulKernel::Lanes});
  CHECK(back->matmuls.at({ElementType::F16, 32000, 2048}).choice == MatmulChoice{MatmulKernel::Tiled, {128, 64, 16, 8, 4}});
  CHECK(back->matmuls.at({ElementType::F16, 256, 2048}).choice == split);
  CHECK(back->attention.size() == 2);
  CHECK(back->attention.at(segments).kernel == ops::AttentionKernel::Rows);
  CHECK(back->attention.at(window).kernel == ops::AttentionKernel::Matrix);
  // The digest covers the attention and memory kernels too.
  CHECK(model::tuning_kernels_digest() != ops::matmul_kernels_digest());

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
  CHECK(timings.front().choice == MatmulChoice{});
  const MatmulKernel rule = ops::Matmul(dev(), ElementType::F32, type).kernel();
  for (const CandidateTiming& t : timings) {
    INFO(t.choice.name());
    // The rule's kernel is measured once, as Auto.
    CHECK((t.choice == MatmulChoice{} || t.choice != MatmulChoice{rule}));
    CHECK(t.correct);
    CHECK(t.nmse <= ops::candidate_tolerance(t.choice.kernel));
    CHECK(t.seconds > 0);
  }
}

TEST_CASE_METHOD(GpuTest, "a matmul with a piece kernel runs it for a piece's rows and the rule for fewer", "[gpu][tuner]") {
  const uint32_t n = 64, k = 128;
  const std::vector<float> w = random_floats(size_t(n) * k, 5, -1.0f, 1.0f);
  const vk::Buffer wb = ops::upload_tensor(dev(), w, ElementType::F16, "W");
  const ops::Matmul rule(dev(), ElementType::F32, ElementType::F16);
  const ops::Matmul tuned(dev(), ElementType::F32, ElementType::F16, {}, MatmulKernel::Auto, ops::kAutoMatrixTiles, {},
                          MatmulChoice{MatmulKernel::Tiled});
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
    // A choice the device cannot take (tiles past its limits: a cache of another profile) is
    // ignored: the rule runs.
    const ops::Matmul impossible(dev(), ElementType::F32, ElementType::F16, {}, MatmulKernel::Auto, ops::kAutoMatrixTiles,
                                 {}, MatmulChoice{MatmulKernel::Tiled, {512, 512, 16, 1, 1}});
    CHECK(impossible.kernel_for_call(args2) == rule.kernel_for_call(args2));
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
  const RandomModel m(ElementType::Q4_0, 40, 90);
  const model::LlamaWeights& weights = m.weights;
  const model::LlamaConfig& c = weights.config;
  const std::vector<int32_t>& ids = m.ids;
  const std::vector<double>& want = m.want;

  size_t measured = 0;
  {
    const model::DeviceWeights tuned(dev(), weights, {0, c.layers}, model::TuneMode::Auto);
    CHECK(tuned.tunings().matmuls.size() == model::weights_to_tune(tuned, c).size());
    for (const auto& [shape, t] : tuned.tunings().matmuls) measured += t.timings.empty() ? 0 : 1;
    CHECK(measured == tuned.tunings().matmuls.size());  // nothing cached yet: every shape measured
    // And the attention layers' family, under the model's options.
    REQUIRE(tuned.tunings().attention.size() == 1);
    CHECK(tuned.tunings().attention.begin()->first == model::attention_key(c, c.infini));
    CHECK_FALSE(tuned.tunings().attention.begin()->second.timings.empty());
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
  for (const auto& [shape, t] : cached.tunings().matmuls) CHECK(t.timings.empty());
  for (const auto& [shape, t] : cached.tunings().attention) CHECK(t.timings.empty());
  // A damaged cache is ignored (with a line on stderr) and measured again.
  {
    std::fstream f(model::tuning_cache_path(cache.dir, dev().caps()), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(30);
    f.put('#');
  }
  const model::DeviceWeights remeasured(dev(), weights, {0, c.layers}, model::TuneMode::Auto);
  for (const auto& [shape, t] : remeasured.tunings().matmuls) CHECK_FALSE(t.timings.empty());
  for (const auto& [shape, t] : remeasured.tunings().attention) CHECK_FALSE(t.timings.empty());
  // Off: no choices, the rules.
  const model::DeviceWeights untuned(dev(), weights, {0, c.layers}, model::TuneMode::Off);
  CHECK(untuned.tunings().empty());
  // A bound on the time measuring may take: spent before the first shape, nothing is measured and
  // nothing kept (a line on stderr says so), so the next open measures them.
  const std::filesystem::path kept = model::tuning_cache_path(cache.dir, dev().caps());
  std::filesystem::remove(kept);
  CHECK(model::tune_kernels(untuned, c, c.infini, model::TuneMode::Force, {}, 0.0).empty());
  CHECK_FALSE(std::filesystem::exists(kept));
}

// The graph runs what a cache says, tilings and splits over k too (their partials in the graph's
// own scratch): every weight of a model on the tiled kernel in other tiles or in 2 or 3 slices
// of k, for prefill pieces and the rule for decode, computes the float64 reference's logits.
TEST_CASE_METHOD(GpuTest, "a model whose weights run split over k or in other tiles computes the reference's logits",
                 "[gpu][tuner][model]") {
  const ScopedCacheDir cache;
  const RandomModel m(ElementType::F16, 128, 100);
  const model::LlamaWeights& weights = m.weights;
  const model::LlamaConfig& c = weights.config;
  const std::vector<int32_t>& ids = m.ids;
  const std::vector<double>& want = m.want;
  const MatmulChoice choices[] = {{MatmulKernel::Tiled, {}, ops::kAutoMatrixTiles, 2},
                                  {MatmulKernel::Tiled, {32, 32, 16, 4, 4}, ops::kAutoMatrixTiles, 3},
                                  {MatmulKernel::Tiled, {128, 64, 16, 8, 4}}};
  for (const MatmulChoice& choice : choices) {
    INFO(choice.name());
    model::KernelTunings all;
    {
      const model::DeviceWeights off(dev(), weights, {0, c.layers}, model::TuneMode::Off);
      for (const model::WeightToTune& w : model::weights_to_tune(off, c)) all.matmuls[w.shape] = {choice, {}};
    }
    const std::string text = model::encode_tunings(all, dev().caps(), model::tuning_kernels_digest());
    std::filesystem::create_directories(cache.dir);
    std::ofstream(model::tuning_cache_path(cache.dir, dev().caps()), std::ios::binary) << text;
    const model::DeviceWeights from_cache(dev(), weights, {0, c.layers}, model::TuneMode::Auto);
    for (const auto& [shape, t] : from_cache.tunings().matmuls) CHECK(t.choice == choice);
    model::RunnerOptions o;
    o.infini = c.infini;
    o.max_piece = 70;  // pieces of 70 and 30 rows: the choice, then the rule
    o.tune = model::TuneMode::Auto;
    model::LlamaRunner runner(dev(), weights, o);
    // f32 sums: 1e-9; where the rule (the 30-row piece, the logits) runs on matrix units, their f16
    // operands round the activations (about 2e-8).
    const bool f16_rule = ops::matrix_units_for_auto(dev().caps()) != ops::MatrixUnits::None;
    CHECK(nmse(std::span<const float>(runner.forward(ids, true)), std::span<const double>(want)) <= (f16_rule ? 1e-6 : 1e-9));
  }
}

// The attention families (ops/attention_tuner.hpp): from a timing table, the rule stays unless a
// family is no slower at prefill and decode and faster at one; on the device every family it
// measures gives the tiled family's outputs; and a graph whose weights' cache names a family runs
// it and computes the float64 reference's logits.
TEST_CASE("the attention tuner replaces the rule only with a family no slower at prefill or decode", "[tuner]") {
  using ops::AttentionKernel;
  using ops::AttentionTiming;
  const AttentionTiming rule{AttentionKernel::Auto, 1.0, 0.010, 0, true};
  // Faster prefill, decode no slower (within the margin): chosen.
  CHECK(ops::choose_attention_family(std::vector<AttentionTiming>{
            rule, {AttentionKernel::Tiled, 0.5, 0.0101, 1e-14, true}}) == AttentionKernel::Tiled);
  // Faster prefill but slower decode: the rule.
  CHECK(ops::choose_attention_family(std::vector<AttentionTiming>{
            rule, {AttentionKernel::Tiled, 0.5, 0.02, 1e-14, true}}) == AttentionKernel::Auto);
  // Within the noise at both: the rule.
  CHECK(ops::choose_attention_family(std::vector<AttentionTiming>{
            rule, {AttentionKernel::Rows, 0.99, 0.0099, 1e-14, true}}) == AttentionKernel::Auto);
  // Of two that qualify, the smaller sum of relative times; a wrong one never.
  CHECK(ops::choose_attention_family(std::vector<AttentionTiming>{rule,
                                                                  {AttentionKernel::Tiled, 0.5, 0.010, 1e-14, true},
                                                                  {AttentionKernel::Rows, 0.8, 0.005, 1e-14, true},
                                                                  {AttentionKernel::Matrix, 0.1, 0.001, 0.5, false}}) ==
        AttentionKernel::Rows);
  // No correct rule to compare with: the rule.
  CHECK(ops::choose_attention_family(std::vector<AttentionTiming>{{AttentionKernel::Auto, 1, 1, 1, false},
                                                                  {AttentionKernel::Tiled, 0.5, 0.5, 0, true}}) ==
        AttentionKernel::Auto);
}

TEST_CASE_METHOD(GpuTest, "every attention family the tuner measures gives the tiled family's outputs", "[gpu][tuner]") {
  const AttentionShape shape{4, 2, 32, 32};
  InfiniOptions options;
  options.segment = 64;
  for (const bool sliding : {false, true}) {
    INFO((sliding ? "sliding context" : "segments"));
    InfiniOptions o = options;
    if (sliding) {
      o.memory = false;
      o.sliding = true;
      o.sinks = 4;
    }
    const std::vector<ops::AttentionTiming> timings = ops::time_attention_candidates(dev(), shape, o, ElementType::F32, 40, 2);
    REQUIRE(timings.size() >= 2);
    CHECK(timings.front().kernel == ops::AttentionKernel::Auto);
    for (const ops::AttentionTiming& t : timings) {
      INFO(ops::attention_kernel_name(t.kernel));
      CHECK(t.correct);
      CHECK(t.nmse <= ops::attention_tolerance(t.kernel));
      CHECK(t.piece_seconds > 0);
      CHECK(t.decode_seconds > 0);
    }
  }
}

TEST_CASE_METHOD(GpuTest, "a graph runs the attention family its weights' cache names and computes the reference's logits",
                 "[gpu][tuner][model]") {
  const ScopedCacheDir cache;
  const RandomModel m(ElementType::F32, 32, 80, 200, 64, 128);
  const model::LlamaWeights& weights = m.weights;
  const model::LlamaConfig& c = weights.config;
  const std::vector<int32_t>& ids = m.ids;
  const std::vector<double>& want = m.want;
  for (const ops::AttentionKernel family : {ops::AttentionKernel::Tiled, ops::AttentionKernel::Rows}) {
    INFO(ops::attention_kernel_name(family));
    model::KernelTunings t;
    t.attention[model::attention_key(c, c.infini)] = {family, {}};
    std::filesystem::create_directories(cache.dir);
    std::ofstream(model::tuning_cache_path(cache.dir, dev().caps()), std::ios::binary)
        << model::encode_tunings(t, dev().caps(), model::tuning_kernels_digest());
    auto tuned = std::make_shared<const model::DeviceWeights>(dev(), weights, model::LayerRange{0, c.layers},
                                                              model::TuneMode::Auto);
    CHECK(tuned->attention_choice(model::attention_key(c, c.infini)) == family);
    model::GraphOptions g;
    g.infini = c.infini;
    const model::LlamaGraph graph(dev(), tuned, c, g, 16, true);
    CHECK(graph.first_attention().attention_kernel() == family);
    // Under another segment length the key differs: the rule.
    model::GraphOptions other = g;
    other.infini.segment = 48;
    const model::LlamaGraph rule(dev(), tuned, c, other, 16, true);
    CHECK(rule.first_attention().attention_kernel() ==
          ops::choose_attention_kernel(ops::AttentionKernel::Auto, {int(c.heads), int(c.heads_kv), int(c.head_dim),
                                                                    int(c.head_dim)},
                                       dev().caps()));
    model::RunnerOptions o;
    o.infini = c.infini;
    o.tune = model::TuneMode::Auto;
    model::LlamaRunner runner(dev(), weights, o);
    CHECK(nmse(std::span<const float>(runner.forward(ids, true)), std::span<const double>(want)) <= 1e-9);
  }
}

}  // namespace infini::test
