// The device model runner against the float64 references: with memory off and one segment it is
// a plain Llama (plain_llama_logits, written independently); with memory on and several segments
// it is LlamaReference. Prefill equals token-by-token decode, reset starts a fresh stream.
#include <algorithm>
#include <filesystem>
#include <numeric>
#include <span>
#include <optional>
#include <vector>

#include "support/gpu_fixture.hpp"
#include "infini/error.hpp"
#include "formats/gguf_file.hpp"
#include "model/llama_loader.hpp"
#include "reference/llama_reference.hpp"
#include "exec/llama_runner.hpp"
#include "reference/plain_llama.hpp"
#include "reference/random_llama.hpp"
#include "support/tiny_llama.hpp"
#include "util/nmse.hpp"
#include "vk/dispatch_profile.hpp"

namespace infini::test {
namespace {

using model::LlamaRunner;
using model::RunnerOptions;
using infini::ElementType;
using testing::TinyLlama;
using testing::TinyLlamaSpec;

const std::vector<int32_t> kTokens = {3, 17, 42, 0, 49, 8, 8, 21, 33, 5, 12, 40, 7, 19, 2, 44, 30};  // T = 17

double tolerance(ElementType t) { return t == ElementType::F16 ? 1e-4 : 1e-5; }

double err(const std::vector<float>& got, const std::vector<double>& want) {
  return nmse(std::span<const float>(got), std::span<const double>(want));
}

RunnerOptions runner_options(int64_t segment, bool memory, uint32_t max_piece = 256) {
  RunnerOptions o;
  o.infini.segment = segment;
  o.infini.memory = memory;
  o.max_piece = max_piece;
  return o;
}

TinyLlamaSpec spec_for(ElementType type, bool tied, int heads_kv) {
  TinyLlamaSpec s;
  s.type = type;
  s.tied = tied;
  s.heads_kv = heads_kv;
  s.seed = uint64_t(heads_kv) * 7 + (tied ? 3 : 1);
  return s;
}

TEST_CASE_METHOD(GpuTest, "model runner with memory off and one segment is a plain Llama", "[gpu][model]") {
  const ElementType type = GENERATE(ElementType::F32, ElementType::F16);
  const bool tied = GENERATE(false, true);
  const int heads_kv = GENERATE(2, 4);
  INFO((type == ElementType::F16 ? "f16" : "f32") << " tied " << tied << " Hkv " << heads_kv);
  TinyLlama tiny(spec_for(type, tied, heads_kv));
  const std::vector<double> want = model::plain_llama_logits(tiny.weights, kTokens);
  LlamaRunner runner(dev(), tiny.weights, runner_options(64, false));
  CHECK(err(runner.forward(kTokens, true), want) <= tolerance(type));
}

TEST_CASE_METHOD(GpuTest, "model runner with memory on matches the reference layer by layer", "[gpu][model]") {
  const ElementType type = GENERATE(ElementType::F32, ElementType::F16);
  const UpdateRule update = GENERATE(UpdateRule::Delta, UpdateRule::Linear);
  INFO((type == ElementType::F16 ? "f16" : "f32") << (update == UpdateRule::Delta ? " delta" : " linear"));
  TinyLlama tiny(spec_for(type, false, 2));
  RunnerOptions o = runner_options(5, true, 3);  // pieces of 3 inside segments of 5: both boundaries exercised
  o.infini.update = update;
  model::LlamaReference reference(tiny.weights, o.infini);
  const std::vector<double> want = reference.prefill(kTokens);
  LlamaRunner runner(dev(), tiny.weights, o);
  CHECK(err(runner.forward(kTokens, true), want) <= tolerance(type));
  CHECK(runner.tokens_seen() == int64_t(kTokens.size()));
}

TEST_CASE_METHOD(GpuTest, "model runner: prefill equals token-by-token decode, and reset starts over", "[gpu][model]") {
  TinyLlama tiny(spec_for(ElementType::F32, false, 2));
  LlamaRunner runner(dev(), tiny.weights, runner_options(4, true));
  const std::vector<float> prefill = runner.forward(kTokens, true);
  runner.reset();
  CHECK(runner.tokens_seen() == 0);
  std::vector<float> decoded;
  for (int32_t t : kTokens) {
    const std::vector<float> row = runner.forward(std::span<const int32_t>(&t, 1), false);
    decoded.insert(decoded.end(), row.begin(), row.end());
  }
  CHECK(nmse(std::span<const float>(decoded), std::span<const float>(prefill)) <= 1e-10);
  runner.reset();
  const std::vector<float> last = runner.forward(kTokens, false);
  const size_t vocab = size_t(tiny.weights.config.vocab);
  CHECK(nmse(std::span<const float>(last), std::span<const float>(prefill).subspan(prefill.size() - vocab)) <= 1e-12);
}

TEST_CASE_METHOD(GpuTest, "model runner rejects token ids outside the vocabulary before feeding", "[gpu][model]") {
  TinyLlama tiny(spec_for(ElementType::F32, false, 2));
  LlamaRunner runner(dev(), tiny.weights, runner_options(8, true));
  const std::vector<int32_t> bad = {1, 2, 50};
  CHECK_THROWS_WITH(runner.forward(bad, false), Catch::Contains("token id 50") && Catch::Contains("vocabulary of 50"));
  CHECK(runner.tokens_seen() == 0);
}

}  // namespace
}  // namespace infini::test

