// The memory's conventions where the public Infini-attention implementations disagree
// (docs/design.md §1.8): q/k into the memory before or after RoPE, the query-to-KV-head map of the
// memory, the gate's shape and sense, z's start and the denominator's eps. The device layer against
// the float64 reference under each, in whole segments and token by token on both kernel families;
// the GGUF keys that state them, read back and refused when unknown; and whole random models with
// each convention against the float64 model reference. Each convention also changes the output
// (a runtime that ignored a key would fail).
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "exec/llama_runner.hpp"
#include "formats/gguf_file.hpp"
#include "formats/gguf_writer.hpp"
#include "model/llama_loader.hpp"
#include "ops/infini_attention_layer.hpp"
#include "reference/llama_reference.hpp"
#include "reference/random_llama.hpp"
#include "support/attention_harness.hpp"
#include "support/gpu_fixture.hpp"
#include "util/nmse.hpp"

namespace infini::test {
namespace {

using ops::AttentionKernel;

template <typename A, typename B>
double err(const std::vector<A>& got, const std::vector<B>& want) {
  return nmse(std::span<const A>(got), std::span<const B>(want));
}

const char* positions_name(MemoryPositions p) { return p == MemoryPositions::Rotated ? "after RoPE" : "before RoPE"; }
const char* gate_name(GateShape g) {
  return g == GateShape::PerHead ? "per head" : g == GateShape::PerHeadValue ? "per head and column" : "per layer";
}

// A stream whose gates fit the options' gate shape.
StreamInputs stream_for(const AttentionShape& shape, const InfiniOptions& o, int64_t tokens, uint32_t seed) {
  StreamInputs in = random_stream(shape, tokens, seed);
  in.beta = random_floats(size_t(gate_values(shape, o.gate_shape)), seed + 9, -2.0f, 2.0f);
  return in;
}

}  // namespace

TEST_CASE_METHOD(GpuTest, "the layer matches the reference under every memory convention", "[gpu][layer][variants]") {
  const MemoryPositions positions = GENERATE(MemoryPositions::Unrotated, MemoryPositions::Rotated);
  const MemoryHeadMap head_map = GENERATE(MemoryHeadMap::Grouped, MemoryHeadMap::Modulo);
  const GateShape gate = GENERATE(GateShape::PerHead, GateShape::PerHeadValue, GateShape::PerLayer);
  const EpsMode eps_mode = GENERATE(EpsMode::Clamp, EpsMode::Add);
  const AttentionKernel kernel = GENERATE(AttentionKernel::Tiled, AttentionKernel::Rows);
  InfiniOptions o;
  o.segment = 8;
  o.update = gate == GateShape::PerLayer ? UpdateRule::Linear : UpdateRule::Delta;
  o.memory_positions = positions;
  o.memory_head_map = head_map;
  o.gate_shape = gate;
  o.gate_sign = head_map == MemoryHeadMap::Modulo ? GateSign::Local : GateSign::Memory;
  o.memory_eps_mode = eps_mode;
  if (eps_mode == EpsMode::Add) {  // dingo's z from 1/D, jlamprou's added eps (large, so that it shows)
    o.memory_eps = 20.0f;
    o.memory_z_init = 1.0f / 16.0f;
  }
  const AttentionShape shape{4, 2, 16, 16};
  const StreamInputs in = stream_for(shape, o, 29, 41);
  INFO(positions_name(positions) << ", head map " << (head_map == MemoryHeadMap::Modulo ? "modulo" : "group") << ", gate "
                                 << gate_name(gate) << ", eps " << (eps_mode == EpsMode::Add ? "added" : "clamped") << ", "
                                 << ops::attention_kernel_name(kernel));
  const ReferenceResult want = run_reference_layer(in, o, ElementType::F32);
  for (const int64_t chunk : {int64_t(0), int64_t(1), int64_t(3)}) {  // whole segments, decode, small pieces
    INFO("pieces of " << chunk);
    const StreamResult got = run_device_layer(in, o, ElementType::F32, chunk, kernel);
    CHECK(got.guard_violations == 0);
    CHECK(err(got.out, want.out) <= 1e-6);
    CHECK(err(got.memory, want.memory) <= 1e-6);
    CHECK(err(got.norm, want.norm) <= 1e-6);
  }
  // The convention matters: the reference with the memory's defaults gives another output.
  InfiniOptions plain = o;
  plain.memory_positions = MemoryPositions::Unrotated;
  plain.memory_head_map = MemoryHeadMap::Grouped;
  plain.memory_eps_mode = EpsMode::Clamp;
  plain.memory_eps = kMemoryEps;
  plain.memory_z_init = 0.0f;
  if (positions == MemoryPositions::Rotated || head_map == MemoryHeadMap::Modulo || eps_mode == EpsMode::Add)
    CHECK(err(run_reference_layer(in, plain, ElementType::F32).out, want.out) > 1e-4);
}

TEST_CASE_METHOD(GpuTest, "GPU decode reads a rotated memory with the rotated queries", "[gpu][layer][variants]") {
  // The fused decode pass reads the memory with raw queries; under rotated q/k it must not run.
  InfiniOptions o;
  o.segment = 8;
  o.memory_positions = MemoryPositions::Rotated;
  const StreamInputs in = stream_for({4, 2, 16, 16}, o, 21, 5);
  const StreamResult got = run_device_layer(in, o, ElementType::F32, 1, AttentionKernel::Tiled);
  CHECK_FALSE(got.fused_decode);
  CHECK(err(got.out, run_reference_layer(in, o, ElementType::F32).out) <= 1e-6);
}

TEST_CASE_METHOD(GpuTest, "the layer refuses conventions it cannot run, in one line", "[gpu][layer][variants]") {
  const AttentionShape shape{4, 2, 16, 16};
  InfiniOptions o;
  o.gate_shape = GateShape::PerHeadValue;
  CHECK_THROWS_WITH(ops::InfiniAttentionLayer(device(), shape, o, ElementType::F32, std::vector<float>(4, 0.0f)),
                    Catch::Contains("beta has 4 values, expected 64 (Hq x Dv)"));
  o.gate_shape = GateShape::PerHead;
  o.memory_positions = MemoryPositions::Rotated;
  CHECK_THROWS_WITH(ops::InfiniAttentionLayer(device(), shape, o, ElementType::F16, std::vector<float>(4, 0.0f)),
                    Catch::Contains("needs f32 inputs"));
  o.memory_positions = MemoryPositions::Unrotated;
  o.memory_eps = 0.0f;
  CHECK_THROWS_WITH(ops::InfiniAttentionLayer(device(), shape, o, ElementType::F32, std::vector<float>(4, 0.0f)),
                    Catch::Contains("memory eps must be a positive"));
}

namespace {

// A random model with every convention away from its default, as a converter would write it.
model::RandomLlamaOptions variant_model(GateShape gate) {
  model::RandomLlamaOptions o;
  o.vocab = 200;
  o.embd = 64;
  o.heads = 4;
  o.heads_kv = 2;
  o.ffn = 96;
  o.segment = 5;
  o.update = UpdateRule::Linear;
  o.memory_positions = MemoryPositions::Rotated;
  o.memory_head_map = MemoryHeadMap::Modulo;
  o.gate_shape = gate;
  o.gate_sense = GateSign::Local;
  o.memory_z_init = 1.0f / 16.0f;
  o.memory_eps = 1e-3f;
  o.memory_eps_mode = EpsMode::Add;
  return o;
}

// What variant_model() states, written down here rather than read from the file.
InfiniOptions variant_options(const model::RandomLlamaOptions& r, const rope::RopeConfig& rope) {
  InfiniOptions o;
  o.segment = r.segment;
  o.update = r.update;
  o.rope = rope;
  o.memory_positions = r.memory_positions;
  o.memory_head_map = r.memory_head_map;
  o.gate_shape = r.gate_shape;
  o.gate_sign = r.gate_sense;
  o.memory_z_init = r.memory_z_init;
  o.memory_eps = r.memory_eps;
  o.memory_eps_mode = r.memory_eps_mode;
  return o;
}

const std::vector<int32_t> kIds = {1, 199, 17, 42, 5, 5, 100, 3, 150, 77, 8, 9, 10, 11, 12, 13};

}  // namespace

TEST_CASE_METHOD(GpuTest, "a file's memory conventions run as the float64 model reference", "[gpu][model][gguf][variants]") {
  const GateShape gate = GENERATE(GateShape::PerHead, GateShape::PerHeadValue, GateShape::PerLayer);
  INFO("gate " << gate_name(gate));
  const model::RandomLlamaOptions r = variant_model(gate);
  const std::vector<std::byte> bytes = model::random_llama(r).to_bytes();
  const model::GgufFile file(bytes, "variant.gguf");
  const model::LlamaWeights weights = model::load_llama(file);
  const InfiniOptions& read = weights.config.infini;
  const InfiniOptions stated = variant_options(r, weights.config.rope);
  CHECK(read.memory_positions == stated.memory_positions);
  CHECK(read.memory_head_map == stated.memory_head_map);
  CHECK(read.gate_shape == stated.gate_shape);
  CHECK(read.gate_sign == stated.gate_sign);
  CHECK(read.memory_z_init == stated.memory_z_init);
  CHECK(read.memory_eps == stated.memory_eps);
  CHECK(read.memory_eps_mode == stated.memory_eps_mode);
  CHECK(read.update == UpdateRule::Linear);

  const std::vector<double> want = model::LlamaReference(weights, stated).prefill(kIds);
  model::RunnerOptions o;
  o.infini = read;
  model::LlamaRunner prefill(dev(), weights, o);
  CHECK(err(prefill.forward(kIds, true), want) <= 1e-5);
  model::LlamaRunner decode(dev(), weights, o);
  std::vector<float> rows;
  for (const int32_t id : kIds) {
    const std::vector<float> row = decode.forward(std::span<const int32_t>(&id, 1), true);
    rows.insert(rows.end(), row.begin(), row.end());
  }
  CHECK(err(rows, want) <= 1e-5);
  // The same weights under the defaults (gates widened per head) are another model.
  InfiniOptions plain = stated;
  plain.memory_positions = MemoryPositions::Unrotated;
  plain.memory_head_map = MemoryHeadMap::Grouped;
  plain.gate_sign = GateSign::Memory;
  plain.memory_z_init = 0.0f;
  plain.memory_eps = kMemoryEps;
  plain.memory_eps_mode = EpsMode::Clamp;
  CHECK(err(prefill.forward(kIds, true), model::LlamaReference(weights, plain).prefill(kIds)) > 1e-3);
}

TEST_CASE("the memory's GGUF keys: unknown values and misshapen gates are refused in one line", "[gguf][variants]") {
  struct Case {
    const char* name;
    std::function<void(model::GgufWriter&)> edit;
    const char* message;
  };
  const Case cases[] = {
      {"rope", [](model::GgufWriter& w) { w.set_string("infini.memory_rope", "during"); },
       "key 'infini.memory_rope' is 'during' (expected before or after)"},
      {"head map", [](model::GgufWriter& w) { w.set_string("infini.memory_head_map", "random"); },
       "(expected group or modulo)"},
      {"gate shape", [](model::GgufWriter& w) { w.set_string("infini.gate_shape", "value"); },
       "(expected head or head_value or layer)"},
      {"gate sense", [](model::GgufWriter& w) { w.set_string("infini.gate_sense", "both"); },
       "(expected memory or local)"},
      {"eps mode", [](model::GgufWriter& w) { w.set_string("infini.memory_eps_mode", "sqrt"); },
       "(expected clamp or add)"},
      {"eps 0", [](model::GgufWriter& w) { w.set_f32("infini.memory_eps", 0.0f); },
       "key 'infini.memory_eps' is 0 (must be 1e-30 to 1)"},
      {"negative z", [](model::GgufWriter& w) { w.set_f32("infini.memory_z_init", -1.0f); },
       "key 'infini.memory_z_init' is -1"},
      {"gate per layer on per-head gates", [](model::GgufWriter& w) { w.set_string("infini.gate_shape", "layer"); },
       "attn_mem_gate"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    model::RandomLlamaOptions r;
    r.vocab = 64;
    model::GgufWriter w = model::random_llama(r);
    c.edit(w);
    const std::vector<std::byte> bytes = w.to_bytes();
    const model::GgufFile file(bytes, "bad.gguf");
    CHECK_THROWS_WITH(model::load_llama(file), Catch::Contains(c.message));
  }
}

}  // namespace infini::test
