// The matrix-unit matmul (matmul_coopmat.comp): its tiling, staging, f16 conversion, bounds and
// both store paths through the emulated fragments on any device with f16 arithmetic; the same on
// the cooperative matrices themselves where the device has them (reported as skipped where not).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include "support/gpu_fixture.hpp"
#include "support/matmul_check.hpp"
#include "ops/infini_attention_layer.hpp"
#include "ops/matrix_units.hpp"
#include "spirv/matmul_coopmat_a32_b16.h"
#include "spirv/matmul_coopmat_a32_b16_emulated.h"
#include "vk/capabilities.hpp"
#include "vk/device.hpp"
#include "vk/spirv_requirements.hpp"

namespace infini::test {
namespace {

struct Case {
  uint32_t m, n, k;
  bool packed;  // C packed at a 16-byte offset: tiles wholly inside it go straight from the fragments
};

// Both operands are rounded to f16 by the kernel, so the reference rounds them too (to nearest,
// as GPUs convert) and only the f32 sums' rounding is left: about 1e-13 against the bound of
// 1e-9, which f16 sums (1e-7 at these K) or a lost k step would exceed. Shapes: more rows than the
// vector kernel takes; 128-row and 128-column tiles with partial edges; K ending mid-step (32
// values per step) after 31 whole steps (f16: Mesa 22.3's lavapipe got vector-typed shared tiles wrong
// only after about 15); whole tiles stored directly beside partial ones stored through shared memory
// (and a packed C whose stride is no multiple of 4); and calls that fall back to the tiled kernel
// (K not a multiple of 8), compared with the exact reference.
void check_matrix_kernel(ops::MatmulKernel kernel, ElementType ta, ElementType tb) {
  const uint32_t block = element_traits(tb).block_elements;
  const uint32_t u = block > 1 ? block : 8;  // K's unit
  const uint32_t k_mid = block > 1 ? 3 * u : 1000u;
  const Case cases[] = {{9, 1, u, false},          {130, 200, k_mid, false}, {256, 128, 5 * u, true},
                        {128, 256, 9 * u, false},  {140, 256, 3 * u, true},  {140, 135, 2 * u, true}};
  for (const Case& c : cases) {
    INFO(c.m << "x" << c.n << "x" << c.k << " A " << element_name(ta) << " B " << element_name(tb) << " "
              << ops::matmul_kernel_name(kernel) << (c.packed ? ", C packed" : ""));
    MatmulLayout layout;
    layout.f16_operands = true;
    if (c.packed) layout = {68, 0, true};
    const MatmulResult r = run_matmul(c.m, c.n, c.k, ta, tb, {}, c.m * 3 + c.n + c.k, kernel, layout);
    CHECK(r.nmse <= 1e-9);
    CHECK(r.guard_violations == 0);
  }
  if (block == 1) {  // K not a multiple of 8: the tiled kernel, in f32
    INFO("fallback to the tiled kernel, A " << element_name(ta));
    const MatmulResult r = run_matmul(37, 150, 13, ta, tb, {}, 77, kernel);
    CHECK(r.nmse <= 1e-9);
    CHECK(r.guard_violations == 0);
  }
}

#define MATRIX_TYPE_PAIRS                                                                                   \
  std::pair{ElementType::F32, ElementType::F16}, std::pair{ElementType::F16, ElementType::F16},            \
      std::pair{ElementType::F32, ElementType::Q8_0}, std::pair{ElementType::F32, ElementType::Q4_0},      \
      std::pair{ElementType::F32, ElementType::Q4_K}, std::pair{ElementType::F32, ElementType::Q5_K},      \
      std::pair{ElementType::F32, ElementType::Q6_K}, std::pair{ElementType::F32, ElementType::BF16},     \
      std::pair{ElementType::F32, ElementType::Q4_1}, std::pair{ElementType::F32, ElementType::Q5_0},      \
      std::pair{ElementType::F32, ElementType::Q5_1}, std::pair{ElementType::F32, ElementType::IQ4_NL},    \
      std::pair{ElementType::F32, ElementType::IQ4_XS}, std::pair{ElementType::F32, ElementType::Q2_K},    \
      std::pair{ElementType::F32, ElementType::Q3_K}

TEST_CASE_METHOD(GpuTest, "coopmat-emulated: the matrix kernel's tiling against the float64 reference", "[gpu][matmul]") {
  if (!device().caps().shader_float16) {
    WARN("skipped: " << device().caps().name << " has no shaderFloat16");  // reported, not counted as a pass
    CHECK_THROWS_WITH(ops::Matmul(device(), ElementType::F32, ElementType::F16, {}, ops::MatmulKernel::MatrixEmulated),
                      Catch::Contains("shaderFloat16"));
    return;
  }
  const auto [ta, tb] = GENERATE(MATRIX_TYPE_PAIRS);
  check_matrix_kernel(ops::MatmulKernel::MatrixEmulated, ta, tb);
}

// Other tilings (what `infini bench --matrix-tiles` times): a workgroup of 2 warps with 2 x 3
// fragments each and 16 values of k per step; one with words per tile that do not divide among
// its invocations (48 values of k: 6 words per row) and a single fragment per warp in one
// direction; both again with two tile buffers (K of 488 and 768: steps of both parities, and a
// last partial one). Bad tilings are refused with the reason; shared memory past the device's
// limit by the pipeline.
TEST_CASE_METHOD(GpuTest, "coopmat-emulated: other tilings against the float64 reference, bad ones refused",
                 "[gpu][matmul]") {
  if (!device().caps().shader_float16) {
    WARN("skipped: " << device().caps().name << " has no shaderFloat16");  // reported, not counted as a pass
    return;
  }
  for (const ops::MatrixTiles tiles : {ops::MatrixTiles{1, 2, 2, 3, 16}, ops::MatrixTiles{2, 1, 1, 3, 48},
                                       ops::MatrixTiles{1, 2, 2, 3, 16, false, 2},
                                       ops::MatrixTiles{2, 1, 1, 3, 48, false, 2}}) {
    for (const auto& [ta, tb] : {std::pair{ElementType::F32, ElementType::F16}, std::pair{ElementType::F32, ElementType::Q4_K}}) {
      const uint32_t k = tb == ElementType::F16 ? 488 : 768;
      INFO("tiles " << tiles.name() << " B " << element_name(tb));
      MatmulLayout layout;
      layout.f16_operands = true;
      const MatmulResult r = run_matmul(70, 100, k, ta, tb, {}, 5, ops::MatmulKernel::MatrixEmulated, layout, tiles);
      CHECK(r.nmse <= 1e-9);
      CHECK(r.guard_violations == 0);
    }
  }
  // auto: the default tiling, and the small one for calls whose grid of it would not fill a GPU.
  {
    const ops::Matmul adapts(device(), ElementType::F32, ElementType::F16, {}, ops::MatmulKernel::MatrixEmulated);
    const ops::Matmul fixed(device(), ElementType::F32, ElementType::F16, {}, ops::MatmulKernel::MatrixEmulated,
                            ops::MatrixTiles{});
    const auto call = [](uint32_t m, uint32_t n) { return ops::MatmulArgs{m, n, 64}; };
    CHECK(adapts.matrix_tiles() == ops::kAutoMatrixTiles);
    CHECK(adapts.matrix_tiles_for_call(call(512, 2048)) == ops::kSmallMatrixTiles);  // 64 workgroups of 128 x 128
    CHECK(adapts.matrix_tiles_for_call(call(1024, 2048)) == ops::kAutoMatrixTiles);  // 128
    CHECK(adapts.matrix_tiles_for_call(call(1024, 1920)) == ops::kSmallMatrixTiles);  // 8 x 15
    CHECK(fixed.matrix_tiles_for_call(call(512, 2048)) == ops::MatrixTiles{});
    MatmulLayout layout;
    layout.f16_operands = true;
    const MatmulResult r = run_matmul(70, 100, 488, ElementType::F32, ElementType::F16, {}, 5,
                                      ops::MatmulKernel::MatrixEmulated, layout, ops::kAutoMatrixTiles);
    CHECK(r.nmse <= 1e-9);
    CHECK(r.guard_violations == 0);
  }
  CHECK(ops::matrix_tiles_named("auto") == ops::kAutoMatrixTiles);
  CHECK(ops::kAutoMatrixTiles.name() == "auto");
  CHECK(ops::matrix_tiles_named("2x2x4x4x32") == ops::MatrixTiles{});
  CHECK(ops::matrix_tiles_named(ops::MatrixTiles{1, 2, 2, 3, 16}.name()) == ops::MatrixTiles{1, 2, 2, 3, 16});
  CHECK(ops::MatrixTiles{1, 2, 2, 3, 16, false, 2}.name() == "1x2x2x3x16x2");
  CHECK(ops::matrix_tiles_named("1x2x2x3x16x2") == ops::MatrixTiles{1, 2, 2, 3, 16, false, 2});
  for (const char* bad : {"2x2x4x4", "2x2x4x4x32x1", "2x2x4x4x32x3", "2x2x0x4x32", "2x2x4x4x", "ax2x4x4x32", ""})
    CHECK_FALSE(ops::matrix_tiles_named(bad).has_value());
  const auto make = [&](ops::MatrixTiles t) {
    ops::Matmul(device(), ElementType::F32, ElementType::F16, {}, ops::MatmulKernel::MatrixEmulated, t);
  };
  CHECK_THROWS_WITH(make({2, 2, 4, 4, 24}), Catch::Contains("multiple of 16"));
  CHECK_THROWS_WITH(make({64, 1, 1, 1, 16}), Catch::Contains("maxComputeWorkGroupInvocations"));
  CHECK_THROWS_WITH(make({2, 2, 8, 8, 128}), Catch::Contains("shared memory"));
  CHECK_THROWS_WITH(make({2, 2, 4, 4, 32, false, 3}), Catch::Contains("1 or 2 tile buffers"));
}

TEST_CASE_METHOD(GpuTest, "coopmat on matrix units against the float64 reference", "[gpu][matmul]") {
  const vk::Capabilities& caps = device().caps();
  if (!ops::supports_matrix_units(caps)) {
    WARN("skipped: " << caps.name << " has no cooperative matrices infini can use");  // reported, not a pass
    CHECK_THROWS_WITH(ops::Matmul(device(), ElementType::F32, ElementType::F16, {}, ops::MatmulKernel::Matrix),
                      Catch::Contains("cooperative matrices"));
    return;
  }
  const auto [ta, tb] = GENERATE(MATRIX_TYPE_PAIRS);
  check_matrix_kernel(ops::MatmulKernel::Matrix, ta, tb);
  if (ta != ElementType::F32 || tb != ElementType::F16) return;
  // Two tile buffers on the hardware fragments: partial tiles, steps of both parities; the
  // default tiling's size too where shared memory holds its 46,080 bytes (GPUs; not lavapipe).
  for (const ops::MatrixTiles tiles : {ops::MatrixTiles{1, 2, 2, 3, 16, false, 2}, ops::MatrixTiles{2, 2, 4, 4, 32, false, 2}}) {
    INFO("tiles " << tiles.name());
    if (tiles.bm() == 128 && caps.max_shared_memory_bytes < 46080) continue;
    MatmulLayout layout;
    layout.f16_operands = true;
    const MatmulResult r = run_matmul(140, 135, 488, ta, tb, {}, 9, ops::MatmulKernel::Matrix, layout, tiles);
    CHECK(r.nmse <= 1e-9);
    CHECK(r.guard_violations == 0);
  }
}

// Split-K on the matrix kernel: each slice a run of whole k steps, the last short or empty, the
// partials added to C's values in order; emulated where the device has f16 arithmetic, on the
// cooperative matrices where it has them (each reported as skipped where not).
TEST_CASE_METHOD(GpuTest, "split-K: the matrix kernel's slices add up to the float64 reference's product", "[gpu][matmul]") {
  std::vector<ops::MatmulKernel> kernels;
  if (device().caps().shader_float16) kernels.push_back(ops::MatmulKernel::MatrixEmulated);
  else WARN("emulated fragments skipped: " << device().caps().name << " has no shaderFloat16");
  if (ops::supports_matrix_units(device().caps())) kernels.push_back(ops::MatmulKernel::Matrix);
  else WARN("matrix units skipped: " << device().caps().name << " has no cooperative matrices infini can use");
  struct SplitCase {
    ElementType b;
    uint32_t k, split;
  };
  for (const ops::MatmulKernel kernel : kernels)
    for (const SplitCase& c : {SplitCase{ElementType::F16, 488, 2}, SplitCase{ElementType::F16, 488, 3},
                               SplitCase{ElementType::F16, 488, 8}, SplitCase{ElementType::Q4_K, 768, 3}}) {
      INFO(ops::matmul_kernel_name(kernel) << " B " << element_name(c.b) << " K " << c.k << " in " << c.split << " slices");
      MatmulLayout layout;
      layout.f16_operands = true;
      layout.accumulate = true;
      layout.split_k = c.split;
      const MatmulResult r = run_matmul(70, 100, c.k, ElementType::F32, c.b, {}, c.split, kernel, layout);
      CHECK(r.nmse <= 1e-9);
      CHECK(r.guard_violations == 0);
      CHECK(r.split_ran);
    }
}

TEST_CASE_METHOD(GpuTest, "auto takes the matrix units exactly where the device has them, for f16 and block weights",
                 "[gpu][matmul]") {
  const vk::Capabilities& caps = device().caps();
  const bool units = auto_takes_matrix_units(caps);
  CHECK(ops::Matmul(device(), ElementType::F32, ElementType::F16).uses_matrix_units() == units);
  CHECK(ops::Matmul(device(), ElementType::F32, ElementType::Q4_K).uses_matrix_units() == units);
  CHECK_FALSE(ops::Matmul(device(), ElementType::F32, ElementType::F32).uses_matrix_units());  // f16 would lose precision
  CHECK_FALSE(ops::Matmul(device(), ElementType::F32, ElementType::F16, {}, ops::MatmulKernel::Tiled).uses_matrix_units());
  CHECK_THROWS_WITH(ops::Matmul(device(), ElementType::F32, ElementType::F32, {}, ops::MatmulKernel::MatrixEmulated),
                    Catch::Contains("no kernel"));
  // Which kernel each call runs: a few rows go to the vector kernel, K not a multiple of 8 and
  // ranges off 16 bytes to the tiled one.
  const ops::Matmul automatic(device(), ElementType::F32, ElementType::F16);
  const ops::MatmulKernel big = automatic.kernel_for_call({512, 512, 512});
  if (units) CHECK(big == ops::MatmulKernel::Matrix);
  else CHECK(big != ops::MatmulKernel::Matrix);
  if (!caps.shader_float16) return;
  const ops::Matmul emulated(device(), ElementType::F32, ElementType::F16, {}, ops::MatmulKernel::MatrixEmulated);
  CHECK(emulated.kernel_for_call({4, 64, 64}) == ops::MatmulKernel::MatrixEmulated);
  CHECK(emulated.kernel_for_call({64, 64, 60}) == ops::MatmulKernel::Tiled);
  ops::MatmulArgs shifted{64, 64, 64};
  shifted.c.offset = 8;
  CHECK(emulated.kernel_for_call(shifted) == ops::MatmulKernel::Tiled);
  shifted.c.offset = 32;
  CHECK(emulated.kernel_for_call(shifted) == ops::MatmulKernel::MatrixEmulated);
}

TEST_CASE_METHOD(GpuTest, "INFINI_MATRIX_UNITS: off keeps auto off matrix units, emulate takes the emulated kernels",
                 "[gpu][matmul]") {
  const char* before = std::getenv("INFINI_MATRIX_UNITS");
  const std::string saved = before ? before : "";
  const vk::Capabilities& caps = device().caps();
  const bool emulates = !ops::supports_matrix_units(caps) && caps.shader_float16;
  setenv("INFINI_MATRIX_UNITS", "emulate", 1);
  const ops::Matmul matmul(device(), ElementType::F32, ElementType::F16);
  const std::vector<float> beta(4, 0.0f);
  InfiniOptions options;
  options.segment = 16;
  const ops::InfiniAttentionLayer layer(device(), {4, 2, 64, 64}, options, ElementType::F32, beta);
  if (emulates) {
    CHECK(matmul.kernel_for_call({64, 64, 64}) == ops::MatmulKernel::MatrixEmulated);
    CHECK(matmul.kernel_for_call({8, 64, 64}) != ops::MatmulKernel::MatrixEmulated);  // decode rows, as on a GPU
    CHECK(layer.attention_kernel() == ops::AttentionKernel::MatrixEmulated);
  }
  setenv("INFINI_MATRIX_UNITS", "off", 1);  // the f32 kernels, matrix units or not
  CHECK_FALSE(ops::Matmul(device(), ElementType::F32, ElementType::F16).uses_matrix_units());
  CHECK(ops::Matmul(device(), ElementType::F32, ElementType::F16).kernel_for_call({64, 64, 64}) != ops::MatmulKernel::MatrixEmulated);
  setenv("INFINI_MATRIX_UNITS", "yes", 1);
  CHECK_THROWS_WITH(ops::Matmul(device(), ElementType::F32, ElementType::F16), Catch::Contains("takes 'off' or 'emulate'"));
  if (before) setenv("INFINI_MATRIX_UNITS", saved.c_str(), 1);
  else unsetenv("INFINI_MATRIX_UNITS");
}

TEST_CASE("the matrix kernel asks for cooperative matrices and the Vulkan memory model; its emulation does not",
          "[spirv]") {
  const uint32_t spec[] = {128, 2, 2, 4, 4, 32};
  const auto units = vk::spirv_requirements(infini::spirv::matmul_coopmat_a32_b16, spec);
  const bool khr = vk::matrix_units_on_khr();  // the extension this build's kernels are on
  CHECK(units.cooperative_matrix_khr == khr);
  CHECK(units.cooperative_matrix_nv == !khr);
  CHECK(units.vulkan_memory_model);
  CHECK(units.float16);
  CHECK(units.local_size[0] == 128);
  // Tiles of 128 rows of 32 + 8 halves for A and for B, and 4 warps' 16 x 20 floats of staging.
  CHECK(units.shared_bytes == 2u * 128 * 40 * 2 + 4u * 16 * 20 * 4);
  const auto emulated = vk::spirv_requirements(infini::spirv::matmul_coopmat_a32_b16_emulated, spec);
  CHECK_FALSE(emulated.cooperative_matrix_nv);
  CHECK_FALSE(emulated.cooperative_matrix_khr);
  CHECK_FALSE(emulated.vulkan_memory_model);
  CHECK(emulated.shared_bytes == units.shared_bytes);

  vk::Capabilities caps;
  caps.max_shared_memory_bytes = 65536;
  caps.max_workgroup_invocations = 1024;
  caps.max_workgroup_size = {1024, 1024, 64};
  caps.shader_float16 = caps.subgroups_in_compute = true;
  caps.subgroup_operations = VK_SUBGROUP_FEATURE_BASIC_BIT;
  CHECK_THAT(vk::unmet_requirement("matmul_coopmat_a32_b16", units, caps),
             Catch::Contains(std::string("needs cooperative matrices (") + vk::matrix_units_extension() + ")"));
  (khr ? caps.cooperative_matrix_khr : caps.cooperative_matrix_nv) = true;
  if (khr) {  // KHR kernels take the device's shape: one of 8s and 16s with f16 inputs and f32 sums
    caps.matrix_shapes = {{8, 8, 8, "f16", "f16", "f16", "f16"}, {32, 8, 16, "f16", "f16", "f32", "f32"}};
    CHECK_THAT(vk::unmet_requirement("matmul_coopmat_a32_b16", units, caps), Catch::Contains("in 8s or 16s"));
    caps.matrix_shapes.push_back({8, 16, 16, "f16", "f16", "f32", "f32"});
    CHECK(caps.fragment_shape() == caps.matrix_shapes.back());
    caps.matrix_shapes.push_back({16, 16, 16, "f16", "f16", "f32", "f32"});
    CHECK(caps.fragment_shape() == caps.matrix_shapes.back());  // whole fragments first
  }
  CHECK_THAT(vk::unmet_requirement("matmul_coopmat_a32_b16", units, caps), Catch::Contains("needs full subgroups"));
  caps.compute_full_subgroups = true;
  // Subgroups: 32 lanes, or asked to be 32, or (KHR) sizes that divide 32.
  caps.subgroup_size = caps.min_subgroup_size = caps.max_subgroup_size = 64;
  CHECK_THAT(vk::unmet_requirement("matmul_coopmat_a32_b16", units, caps), Catch::Contains("subgroups of 32 lanes"));
  caps.min_subgroup_size = 32;
  CHECK(caps.fragment_lanes() == 0);  // 32 to 64, but no size control to ask for 32
  caps.subgroup_size_control = true;
  CHECK(caps.fragment_lanes() == 32);
  CHECK(caps.fragment_lanes_required());
  caps.subgroup_size = caps.min_subgroup_size = caps.max_subgroup_size = 8;
  CHECK(caps.fragment_lanes() == (khr ? 8u : 0u));
  CHECK_FALSE(caps.fragment_lanes_required());
  caps.min_subgroup_size = 8;  // Intel: KHR lets the driver pick any of 8 to 32; NV asks for 32
  caps.max_subgroup_size = 32;
  CHECK(caps.fragment_lanes() == 32);
  CHECK(caps.fragment_lanes_required() == !khr);
  caps.subgroup_size = caps.min_subgroup_size = caps.max_subgroup_size = 32;
  CHECK(caps.fragment_lanes() == 32);
  CHECK_FALSE(caps.fragment_lanes_required());
  CHECK_THAT(vk::unmet_requirement("matmul_coopmat_a32_b16", units, caps), Catch::Contains("needs vulkanMemoryModel"));
  caps.vulkan_memory_model = true;
  CHECK(vk::unmet_requirement("matmul_coopmat_a32_b16", units, caps).empty());
  CHECK(vk::unmet_requirement("matmul_coopmat_a32_b16_emulated", emulated, vk::Capabilities{caps}).empty());
}

}  // namespace
}  // namespace infini::test