namespace infini::test {
namespace {

// The whole file path: a random GGUF written to bytes, parsed, loaded and run on the device,
// against the float64 reference fed the same parsed weights.
TEST_CASE_METHOD(GpuTest, "a random GGUF model runs on the device as the reference says", "[gpu][model][gguf]") {
  const ElementType type = GENERATE(ElementType::F32, ElementType::F16);
  model::RandomLlamaOptions ro;
  ro.vocab = 300;
  ro.embd = 48;
  ro.heads = 4;
  ro.heads_kv = 2;
  ro.ffn = 80;
  ro.dtype = type;
  ro.segment = 6;
  const std::vector<std::byte> bytes = model::random_llama(ro).to_bytes();
  model::GgufFile file(bytes, "random.gguf");
  const model::LlamaWeights weights = model::load_llama(file);
  REQUIRE(weights.config.has_infini_keys);
  RunnerOptions o;
  o.infini = weights.config.infini;
  model::LlamaReference reference(weights, o.infini);
  const std::vector<int32_t> ids = {1, 299, 17, 42, 5, 5, 100, 3, 250, 77, 8, 9, 10, 11, 12};
  const std::vector<double> want = reference.prefill(ids);
  model::LlamaRunner runner(dev(), weights, o);
  CHECK(err(runner.forward(ids, true), want) <= tolerance(type));
}

TEST_CASE_METHOD(GpuTest, "qwen2 and qwen3 files (biases, Q/K norms, NEOX RoPE) run as both references", "[gpu][model][gguf]") {
  const ElementType type = GENERATE(ElementType::F32, ElementType::F16);
  const std::string arch = GENERATE("qwen2", "qwen3");
  INFO(arch << " " << element_name(type));
  model::RandomLlamaOptions ro;
  ro.arch = arch;
  ro.vocab = 300;
  ro.embd = 64;
  ro.heads = 4;
  if (arch == "qwen3") ro.head_dim = 24;  // heads * head_dim = 96, not embd, as in Qwen3's files
  ro.heads_kv = 2;
  ro.ffn = 96;
  ro.dtype = type;
  ro.segment = 6;
  const std::vector<int32_t> ids = {1, 299, 17, 42, 5, 5, 100, 3, 250, 77, 8, 9, 10, 11, 12};
  // With memory over several segments: the Infini-attention reference.
  {
    const std::vector<std::byte> bytes = model::random_llama(ro).to_bytes();
    const model::GgufFile file(bytes, "qwen2.gguf");
    const model::LlamaWeights weights = model::load_llama(file);
    CHECK(weights.config.architecture == arch);
    CHECK(weights.config.rope.layout == rope::RopeLayout::Neox);
    CHECK(weights.layers[1].bq.has_value() == (arch == "qwen2"));
    CHECK(weights.layers[1].bv.has_value() == (arch == "qwen2"));
    CHECK(weights.layers[1].q_norm.has_value() == (arch == "qwen3"));
    CHECK(weights.layers[1].k_norm.has_value() == (arch == "qwen3"));
    RunnerOptions o;
    o.infini = weights.config.infini;
    model::LlamaRunner runner(dev(), weights, o);
    CHECK(err(runner.forward(ids, true), model::LlamaReference(weights, o.infini).prefill(ids)) <= tolerance(type));
  }
  // A plain file, memory off, one segment: the independent plain implementation (biases, norms
  // and NEOX rotation written out there too).
  ro.infini = false;
  const std::vector<std::byte> bytes = model::random_llama(ro).to_bytes();
  const model::GgufFile file(bytes, "qwen2-plain.gguf");
  const model::LlamaWeights weights = model::load_llama(file);
  RunnerOptions o;
  o.infini.memory = false;
  o.infini.segment = 64;
  o.infini.rope = weights.config.rope;
  model::LlamaRunner runner(dev(), weights, o);
  CHECK(err(runner.forward(ids, true), model::plain_llama_logits(weights, ids)) <= tolerance(type));
}

TEST_CASE_METHOD(GpuTest, "a model with rope_freqs (Llama 3.1 scaling) runs as the reference, and differently",
                 "[gpu][model][gguf]") {
  model::RandomLlamaOptions ro;
  ro.vocab = 300;
  ro.embd = 64;
  ro.heads = 4;  // head dim 16: 8 frequencies
  ro.heads_kv = 2;
  ro.ffn = 96;
  ro.segment = 6;
  const std::vector<int32_t> ids = {1, 299, 17, 42, 5, 5, 100, 3, 250, 77, 8, 9, 10, 11, 12, 13, 14};
  auto logits_of = [&](bool freqs, double* reference_err) {
    model::GgufWriter w = model::random_llama(ro);
    if (freqs) w.add_tensor("rope_freqs.weight", ElementType::F32, {8}, std::vector<float>{1, 1, 1.5f, 3, 8, 8, 8, 8});
    const std::vector<std::byte> bytes = w.to_bytes();
    const model::GgufFile file(bytes, "freqs.gguf");
    const model::LlamaWeights weights = model::load_llama(file);
    CHECK(weights.config.rope.frequency_divisors.size() == (freqs ? 8u : 0u));
    RunnerOptions o;
    o.infini = weights.config.infini;
    model::LlamaRunner runner(dev(), weights, o);
    const std::vector<float> got = runner.forward(ids, true);
    *reference_err = err(got, model::LlamaReference(weights, o.infini).prefill(ids));
    return got;
  };
  double with_err = 0, without_err = 0;
  const std::vector<float> with = logits_of(true, &with_err), without = logits_of(false, &without_err);
  // Random weights make attention nearly uniform, so RoPE moves these logits little; the device
  // must still follow the divisors to well within that move.
  const double moved = nmse(std::span<const float>(with), std::span<const float>(without));
  INFO("rope_freqs moved the logits by nmse " << moved << "; device vs reference " << with_err);
  CHECK(moved > 1e-10);
  CHECK(with_err <= moved / 100);
  CHECK(without_err <= tolerance(ElementType::F32));
}

namespace {
void check_quantized_model(vk::Device& device, QuantScheme scheme) {
  // Quantization error of the logits against the f16 model, from the weights' own error (the
  // logits' NMSE stays within a few times it): 8-bit steps of max|x| / 127 per 32 values; 4-bit
  // steps of max|x| / 8 (Q4_0) or of a sub-block's range / 15 (Q4_K); 5-bit and 6-bit steps.
  const double bound = scheme == QuantScheme::Q8_0     ? 1e-3
                       : scheme == QuantScheme::Q6_K   ? 3e-3
                       : scheme == QuantScheme::Q5_K_M ? 1.5e-2
                                                       : 5e-2;
  model::RandomLlamaOptions ro;
  ro.vocab = 300;
  ro.embd = 256;  // every matrix row (256 and 512 values) whole 256-value blocks
  ro.heads = 4;
  ro.heads_kv = 2;
  ro.ffn = 512;
  ro.segment = 6;
  auto logits_of = [&](std::optional<QuantScheme> stored, double* reference_nmse) {
    ro.scheme = stored;
    ro.dtype = ElementType::F16;
    const std::vector<std::byte> bytes = model::random_llama(ro).to_bytes();
    model::GgufFile file(bytes, "random.gguf");
    const model::LlamaWeights weights = model::load_llama(file);
    RunnerOptions o;
    o.infini = weights.config.infini;
    const std::vector<int32_t> ids = {1, 299, 17, 42, 5, 5, 100, 3, 250, 77, 8, 9, 10, 11, 12};
    model::LlamaRunner runner(device, weights, o);
    const std::vector<float> got = runner.forward(ids, true);
    *reference_nmse = err(got, model::LlamaReference(weights, o.infini).prefill(ids));
    return got;
  };
  double quantized_vs_reference = 0, f16_vs_reference = 0;
  const std::vector<float> quantized = logits_of(scheme, &quantized_vs_reference);
  const std::vector<float> f16 = logits_of(std::nullopt, &f16_vs_reference);
  CHECK(quantized_vs_reference <= 1e-5);  // the kernels are exact to float32 on the stored weights
  CHECK(f16_vs_reference <= 1e-4);
  const double q_vs_f16 = nmse(std::span<const float>(quantized), std::span<const float>(f16));
  INFO("logits nmse, " << quant_scheme_name(scheme) << " against f16: " << q_vs_f16);
  CHECK(q_vs_f16 <= bound);
  CHECK(q_vs_f16 > 0);
}
}  // namespace

// What phones and boards run (Q4_K_M stores some matrices as Q6_K), so the device profiles run it too.
TEST_CASE_METHOD(GpuTest, "a Q4_0 or Q4_K_M model runs as the reference on its dequantized weights, near the f16 model",
                 "[gpu][model][gguf][quant]") {
  check_quantized_model(dev(), GENERATE(QuantScheme::Q4_0, QuantScheme::Q4_K_M));
}

// [breadth]: the profile runs leave it out (tests/cli/profiles_model.py); its kernels are Q4's with
// other block decoders.
TEST_CASE_METHOD(GpuTest, "a Q8_0, Q5_K_M or Q6_K model runs as the reference on its dequantized weights, near the f16 model",
                 "[gpu][model][gguf][quant][breadth]") {
  check_quantized_model(dev(), GENERATE(QuantScheme::Q8_0, QuantScheme::Q5_K_M, QuantScheme::Q6_K));
}

// What llama.cpp writes that the schemes above do not: bf16, IQ4_XS, Q2_K and Q3_K files, and the
// 32-value types it gives rows that are not whole 256-value super-blocks (ffn_down's 288 values
// here: Q5_0 under Q4_K_M, Q5_1 under Q5_K_M, IQ4_NL under IQ4_XS, as in its files of small
// models). Each runs as the reference on its stored weights, prefill and decode.
TEST_CASE_METHOD(GpuTest, "bf16, IQ4_XS, Q2_K and Q3_K files and the 32-value fallbacks run as the reference",
                 "[gpu][model][gguf][quant]") {
  const std::string variant = GENERATE("bf16", "q4_k_m", "q5_k_m", "iq4_xs", "q2_k", "q3_k");
  INFO(variant);
  model::RandomLlamaOptions ro;
  ro.vocab = 300;
  ro.embd = 256;
  ro.heads = 4;
  ro.heads_kv = 2;
  ro.ffn = 288;
  ro.segment = 6;
  ro.dtype = variant == "bf16" ? ElementType::BF16 : ElementType::F16;
  const bool low_bits = variant == "q2_k" || variant == "q3_k";
  const ElementType low_type = variant == "q2_k" ? ElementType::Q2_K : ElementType::Q3_K;
  if (low_bits) {  // every matrix in that type: rows of whole super-blocks
    ro.dtype = low_type;
    ro.ffn = 512;
  } else if (variant != "bf16") {
    ro.scheme = quant_scheme_named(variant);
  }
  const std::vector<std::byte> bytes = model::random_llama(ro).to_bytes();
  const model::GgufFile file(bytes, "random.gguf");
  const ElementType down = variant == "bf16"     ? ElementType::BF16
                           : low_bits            ? low_type
                           : variant == "q4_k_m" ? ElementType::Q5_0
                           : variant == "q5_k_m" ? ElementType::Q5_1
                                                 : ElementType::IQ4_NL;
  CHECK(file.tensor("blk.0.ffn_down.weight").type == down);
  if (variant == "bf16") CHECK(file.tensor("token_embd.weight").type == ElementType::BF16);
  const model::LlamaWeights weights = model::load_llama(file);
  RunnerOptions o;
  o.infini = weights.config.infini;
  const std::vector<int32_t> ids = {1, 299, 17, 42, 5, 5, 100, 3, 250, 77, 8, 9, 10, 11, 12};
  const std::vector<double> want = model::LlamaReference(weights, o.infini).prefill(ids);
  model::LlamaRunner runner(dev(), weights, o);
  CHECK(err(runner.forward(ids, true), want) <= 1e-5);
  // Token by token: one-row calls, which take the decode kernels (the vector one on GPUs).
  model::LlamaRunner decoder(dev(), weights, o);
  std::vector<float> stepped;
  for (int32_t id : ids) {
    const std::vector<float> row = decoder.forward(std::span<const int32_t>(&id, 1), true);
    stepped.insert(stepped.end(), row.begin(), row.end());
  }
  CHECK(err(stepped, want) <= 1e-5);
}

// On the vector kernel (what GPUs decode with) the norms before the projections, qwen2's biases
// and the FFN's gate, up and SwiGLU run inside the projections' passes. The logits stay the
// reference's, for one-row pieces and pieces of 3; each layer of a one-row piece has 4 dispatches
// and 3 barriers fewer than on the register kernel, which keeps them apart (qwen2's 3 bias adds
// and the barrier before them too), and the final norm runs in the logits' pass. With the tiled
// attention, RoPE and the cache appends join the attention's pass as well.
TEST_CASE_METHOD(GpuTest, "decode with the block's small steps inside the projections runs as the reference",
                 "[gpu][model][gguf]") {
  const std::string file = GENERATE("llama", "qwen2", "qwen3", "llama q4_k_m");
  INFO(file);
  model::RandomLlamaOptions ro;
  ro.arch = file.substr(0, file.find(' '));
  ro.vocab = 300;
  ro.embd = 256;
  ro.heads = 4;
  ro.heads_kv = 2;
  if (ro.arch == "qwen3") ro.head_dim = 48;
  ro.ffn = 512;
  ro.dtype = ElementType::F16;
  if (file.ends_with("q4_k_m")) ro.scheme = QuantScheme::Q4_K_M;
  ro.segment = 6;
  const std::vector<std::byte> bytes = model::random_llama(ro).to_bytes();
  const model::GgufFile gguf(bytes, "random.gguf");
  const model::LlamaWeights weights = model::load_llama(gguf);
  const std::vector<int32_t> ids = {1, 299, 17, 42, 5, 5, 100, 3, 250, 77, 8, 9, 10, 11, 12};
  const std::vector<double> want = model::LlamaReference(weights, weights.config.infini).prefill(ids);
  auto decode = [&](ops::MatmulKernel kernel, uint32_t piece, model::StageProfile* profile, ops::VectorTiles vt = {},
                    ops::AttentionKernel attention = ops::AttentionKernel::Auto, bool fused_steps = true) {
    RunnerOptions o;
    o.infini = weights.config.infini;
    o.matmul_kernel = kernel;
    o.vector_tiles = vt;
    o.kernel = attention;
    o.fused_steps = fused_steps;
    LlamaRunner runner(dev(), weights, o);
    std::vector<float> logits;
    for (size_t at = 0; at < ids.size(); at += piece) {
      const size_t n = std::min<size_t>(piece, ids.size() - at);
      const std::vector<float> rows = runner.forward(std::span<const int32_t>(ids).subspan(at, n), true);
      logits.insert(logits.end(), rows.begin(), rows.end());
    }
    *profile = runner.profile();
    return logits;
  };
  model::StageProfile fused, apart, pieces_of_3, other_shape;
  CHECK(err(decode(ops::MatmulKernel::Vector, 1, &fused), want) <= 1e-4);
  CHECK(err(decode(ops::MatmulKernel::Vector, 3, &pieces_of_3), want) <= 1e-4);
  CHECK(err(decode(ops::MatmulKernel::Vector, 1, &other_shape, {32, 4}), want) <= 1e-4);
  CHECK(err(decode(ops::MatmulKernel::Registers, 1, &apart), want) <= 1e-4);
  // And one dispatch and barrier per token for the final norm, inside the logits' pass.
  const int64_t tokens = int64_t(ids.size()), steps = tokens * ro.layers, biases = ro.arch == "qwen2" ? 1 : 0;
  CHECK(apart.dispatches - fused.dispatches == steps * (4 + 3 * biases) + tokens);
  CHECK(apart.barriers - fused.barriers == steps * (3 + biases) + tokens);
  // With the tiled attention (GPUs' choice) decode's RoPE of Q and K, the appends of K and V and
  // the merge of the split keys run inside the attention's pass too: 5 dispatches and 2 barriers
  // fewer per layer and token.
  model::StageProfile tiled_fused, tiled_apart;
  CHECK(err(decode(ops::MatmulKernel::Vector, 1, &tiled_fused, {}, ops::AttentionKernel::Tiled), want) <= 1e-4);
  CHECK(err(decode(ops::MatmulKernel::Vector, 1, &tiled_apart, {}, ops::AttentionKernel::Tiled, false), want) <= 1e-4);
  CHECK(tiled_apart.dispatches - tiled_fused.dispatches == steps * (9 + 3 * biases) + tokens);
  // At a segment's end the delta rule's retrieval reads the caches that the fused pass has just
  // written, so it waits a barrier there; apart, it ran beside the merge.
  const InfiniOptions& io = weights.config.infini;
  const int64_t delta_waits = io.memory && io.update == UpdateRule::Delta ? tokens / ro.segment * ro.layers : 0;
  CHECK(tiled_apart.barriers - tiled_fused.barriers == steps * (5 + biases) + tokens - delta_waits);
}

}  // namespace
}  // namespace infini::test

