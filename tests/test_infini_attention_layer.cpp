// The device Infini-attention layer against the float64 reference: every convention, odd
// segment and stream lengths, GQA ratios, head dims, RoPE variants and layouts, f32 and f16
// inputs; plus the streaming invariants.
#include "support/attention_harness.hpp"
#include "support/gpu_fixture.hpp"
#include "ops/host_tensor.hpp"
#include "ops/infini_attention_layer.hpp"
#include "spirv/attention_decode_v32_fresh_merge_gate.h"
#include "util/nmse.hpp"
#include "vk/device.hpp"
#include "vk/pipeline_cache.hpp"

namespace infini::test {
namespace {

using ops::AttentionKernel;

double tolerance(ElementType t) { return t == ElementType::F16 ? 1e-4 : 1e-6; }
// The matrix kernels round Q, K, P and V to f16 (tests/test_attention_coopmat.cpp).
double tolerance(ElementType t, AttentionKernel ran) {
  const bool f16_math = ran == AttentionKernel::Matrix || ran == AttentionKernel::MatrixEmulated;
  return f16_math ? kMatrixAttentionTolerance : tolerance(t);
}

template <typename A, typename B>
double err(const std::vector<A>& got, const std::vector<B>& want) {
  return nmse(std::span<const A>(got), std::span<const B>(want));
}

const char* kernel_name(AttentionKernel k) { return ops::attention_kernel_name(k); }

void check_against_reference(const StreamInputs& in, const InfiniOptions& o, ElementType t, int64_t chunk = 0,
                             AttentionKernel kernel = AttentionKernel::Auto) {
  const StreamResult got = run_device_layer(in, o, t, chunk, kernel);
  const ReferenceResult want = run_reference_layer(in, o, t);
  INFO("ran " << kernel_name(got.kernel));
  CHECK(got.guard_violations == 0);
  CHECK(err(got.out, want.out) <= tolerance(t, got.kernel));
  if (o.memory) {
    CHECK(err(got.memory, want.memory) <= tolerance(t));
    CHECK(err(got.norm, want.norm) <= tolerance(t));
  }
}

InfiniOptions options_with(int64_t segment) {
  InfiniOptions o;
  o.segment = segment;
  o.rope.base = 10000;
  return o;
}

TEST_CASE_METHOD(GpuTest, "layer matches the reference for odd segment and stream lengths", "[gpu][layer]") {
  const ElementType t = GENERATE(ElementType::F32, ElementType::F16);
  const int64_t n = GENERATE(1, 17, 64);
  const AttentionKernel kernel = GENERATE(AttentionKernel::Tiled, AttentionKernel::Rows);
  const AttentionShape shape{4, 2, 64, 64};
  for (int64_t tokens : {int64_t(1), n - 1, n + 1, 3 * n + 7}) {
    if (tokens < 1) continue;
    INFO("N " << n << " T " << tokens << " " << element_name(t) << " " << kernel_name(kernel));
    check_against_reference(random_stream(shape, tokens, uint32_t(n * 131 + tokens)), options_with(n), t, 0, kernel);
  }
}

TEST_CASE_METHOD(GpuTest, "layer matches the reference with a long segment", "[gpu][layer]") {
  const ElementType t = GENERATE(ElementType::F32, ElementType::F16);
  const AttentionKernel kernel = GENERATE(AttentionKernel::Tiled, AttentionKernel::Rows);
  INFO(element_name(t) << " " << kernel_name(kernel));
  check_against_reference(random_stream({2, 1, 64, 64}, 3 * 512 + 7, 5), options_with(512), t, 0, kernel);
}

TEST_CASE_METHOD(GpuTest, "layer matches the reference for every GQA ratio and head dim", "[gpu][layer]") {
  const int heads_kv = GENERATE(8, 4, 2, 1);
  const int head_dim = GENERATE(64, 80, 96, 128, 256);
  const AttentionKernel kernel = GENERATE(AttentionKernel::Tiled, AttentionKernel::Rows);
  INFO("Hkv " << heads_kv << " D " << head_dim << " " << kernel_name(kernel));
  const AttentionShape shape{8, heads_kv, head_dim, head_dim};
  check_against_reference(random_stream(shape, 45, uint32_t(heads_kv * 1000 + head_dim)), options_with(20), ElementType::F32,
                          0, kernel);
}

TEST_CASE_METHOD(GpuTest, "the rows kernel needs head dims that are multiples of 4; auto falls back", "[gpu][layer]") {
  const AttentionShape odd{4, 2, 30, 18};
  const std::vector<float> beta(4, 0.0f);
  CHECK_THROWS_WITH(ops::InfiniAttentionLayer(device(), odd, options_with(8), ElementType::F32, beta, AttentionKernel::Rows),
                    Catch::Contains("multiples of 4"));
  ops::InfiniAttentionLayer fallback(device(), odd, options_with(8), ElementType::F32, beta);
  CHECK(fallback.attention_kernel() == AttentionKernel::Tiled);
  check_against_reference(random_stream(odd, 21, 9), options_with(8), ElementType::F16);
}

TEST_CASE_METHOD(GpuTest, "layer matches the reference for a value dim that differs from the head dim", "[gpu][layer]") {
  check_against_reference(random_stream({4, 2, 96, 40}, 50, 77), options_with(16), ElementType::F16);
}

TEST_CASE_METHOD(GpuTest, "layer matches the reference for every convention", "[gpu][layer]") {
  const UpdateRule update = GENERATE(UpdateRule::Linear, UpdateRule::Delta);
  const FirstSegment first = GENERATE(FirstSegment::Mix, FirstSegment::Local);
  const GateSign gate = GENERATE(GateSign::Memory, GateSign::Local);
  const bool memory = GENERATE(true, false);
  InfiniOptions o = options_with(16);
  o.update = update;
  o.first_segment = first;
  o.gate_sign = gate;
  o.memory = memory;
  INFO("update " << int(update) << " first " << int(first) << " gate " << int(gate) << " memory " << memory);
  check_against_reference(random_stream({4, 2, 64, 64}, 53, 11), o, ElementType::F32);
}

TEST_CASE_METHOD(GpuTest, "layer matches the reference for every RoPE variant and layout", "[gpu][layer][rope]") {
  const rope::RopeType type = GENERATE(rope::RopeType::None, rope::RopeType::Default, rope::RopeType::Linear,
                                       rope::RopeType::Ntk, rope::RopeType::Dynamic, rope::RopeType::Yarn,
                                       rope::RopeType::Llama3);
  const rope::RopeLayout layout = GENERATE(rope::RopeLayout::Neox, rope::RopeLayout::Interleaved);
  const int rotary_dim = GENERATE(0, 32);
  InfiniOptions o = options_with(40);
  o.rope.type = type;
  o.rope.layout = layout;
  o.rope.rotary_dim = rotary_dim;
  o.rope.factor = 4;
  o.rope.original_max_position_embeddings = 16;  // below the segment, so dynamic scales
  o.rope.base = 500000;
  INFO("rope " << rope::rope_type_name(type) << " " << rope::rope_layout_name(layout) << " rotary " << rotary_dim);
  check_against_reference(random_stream({4, 2, 64, 64}, 90, 21), o, ElementType::F32);
}

TEST_CASE_METHOD(GpuTest, "GPU decode splits the keys over workgroups and matches the reference", "[gpu][layer]") {
  // Token by token with the tiled family: attention_decode.comp and its merge. On a CPU driver
  // 16 query heads make 4 splits; a segment of 300 keys gives them 2 blocks of 64 keys each (the
  // last ones partly or wholly past the position until the segment fills); Dv = 80 gives some
  // lanes two output columns; the stream crosses a segment boundary. The merge also reads and
  // gates the memory: both gate signs, and the first segment mixed with M = 0 or left local.
  const ElementType t = GENERATE(ElementType::F32, ElementType::F16);
  const auto [first, gate] = GENERATE(std::pair{FirstSegment::Mix, GateSign::Memory},
                                      std::pair{FirstSegment::Local, GateSign::Local});
  INFO(element_name(t) << " first " << int(first) << " gate " << int(gate));
  InfiniOptions o = options_with(300);
  o.first_segment = first;
  o.gate_sign = gate;
  check_against_reference(random_stream({16, 4, 32, 80}, 300 + 21, 77), o, t, 1, AttentionKernel::Tiled);
}

TEST_CASE_METHOD(GpuTest, "GPU decode does its RoPE, cache append and merge in the attention's pass",
                 "[gpu][layer][rope]") {
  // attention_decode.comp's fresh variants rotate the query and the piece's own keys as they read
  // them, append the piece to the caches themselves and merge the split keys in the last
  // workgroup of each head: pieces of 1 and 2 tokens (a segment of 23 ends some pieces early),
  // both RoPE layouts (interleaved with a partial rotary dim), f32 and f16 inputs, the first
  // segment local and mixed (plain and gated merges), against the float64 layer and against the
  // separate steps. M and z after the stream come from the raw K and V the pass appended.
  const ElementType t = GENERATE(ElementType::F32, ElementType::F16);
  const int64_t chunk = GENERATE(1, 2);
  const rope::RopeLayout layout = GENERATE(rope::RopeLayout::Neox, rope::RopeLayout::Interleaved);
  InfiniOptions o = options_with(23);
  o.first_segment = layout == rope::RopeLayout::Interleaved ? FirstSegment::Local : FirstSegment::Mix;
  o.rope.layout = layout;
  o.rope.rotary_dim = layout == rope::RopeLayout::Interleaved ? 16 : 0;
  INFO(element_name(t) << " pieces of " << chunk << " " << rope::rope_layout_name(layout));
  const StreamInputs in = random_stream({8, 2, 32, 48}, 2 * 23 + 9, 19);
  const StreamResult fused = run_device_layer(in, o, t, chunk, AttentionKernel::Tiled);
  const StreamResult apart = run_device_layer(in, o, t, chunk, AttentionKernel::Tiled, false);
  const ReferenceResult want = run_reference_layer(in, o, t);
  CHECK(fused.fused_decode);
  CHECK_FALSE(apart.fused_decode);
  CHECK(fused.guard_violations == 0);
  CHECK(err(fused.out, want.out) <= tolerance(t));
  CHECK(err(fused.memory, want.memory) <= tolerance(t));
  CHECK(err(fused.norm, want.norm) <= tolerance(t));
  CHECK(err(fused.out, apart.out) <= 1e-12);
  CHECK(err(fused.memory, apart.memory) <= 1e-12);
}

TEST_CASE_METHOD(GpuTest, "GPU decode keeps RoPE and the append apart for f16 rows of an odd length", "[gpu][layer]") {
  // The fused pass copies f16 rows as whole words: a row of V of 17 values would start mid-word.
  const StreamInputs in = random_stream({2, 1, 30, 17}, 20, 23);
  const StreamResult got = run_device_layer(in, options_with(9), ElementType::F16, 1, AttentionKernel::Tiled);
  CHECK_FALSE(got.fused_decode);
  CHECK(err(got.out, run_reference_layer(in, options_with(9), ElementType::F16).out) <= tolerance(ElementType::F16));
  CHECK(run_device_layer(in, options_with(9), ElementType::F32, 1, AttentionKernel::Tiled).fused_decode);
}

TEST_CASE_METHOD(GpuTest, "a device that binds fewer storage buffers keeps decode's steps apart", "[gpu][layer][limits]") {
  // The fused decode binds 14 storage buffers; a device allowing fewer in one stage refuses the
  // kernel with one line naming the limit, and the layer keeps the separate steps there.
  auto small = open_second_device({.disk_pipeline_cache = false, .max_storage_buffers = 12});
  const vk::KernelSource wide{"attention_decode_v32_fresh_merge_gate", spirv::attention_decode_v32_fresh_merge_gate, 14, 56};
  CHECK_THROWS_WITH(small->pipelines().get(wide), Catch::Contains("binds 14 storage buffers") &&
                                                      Catch::Contains("maxPerStageDescriptorStorageBuffers 12"));
  const std::vector<float> beta(4, 0.0f);
  const ops::InfiniAttentionLayer there(*small, {4, 2, 64, 64}, options_with(8), ElementType::F32, beta,
                                        AttentionKernel::Tiled);
  const ops::InfiniAttentionLayer here(device(), {4, 2, 64, 64}, options_with(8), ElementType::F32, beta,
                                       AttentionKernel::Tiled);
  CHECK_FALSE(there.fuses_decode_steps());
  CHECK(here.fuses_decode_steps());
}

TEST_CASE_METHOD(GpuTest, "a stream gives the same output in one call, per segment and per token", "[gpu][layer]") {
  // The f32 kernels, where splitting changes only the order of sums: the matrix ones round to f16
  // and hand single tokens to the f32 decode kernel.
  const AttentionKernel kernel = device().caps().is_software() ? AttentionKernel::Rows : AttentionKernel::Tiled;
  const StreamInputs in = random_stream({4, 1, 64, 64}, 41, 31);
  const InfiniOptions o = options_with(12);
  const StreamResult whole = run_device_layer(in, o, ElementType::F32, 0, kernel);
  const StreamResult pieces = run_device_layer(in, o, ElementType::F32, 5, kernel);
  const StreamResult tokens = run_device_layer(in, o, ElementType::F32, 1, kernel);
  CHECK(err(pieces.out, whole.out) <= 1e-12);
  CHECK(err(tokens.out, whole.out) <= 1e-12);
  CHECK(err(tokens.memory, whole.memory) <= 1e-12);
}

TEST_CASE_METHOD(GpuTest, "device memory does not grow with the stream", "[gpu][layer]") {
  vk::Device& dev = device();
  const AttentionShape shape{2, 1, 64, 64};
  const InfiniOptions o = options_with(16);
  const StreamInputs seg = random_stream(shape, 16, 51);
  dev.reset_peak();
  const uint64_t before = dev.allocated_bytes();
  ops::InfiniAttentionLayer layer(dev, shape, o, ElementType::F32, seg.beta);
  vk::Buffer q = ops::upload_tensor(dev, seg.q, ElementType::F32, "Q"), k = ops::upload_tensor(dev, seg.k, ElementType::F32, "K"),
             v = ops::upload_tensor(dev, seg.v, ElementType::F32, "V");
  vk::Buffer out(dev, 16 * 2 * 64 * 4, vk::MemoryUse::DeviceLocal, "out");
  vk::CommandStream stream(dev);
  uint64_t peak_after_two = 0;
  for (int segment = 0; segment < 40; ++segment) {
    stream.begin();
    layer.record(stream, {&q, 0}, {&k, 0}, {&v, 0}, out, 16);
    stream.end();
    stream.submit_and_wait();
    if (segment == 1) peak_after_two = dev.peak_allocated_bytes();
  }
  CHECK(layer.segments_written() == 40);
  CHECK(dev.peak_allocated_bytes() == peak_after_two);
  CHECK(dev.allocated_bytes() > before);
}

}  // namespace
}  // namespace infini::test
