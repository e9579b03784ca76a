// Segment attention on matrix units (attention_coopmat.comp) against the float64 reference of the
// whole layer: through the emulated fragments on any device with f16 arithmetic, and on the
// cooperative matrices themselves where the device has them (reported as skipped where not).
#include "support/attention_harness.hpp"
#include "support/gpu_fixture.hpp"
#include "ops/infini_attention_layer.hpp"
#include "ops/matrix_units.hpp"
#include "util/nmse.hpp"

namespace infini::test {
namespace {

using ops::AttentionKernel;

InfiniOptions segment_of(int64_t n, UpdateRule rule = UpdateRule::Linear) {
  InfiniOptions o;
  o.segment = n;
  o.update = rule;
  o.rope.base = 10000;
  return o;
}

// Shapes: GQA 2 at D 64; D = Dv = 32 (one pass of value columns); D 48 with Dv 96 (three passes,
// MHA). Segments of 17, 70 (two workgroups of 64 query rows, the second nearly empty) and 100
// keys (key tiles of 32, the last partial), and 600 (walks of up to 19 key tiles: a driver bug
// with packed tiles once showed only in long loops); streams past three segments; whole segments and
// pieces of 13 (queries that start mid-segment, key tiles that start before them); the linear
// and the delta rule. The memory kernels follow the attention's (ops/memory_kernels.hpp).
void check_matrix_attention(AttentionKernel kernel) {
  struct Case {
    AttentionShape shape;
    int64_t segment, chunk;
    UpdateRule rule = UpdateRule::Linear;
  };
  const Case cases[] = {{{4, 2, 64, 64}, 70, 0},  {{4, 2, 64, 64}, 100, 13}, {{2, 2, 32, 32}, 17, 0},
                        {{3, 3, 48, 96}, 70, 13}, {{4, 1, 64, 64}, 17, 5},
                        {{4, 2, 64, 64}, 70, 13, UpdateRule::Delta}, {{2, 1, 32, 32}, 600, 0}};
  for (const ElementType t : {ElementType::F32, ElementType::F16})
    for (const Case& c : cases) {
      INFO("Hq " << c.shape.heads_q << " Hkv " << c.shape.heads_kv << " D " << c.shape.head_dim << " Dv "
                 << c.shape.value_dim << " N " << c.segment << " pieces " << c.chunk << " " << element_name(t)
                 << (c.rule == UpdateRule::Delta ? " delta" : " linear"));
      const StreamInputs in = random_stream(c.shape, 3 * c.segment + 7, uint32_t(c.segment * 7 + c.chunk));
      const StreamResult got = run_device_layer(in, segment_of(c.segment, c.rule), t, c.chunk, kernel);
      const ReferenceResult want = run_reference_layer(in, segment_of(c.segment, c.rule), t);
      CHECK(got.kernel == kernel);
      CHECK(got.memory_kernel == (kernel == AttentionKernel::Matrix ? ops::MemoryKernel::Matrix
                                                                     : ops::MemoryKernel::MatrixEmulated));
      CHECK(got.guard_violations == 0);
      const double e = nmse(std::span<const float>(got.out), std::span<const double>(want.out));
      INFO("nmse " << e);
      CHECK(e <= kMatrixAttentionTolerance);
      CHECK(nmse(std::span<const float>(got.memory), std::span<const double>(want.memory)) <= 1e-4);
    }
}

TEST_CASE_METHOD(GpuTest, "coopmat-emulated attention: the matrix kernel's tiling against the float64 reference",
                 "[gpu][layer]") {
  if (!device().caps().shader_float16) {
    WARN("skipped: " << device().caps().name << " has no shaderFloat16");  // reported, not counted as a pass
    return;
  }
  check_matrix_attention(AttentionKernel::MatrixEmulated);
}

TEST_CASE_METHOD(GpuTest, "coopmat attention on matrix units against the float64 reference", "[gpu][layer]") {
  const std::vector<float> beta(4, 0.0f);
  if (!ops::supports_matrix_units(device().caps())) {
    WARN("skipped: " << device().caps().name << " has no cooperative matrices infini can use");  // reported, not a pass
    CHECK_THROWS_WITH(ops::InfiniAttentionLayer(device(), {4, 2, 64, 64}, segment_of(16), ElementType::F32, beta,
                                                AttentionKernel::Matrix),
                      Catch::Contains("cooperative matrices"));
    return;
  }
  check_matrix_attention(AttentionKernel::Matrix);
}

TEST_CASE_METHOD(GpuTest, "the matrix attention takes D a multiple of 16 and Dv of 32 that fit; auto falls back",
                 "[gpu][layer]") {
  const std::vector<float> beta(4, 0.0f);
  if (device().caps().shader_float16) {
    CHECK_THROWS_WITH(ops::InfiniAttentionLayer(device(), {4, 2, 40, 64}, segment_of(16), ElementType::F32, beta,
                                                AttentionKernel::MatrixEmulated),
                      Catch::Contains("D a multiple of 16 and Dv of 32"));
    CHECK_THROWS_WITH(ops::InfiniAttentionLayer(device(), {4, 2, 64, 48}, segment_of(16), ElementType::F32, beta,
                                                AttentionKernel::MatrixEmulated),
                      Catch::Contains("D a multiple of 16 and Dv of 32"));
    if (device().caps().max_shared_memory_bytes < 44032)  // D 128 needs 43 KiB
      CHECK_THROWS_WITH(ops::InfiniAttentionLayer(device(), {4, 2, 128, 128}, segment_of(16), ElementType::F32, beta,
                                                  AttentionKernel::MatrixEmulated),
                        Catch::Contains("maxComputeSharedMemorySize"));
  }
  const ops::InfiniAttentionLayer odd(device(), {4, 2, 40, 64}, segment_of(16), ElementType::F32, beta);
  CHECK(odd.attention_kernel() != AttentionKernel::Matrix);
  const ops::InfiniAttentionLayer even(device(), {4, 2, 64, 64}, segment_of(16), ElementType::F32, beta);
  CHECK((even.attention_kernel() == AttentionKernel::Matrix) == auto_takes_matrix_units(device().caps()));
}

}  // namespace
}  // namespace infini::test