namespace infini::test {
namespace {

TEST_CASE_METHOD(GpuTest, "model runner records each piece shape once and replays it", "[gpu][model]") {
  TinyLlama tiny(spec_for(ElementType::F32, false, 2));
  RunnerOptions o = runner_options(6, true, 3);  // two pieces of 3 per segment of 6
  model::LlamaReference reference(tiny.weights, o.infini);
  LlamaRunner runner(dev(), tiny.weights, o);
  std::vector<int32_t> ids;
  for (int i = 0; i < 60; ++i) ids.push_back((i * 37 + 11) % 50);  // 10 segments
  const std::vector<float> got = runner.forward(ids, true);
  // Shapes: (ends the segment or not) x (first segment or not), all-logits rows: 4 recordings for
  // 20 pieces.
  CHECK(runner.recorded_pieces() == 4);
  CHECK(err(got, reference.prefill(ids)) <= tolerance(ElementType::F32));
}

TEST_CASE_METHOD(GpuTest, "timing every kernel of a piece leaves its logits alone and accounts for every dispatch",
                 "[gpu][model]") {
  if (!dev().caps().timestamps) {
    WARN("skipped: " << dev().caps().name << " has no timestamps");
    return;
  }
  TinyLlama tiny(spec_for(ElementType::F32, false, 2));
  RunnerOptions o = runner_options(6, true, 3);
  std::vector<int32_t> ids;
  for (int i = 0; i < 14; ++i) ids.push_back((i * 37 + 11) % 50);
  LlamaRunner plain(dev(), tiny.weights, o);
  o.time_kernels = true;
  LlamaRunner timed(dev(), tiny.weights, o);
  CHECK(plain.forward(ids, true) == timed.forward(ids, true));  // the barriers between kernels change nothing
  CHECK(plain.dispatch_profile().kernels.empty());
  const vk::DispatchProfile prefill = timed.dispatch_profile();
  const int32_t next = 7;
  CHECK(plain.forward(std::span(&next, 1), true) == timed.forward(std::span(&next, 1), true));
  const vk::DispatchProfile decode = timed.dispatch_profile() - prefill;
  // Every dispatch the pieces ran has its time, and only those; the prefill's and the decode's
  // add up to the whole.
  const auto dispatches = [](const vk::DispatchProfile& p) {
    int64_t n = 0;
    for (const auto& [kernel, t] : p.kernels) n += t.dispatches;
    return n;
  };
  const vk::DispatchProfile all = timed.dispatch_profile();
  CHECK(dispatches(all) == timed.profile().dispatches);
  CHECK(dispatches(prefill) + dispatches(decode) == dispatches(all));
  CHECK(dispatches(decode) > 0);
  for (const auto& [kernel, t] : all.kernels) {
    INFO(kernel);
    CHECK(t.seconds >= 0);
  }
  CHECK(all.seconds() > 0);
}

TEST_CASE_METHOD(GpuTest, "decode ranked on the device gives the best logits of the whole row", "[gpu][model]") {
  TinyLlama tiny(spec_for(ElementType::F16, true, 2));
  const RunnerOptions o = runner_options(5, true, 256);
  LlamaRunner whole(dev(), tiny.weights, o);
  // The ranking runs where the host cannot map device memory too: its output is staged.
  vk::DeviceOptions discrete;
  discrete.discrete_memory = true;
  const std::unique_ptr<vk::Device> staged = open_second_device(discrete);
  LlamaRunner ranked(*staged, tiny.weights, o);
  const uint32_t k = GENERATE(1u, 7u, 64u);
  INFO("k = " << k);
  for (int32_t t : kTokens) {  // across three segment boundaries
    const std::vector<float> row = whole.forward(std::span<const int32_t>(&t, 1), false);
    const std::vector<ops::RankedLogit> got = ranked.forward_ranked(std::span<const int32_t>(&t, 1), k);
    std::vector<int32_t> ids(row.size());
    std::iota(ids.begin(), ids.end(), 0);
    std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) { return row[size_t(a)] > row[size_t(b)]; });
    REQUIRE(got.size() == std::min<size_t>(k, row.size()));
    for (size_t i = 0; i < got.size(); ++i) {
      CHECK(got[i].id == ids[i]);
      CHECK(got[i].logit == row[size_t(ids[i])]);
    }
    CHECK(ranked.last_logits() == row);
  }
  CHECK_THROWS_WITH(ranked.forward_ranked(kTokens, 65), Catch::Contains("1..64"));
  ranked.reset();
  CHECK_THROWS_WITH(ranked.last_logits(), Catch::Contains("no logits"));
}

}  // namespace
}  // namespace infini::test

namespace infini::test {
namespace {

// The passkey demo's shipped model (trained gates, memory on) over two and a half segments, so the
// memory is written and read: the device against the float64 reference. Under a device profile
// (INFINI_DEVICE_PROFILE) this is the demo model on that GPU's kernel choices and limits.
TEST_CASE_METHOD(GpuTest, "the passkey demo model runs as the float64 reference", "[gpu][model][passkey]") {
  model::GgufFile file{std::filesystem::path(INFINI_PASSKEY_MODEL)};
  const model::LlamaWeights weights = model::load_llama(file);
  REQUIRE(weights.config.has_infini_keys);
  RunnerOptions o;
  o.infini = weights.config.infini;
  const int64_t vocab = weights.config.vocab;
  std::vector<int32_t> ids(size_t(o.infini.segment * 5 / 2));
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = int32_t(3 + (i * 37 + i / 7) % size_t(vocab - 3));
  model::LlamaReference reference(weights, o.infini);
  const std::vector<double> want = reference.prefill(ids);
  LlamaRunner runner(dev(), weights, o);
  CHECK(err(runner.forward(ids, true), want) <= tolerance(weights.token_embd.type));
}

}  // namespace
}  // namespace infini::test
