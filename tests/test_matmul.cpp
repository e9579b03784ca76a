// Every matmul kernel against the float64 reference, on shapes that are not tile multiples, with
// guard regions and row gaps around the output that must come back untouched.
#include "support/gpu_fixture.hpp"
#include "support/matmul_check.hpp"
#include "ops/host_tensor.hpp"
#include "ops/matrix_units.hpp"
#include "vk/device_profile.hpp"

namespace infini::test {
namespace {

struct Shape {
  uint32_t m, n, k;
};
constexpr Shape kShapes[] = {{1, 1, 1}, {17, 33, 65}, {127, 255, 511}, {64, 64, 16}, {3, 100, 7}};

TEST_CASE_METHOD(GpuTest, "matmul matches the float64 reference with the guard regions untouched", "[gpu][matmul]") {
  const auto [ta, tb] = GENERATE(std::pair{ElementType::F32, ElementType::F32}, std::pair{ElementType::F32, ElementType::F16},
                                 std::pair{ElementType::F16, ElementType::F16}, std::pair{ElementType::F32, ElementType::BF16});
  for (const Shape& s : kShapes) {
    INFO(s.m << "x" << s.n << "x" << s.k << " A " << element_name(ta) << " B " << element_name(tb));
    const MatmulResult r = run_matmul(s.m, s.n, s.k, ta, tb, {}, s.m * 7 + s.k);
    CHECK(r.nmse <= 1e-9);
    CHECK(r.guard_violations == 0);
  }
}

TEST_CASE_METHOD(GpuTest, "register-blocked matmul matches the float64 reference", "[gpu][matmul]") {
  const auto [ta, tb] = GENERATE(std::pair{ElementType::F32, ElementType::F32}, std::pair{ElementType::F32, ElementType::F16},
                                 std::pair{ElementType::F16, ElementType::F16}, std::pair{ElementType::F32, ElementType::BF16});
  // One row (the decode block), two and up to four (a batched decode's), edges of the 8x8 block,
  // and K not a multiple of 4 (falls back).
  constexpr Shape shapes[] = {{1, 1, 4},       {1, 37, 128}, {2, 37, 128}, {3, 70, 64}, {4, 9, 132},
                              {17, 33, 64}, {127, 255, 512}, {9, 70, 12},  {5, 9, 13}};
  for (const Shape& s : shapes) {
    INFO(s.m << "x" << s.n << "x" << s.k << " A " << element_name(ta) << " B " << element_name(tb));
    const MatmulResult r = run_matmul(s.m, s.n, s.k, ta, tb, {}, s.n * 3 + s.k, ops::MatmulKernel::Registers);
    CHECK(r.nmse <= 1e-9);
    CHECK(r.guard_violations == 0);
  }
}

TEST_CASE_METHOD(GpuTest, "lanes matmul matches the float64 reference", "[gpu][matmul]") {
  if (!ops::supports_lanes_matmul(device().caps())) {
    WARN("the device has no 8-lane subgroups with shuffle: the lanes kernel is not used here");
    CHECK_THROWS_WITH(ops::Matmul(device(), ElementType::F32, ElementType::F16, {}, ops::MatmulKernel::Lanes),
                      Catch::Contains("8-lane subgroups"));
    return;
  }
  const auto [ta, tb] = GENERATE(std::pair{ElementType::F32, ElementType::F32}, std::pair{ElementType::F32, ElementType::F16},
                                 std::pair{ElementType::F16, ElementType::F16}, std::pair{ElementType::F32, ElementType::BF16});
  // Partial row blocks (32) and column blocks (64), K a partial round (64) or several, one
  // K of exactly 8; rows below 16 and K not a multiple of 8 fall back to the registers kernel.
  constexpr Shape shapes[] = {{16, 1, 8}, {17, 33, 64}, {127, 255, 512}, {33, 70, 24},
                              {40, 65, 1032}, {64, 64, 72}, {5, 9, 16}, {20, 9, 13}};
  for (const Shape& s : shapes) {
    INFO(s.m << "x" << s.n << "x" << s.k << " A " << element_name(ta) << " B " << element_name(tb));
    const MatmulResult r = run_matmul(s.m, s.n, s.k, ta, tb, {}, s.m * 5 + s.k, ops::MatmulKernel::Lanes);
    CHECK(r.nmse <= 1e-9);
    CHECK(r.guard_violations == 0);
  }
}

TEST_CASE_METHOD(GpuTest, "matrix-vector matmul matches the float64 reference for 1 to 8 rows", "[gpu][matmul]") {
  const ops::MatmulKernel kernel = GENERATE(ops::MatmulKernel::Vector, ops::MatmulKernel::VectorShared);
  // The default shape, and others: a workgroup smaller than 8 rows x 4 columns of outputs, one
  // column per workgroup, a wide one, several loads in flight (K's last pass partly past K).
  const ops::VectorTiles vt = GENERATE(ops::VectorTiles{}, ops::VectorTiles{16, 4}, ops::VectorTiles{64, 1},
                                       ops::VectorTiles{256, 3}, ops::VectorTiles{16, 3, 3});
  const auto [ta, tb] = GENERATE(std::pair{ElementType::F32, ElementType::F32}, std::pair{ElementType::F32, ElementType::F16},
                                 std::pair{ElementType::F16, ElementType::F16}, std::pair{ElementType::F32, ElementType::BF16});
  if (!(vt == ops::VectorTiles{}) && !(ta == ElementType::F32 && tb == ElementType::F16)) return;  // one pair is enough
  // Every row count; one column and an odd column count (the workgroups' 2 columns); K shorter
  // than one pass of the 128 invocations, not a multiple of a pass, and several passes; K not a
  // multiple of 4 and 9 rows fall back to the tiled kernel.
  constexpr Shape shapes[] = {{1, 1, 4},    {1, 77, 132},  {2, 33, 516},  {3, 64, 1028}, {4, 5, 2048},
                              {5, 9, 12},   {6, 31, 260},  {7, 2, 8},     {8, 129, 1540}, {1, 37, 13},
                              {9, 40, 64}};
  for (const Shape& s : shapes) {
    INFO(s.m << "x" << s.n << "x" << s.k << " A " << element_name(ta) << " B " << element_name(tb) << " "
              << ops::matmul_kernel_name(kernel) << " " << vt.name());
    const MatmulResult r = run_matmul(s.m, s.n, s.k, ta, tb, {}, s.n * 11 + s.k, kernel, {}, {}, vt);
    CHECK(r.nmse <= 1e-9);
    CHECK(r.guard_violations == 0);
  }
}

TEST_CASE_METHOD(GpuTest, "quantized weights: every matmul kernel matches the float64 reference", "[gpu][matmul][quant]") {
  // The reference multiplies the dequantized weights, so only the kernels' decoding and
  // arithmetic are tested. Rows of 1, 3 and 5 blocks start mid-word (34-, 18- and 22-byte blocks;
  // Q4_1's 20 and Q5_1's 24 are whole words); Q4_1 and Q5_1 add a min, Q5_0 and Q5_1 a fifth bit,
  // IQ4_NL its 16 levels;
  // every family's row counts and edges as above; K of 67 blocks gives the vector kernel's 64
  // invocations (a block each) a second, partial pass.
  const ElementType tb = GENERATE(ElementType::Q8_0, ElementType::Q4_0, ElementType::Q4_1, ElementType::Q5_0,
                                  ElementType::Q5_1, ElementType::IQ4_NL);
  ops::MatmulKernel kernel = GENERATE(ops::MatmulKernel::Tiled, ops::MatmulKernel::Registers, ops::MatmulKernel::Lanes,
                                      ops::MatmulKernel::Vector, ops::MatmulKernel::VectorShared);
  if (kernel == ops::MatmulKernel::Lanes && !ops::supports_lanes_matmul(device().caps())) return;
  constexpr Shape shapes[] = {{1, 1, 32},     {1, 37, 96},     {3, 33, 160},   {17, 65, 64},
                              {40, 65, 1056}, {127, 255, 512}, {8, 129, 1568}, {9, 40, 64},
                              {2, 7, 2144}};
  // The vector kernel also with 3 chunks of each column in flight (K of 67 blocks: the second
  // pass's last loads past K).
  const ops::VectorTiles vt = GENERATE(ops::VectorTiles{}, ops::VectorTiles{32, 2, 3});
  if (!(vt == ops::VectorTiles{}) && kernel != ops::MatmulKernel::Vector) return;  // the reduction is the same
  for (const Shape& s : shapes) {
    INFO(s.m << "x" << s.n << "x" << s.k << " " << ops::matmul_kernel_name(kernel) << " B " << element_name(tb) << " "
              << vt.name());
    const MatmulResult r = run_matmul(s.m, s.n, s.k, ElementType::F32, tb, {}, s.n * 13 + s.k, kernel, {}, {}, vt);
    CHECK(r.nmse <= 1e-9);
    CHECK(r.guard_violations == 0);
  }
  // Rows must be whole blocks.
  vk::Buffer b(device(), 4096, vk::MemoryUse::DeviceLocal, "b");
  ops::Matmul mm(device(), ElementType::F32, tb, {}, kernel);
  vk::CommandStream stream(device());
  stream.begin();
  CHECK_THROWS_WITH(mm.record(stream, {1, 2, 48, vk::BufferRange::whole(b), vk::BufferRange::whole(b),
                                       vk::BufferRange::whole(b)}),
                    Catch::Contains("whole blocks of 32"));
  stream.end();
}

TEST_CASE_METHOD(GpuTest, "K-format weights: every matmul kernel matches the float64 reference", "[gpu][matmul][quant]") {
  // Super-blocks of 256 with sub-block scales (and Q4_K/Q5_K mins) decoded in registers. Rows of
  // 1, 3 and 5 blocks put Q6_K's 210-byte rows mid-word; K up to 6 blocks covers every sub-block
  // position of every chunk the register kernel walks; K of 9 blocks (72 chunks) gives the vector
  // kernel's 64 invocations a second, partial pass, and K of 17 (34 half blocks) Q6_K's 32
  // invocations (a half block each); the vector kernel also with 3 loads of each column in flight.
  // Q2_K's blocks are whole words, Q3_K's 110 bytes put every other row mid-word.
  const ElementType tb = GENERATE(ElementType::Q4_K, ElementType::Q5_K, ElementType::Q6_K, ElementType::IQ4_XS,
                                  ElementType::Q2_K, ElementType::Q3_K);
  ops::MatmulKernel kernel = GENERATE(ops::MatmulKernel::Tiled, ops::MatmulKernel::Registers, ops::MatmulKernel::Lanes,
                                      ops::MatmulKernel::Vector, ops::MatmulKernel::VectorShared);
  if (kernel == ops::MatmulKernel::Lanes && !ops::supports_lanes_matmul(device().caps())) return;
  // (Q6_K's own path; the other formats' chunks in flight are tested with Q8_0 and Q4_0 above.)
  const ops::VectorTiles vt = GENERATE(ops::VectorTiles{}, ops::VectorTiles{16, 2, 3});
  if (!(vt == ops::VectorTiles{}) && (kernel != ops::MatmulKernel::Vector || tb != ElementType::Q6_K)) return;
  constexpr Shape shapes[] = {{1, 1, 256},    {1, 37, 768},    {3, 33, 512},  {17, 65, 256},
                              {40, 65, 1280}, {127, 129, 512}, {8, 31, 1536}, {9, 40, 256},
                              {3, 5, 2304},   {2, 3, 4352}};
  for (const Shape& s : shapes) {
    INFO(s.m << "x" << s.n << "x" << s.k << " " << ops::matmul_kernel_name(kernel) << " B " << element_name(tb) << " "
              << vt.name());
    const MatmulResult r = run_matmul(s.m, s.n, s.k, ElementType::F32, tb, {}, s.n * 17 + s.k, kernel, {}, {}, vt);
    CHECK(r.nmse <= 1e-9);
    CHECK(r.guard_violations == 0);
  }
  vk::Buffer b(device(), 8192, vk::MemoryUse::DeviceLocal, "b");
  ops::Matmul mm(device(), ElementType::F32, tb, {}, kernel);
  vk::CommandStream stream(device());
  stream.begin();
  CHECK_THROWS_WITH(mm.record(stream, {1, 2, 288, vk::BufferRange::whole(b), vk::BufferRange::whole(b),
                                       vk::BufferRange::whole(b)}),
                    Catch::Contains("whole blocks of 256"));
  stream.end();
}

// f16 arithmetic: A is rounded to f16 on the way into the tiles and every product is an f16
// multiply (relative error at most 2^-11 each), summed in f32, so against the float64 product of the
// stored values the normalised error is about 1e-7; 2e-6 is the bound. f16 weights lose nothing.
TEST_CASE_METHOD(GpuTest, "tiled-half matmul (f16 products, f32 sums) matches the float64 reference", "[gpu][matmul]") {
  if (!device().caps().shader_float16) {
    WARN("skipped: " << device().caps().name << " has no shaderFloat16");  // reported, not counted as a pass
    CHECK_THROWS_WITH(ops::Matmul(device(), ElementType::F32, ElementType::F16, {}, ops::MatmulKernel::TiledHalf),
                      Catch::Contains("shaderFloat16"));
    return;
  }
  const ElementType ta = GENERATE(ElementType::F32, ElementType::F16);
  for (const Shape& s : kShapes) {
    INFO(s.m << "x" << s.n << "x" << s.k << " A " << element_name(ta));
    const MatmulResult r = run_matmul(s.m, s.n, s.k, ta, ElementType::F16, {}, s.n * 3 + s.k, ops::MatmulKernel::TiledHalf);
    CHECK(r.nmse <= 2e-6);
    CHECK(r.guard_violations == 0);
  }
  // Odd K leaves a lone last k in its pair; odd tiles' BK must be even.
  const MatmulResult odd = run_matmul(37, 41, 33, ElementType::F32, ElementType::F16, {32, 32, 8, 4, 4}, 5, ops::MatmulKernel::TiledHalf);
  CHECK(odd.nmse <= 2e-6);
  CHECK(odd.guard_violations == 0);
  CHECK_THROWS_WITH(ops::Matmul(device(), ElementType::F32, ElementType::F16, {32, 32, 7, 4, 4}, ops::MatmulKernel::TiledHalf),
                    Catch::Contains("BK must be even"));
  CHECK_THROWS_WITH(ops::Matmul(device(), ElementType::F32, ElementType::F32, {}, ops::MatmulKernel::TiledHalf),
                    Catch::Contains("no kernel"));
  // A device without f16 arithmetic refuses it by name.
  vk::DeviceOptions options;
  options.profile = &vk::find_device_profile("vulkan-1.1-minimum");
  const std::unique_ptr<vk::Device> no_f16 = open_second_device(options);
  CHECK_THROWS_WITH(ops::Matmul(*no_f16, ElementType::F32, ElementType::F16, {}, ops::MatmulKernel::TiledHalf),
                    Catch::Contains("shaderFloat16"));
}

// C += A B^T (how a layer adds its residual in the projection's own pass): C starts with random
// values, which the float64 reference adds. Shapes that each family runs: one row (vector and
// register kernels), 17 rows (lanes, register blocks), partial matrix tiles, and whole matrix tiles
// stored straight from the fragments (C packed: their sums start from C's values).
TEST_CASE_METHOD(GpuTest, "every matmul kernel adds to C when the call accumulates", "[gpu][matmul]") {
  using ops::MatmulKernel;
  const vk::Capabilities& caps = device().caps();
  const MatmulKernel kernel = GENERATE(MatmulKernel::Tiled, MatmulKernel::TiledHalf, MatmulKernel::Registers,
                                       MatmulKernel::Lanes, MatmulKernel::Vector, MatmulKernel::VectorShared,
                                       MatmulKernel::MatrixEmulated, MatmulKernel::Matrix);
  const bool half = kernel == MatmulKernel::TiledHalf || kernel == MatmulKernel::MatrixEmulated;
  if ((half && !caps.shader_float16) || (kernel == MatmulKernel::Lanes && !ops::supports_lanes_matmul(caps)) ||
      (kernel == MatmulKernel::Matrix && !ops::supports_matrix_units(caps))) {
    WARN("skipped on this device: " << ops::matmul_kernel_name(kernel));  // reported, not counted as a pass
    return;
  }
  const bool matrix = kernel == MatmulKernel::Matrix || kernel == MatmulKernel::MatrixEmulated;
  const ElementType tb = GENERATE(ElementType::F16, ElementType::Q4_K);
  if (kernel == MatmulKernel::TiledHalf && tb != ElementType::F16) return;  // f16 weights only
  struct Case {
    uint32_t m, n, k;
    bool packed;
  };
  constexpr Case cases[] = {{1, 37, 256}, {17, 70, 512}, {130, 200, 256}, {256, 128, 512, true}};
  for (const Case& c : cases) {
    INFO(c.m << "x" << c.n << "x" << c.k << " " << ops::matmul_kernel_name(kernel) << " B " << element_name(tb));
    MatmulLayout layout;
    if (c.packed) layout = {68, 0};
    layout.accumulate = true;
    layout.f16_operands = matrix;
    const MatmulResult r = run_matmul(c.m, c.n, c.k, ElementType::F32, tb, {}, c.m + c.n, kernel, layout);
    CHECK(r.nmse <= (kernel == MatmulKernel::TiledHalf ? 2e-6 : 1e-9));
    CHECK(r.guard_violations == 0);
  }
}

// Decode's fused steps (MatmulArgs::a_norm, glu_up, bias): the vector kernels against the
// float64 reference of the separate steps. K past one pass of the workgroup (516 of 128 x 4 values;
// 2304 of 64 chunks of 32), rows of 1 and 5, odd column counts; every step alone and with others,
// a large epsilon (it must be inside the square root), adding to C.
TEST_CASE_METHOD(GpuTest, "the vector kernel normalises A, gates the output and adds a bias in the same pass",
                 "[gpu][matmul]") {
  using ops::MatmulKernel;
  const MatmulKernel kernel = GENERATE(MatmulKernel::Vector, MatmulKernel::VectorShared);
  const auto [ta, tb] = GENERATE(std::pair{ElementType::F32, ElementType::F32}, std::pair{ElementType::F32, ElementType::F16},
                                 std::pair{ElementType::F16, ElementType::F16}, std::pair{ElementType::F32, ElementType::Q4_0},
                                 std::pair{ElementType::F32, ElementType::Q4_K}, std::pair{ElementType::F32, ElementType::Q6_K});
  if (kernel == MatmulKernel::VectorShared && ta == ElementType::F16) return;  // the same reduction as f32 A
  // The default shape, 32 invocations x 4 columns (16 more outputs than invocations at 5 rows),
  // and 3 loads of each column (and of U) in flight.
  const ops::VectorTiles vt = GENERATE(ops::VectorTiles{}, ops::VectorTiles{32, 4}, ops::VectorTiles{32, 2, 3});
  if (!(vt == ops::VectorTiles{}) && tb != ElementType::F16 && tb != ElementType::Q4_K) return;
  if (vt.words > 1 && (tb != ElementType::F16 || kernel != MatmulKernel::Vector)) return;  // U's loads in flight
  const uint32_t k = element_traits(tb).block_elements > 1 ? 2304 : 516;
  struct Steps {
    float eps;
    bool glu, bias, accumulate;
  };
  constexpr Steps steps[] = {{1e-5f, false, false, false}, {1e-5f, true, false, true}, {0.5f, false, true, false},
                             {0, true, false, false},      {0, false, true, true}};
  // Rows of 1 and 5 alternate over the steps, starting apart for each kernel and type, so every
  // step meets both (each row count is a pipeline of its own, a second apiece on lavapipe).
  for (size_t i = 0; i < std::size(steps); ++i) {
    const Steps& st = steps[i];
    const uint32_t m = (i + size_t(kernel) + size_t(tb) + size_t(ta)) % 2 ? 5u : 1u;
    INFO(m << "x37x" << k << " " << ops::matmul_kernel_name(kernel) << " " << vt.name() << " A " << element_name(ta)
            << " B " << element_name(tb) << " eps " << st.eps << " glu " << st.glu << " bias " << st.bias << " accumulate "
            << st.accumulate);
    MatmulLayout layout;
    layout.norm_eps = st.eps;
    layout.glu = st.glu;
    layout.bias = st.bias;
    layout.accumulate = st.accumulate;
    const MatmulResult r = run_matmul(m, 37, k, ta, tb, {}, m * 7 + k, kernel, layout, {}, vt);
    CHECK(r.nmse <= 1e-9);
    CHECK(r.guard_violations == 0);
  }
}

TEST_CASE_METHOD(GpuTest, "matrix-vector tilings: names round-trip, impossible ones are refused", "[gpu][matmul]") {
  for (const char* name : {"auto", "128x2", "16x4", "1024x1", "128x2x4", "64x1x8"})
    CHECK(ops::vector_tiles_named(name)->name() == name);
  for (const char* name : {"", "x", "128", "128x", "x2", "0x2", "128x0", "12ax2", "128x2x1", "99999x2", "96x2", "8x2",
                           "128x5", "128x2x0", "128x2x9", "128x2x4x1"})
    CHECK_FALSE(ops::vector_tiles_named(name).has_value());
  using ops::VectorTiles;
  for (const VectorTiles vt :
       {VectorTiles{96, 2}, VectorTiles{8, 2}, VectorTiles{128, 5}, VectorTiles{1u << 20, 1}, VectorTiles{128, 2, 9}}) {
    INFO(vt.name());
    CHECK_THROWS_WITH(ops::Matmul(device(), ElementType::F32, ElementType::F16, {}, ops::MatmulKernel::Vector, {}, vt),
                      Catch::Contains("vector tiles " + vt.name()));
  }
  const ops::Matmul mm(device(), ElementType::F32, ElementType::Q4_K, {}, ops::MatmulKernel::Vector);
  CHECK(mm.vector_tiles() == VectorTiles{64, 2, 1});  // the defaults, resolved
}

TEST_CASE_METHOD(GpuTest, "fused steps are refused where the vector kernel does not run them", "[gpu][matmul]") {
  vk::Buffer big(device(), 1 << 16, vk::MemoryUse::DeviceLocal, "operands");
  const vk::BufferRange all = vk::BufferRange::whole(big);
  ops::Matmul mm(device(), ElementType::F32, ElementType::F32, {}, ops::MatmulKernel::Vector);
  vk::CommandStream stream(device());
  stream.begin();
  ops::MatmulArgs nine{9, 8, 64, all, all, all};  // 9 rows: the tiled kernel
  nine.a_norm = all;
  nine.norm_eps = 1e-5f;
  CHECK_THROWS_WITH(mm.record(stream, nine), Catch::Contains("needs the vector kernel") && Catch::Contains("tiled"));
  ops::MatmulArgs both{1, 8, 64, all, all, all};
  both.glu_up = all;
  both.bias = all;
  CHECK_THROWS_WITH(mm.record(stream, both), Catch::Contains("cannot share a pass"));
  ops::MatmulArgs no_eps{1, 8, 64, all, all, all};
  no_eps.a_norm = all;
  CHECK_THROWS_WITH(mm.record(stream, no_eps), Catch::Contains("epsilon must be positive"));
  ops::MatmulArgs short_bias{1, 8, 64, all, all, all};
  short_bias.bias = {&big, 0, 16};
  CHECK_THROWS_WITH(mm.record(stream, short_bias), Catch::Contains("the bias needs 32 bytes"));
  stream.end();
}

// Split-K (MatmulChoice::split_k): slices of k summed by separate workgroups into partials that a
// second pass adds to C in order. Slices past K are empty (K 40 in 4 slices of 16: the last has
// none; K 320 in 16 slices of 32: six have none), the last of the others short; the sum is added
// to C's values when the call accumulates.
TEST_CASE_METHOD(GpuTest, "split-K: the tiled kernel's slices add up to the float64 reference's product", "[gpu][matmul]") {
  struct SplitCase {
    ElementType b;
    uint32_t m, n, k, split;
  };
  for (const SplitCase& c : {SplitCase{ElementType::F32, 67, 45, 40, 4}, SplitCase{ElementType::F16, 130, 70, 511, 3},
                             SplitCase{ElementType::BF16, 64, 64, 1024, 2}, SplitCase{ElementType::Q4_0, 70, 33, 320, 16},
                             SplitCase{ElementType::Q4_K, 65, 20, 768, 3}}) {
    for (const bool accumulate : {false, true}) {
      INFO(element_name(c.b) << " " << c.m << "x" << c.n << "x" << c.k << " in " << c.split << " slices"
                             << (accumulate ? ", accumulating" : ""));
      MatmulLayout layout;
      layout.split_k = c.split;
      layout.accumulate = accumulate;
      const MatmulResult r = run_matmul(c.m, c.n, c.k, ElementType::F32, c.b, {}, c.k + c.split, ops::MatmulKernel::Tiled, layout);
      CHECK(r.nmse <= 1e-9);
      CHECK(r.guard_violations == 0);
      CHECK(r.split_ran);
    }
  }
  // Without room for the partials (or with too little), a split call sums all of k in one pass.
  vk::Device& dev = device();
  const uint32_t m = 70, n = 40, k = 256;
  const vk::Buffer a = ops::upload_tensor(dev, random_floats(size_t(m) * k, 1), ElementType::F32, "A");
  const vk::Buffer b = ops::upload_tensor(dev, random_floats(size_t(n) * k, 2), ElementType::F16, "B");
  vk::Buffer whole_c(dev, m * n * 4, vk::MemoryUse::DeviceLocal, "C"), split_c(dev, m * n * 4, vk::MemoryUse::DeviceLocal, "C");
  vk::Buffer small(dev, m * n * 4, vk::MemoryUse::DeviceLocal, "room for one slice");
  const ops::Matmul plain(dev, ElementType::F32, ElementType::F16, {}, ops::MatmulKernel::Tiled);
  const ops::Matmul split(dev, ElementType::F32, ElementType::F16, ops::MatmulChoice{ops::MatmulKernel::Tiled, {}, {}, 2});
  CHECK(split.split_scratch_floats(m, n) == 2ull * m * n);
  CHECK(plain.split_scratch_floats(m, n) == 0);
  ops::MatmulArgs args{m, n, k, vk::BufferRange::whole(a), vk::BufferRange::whole(b), vk::BufferRange::whole(whole_c)};
  vk::CommandStream stream(dev);
  stream.begin();
  plain.record(stream, args);
  args.c = vk::BufferRange::whole(split_c);
  args.split_scratch = vk::BufferRange::whole(small);
  split.record(stream, args);
  stream.end();
  stream.submit_and_wait();
  const std::vector<float> x = ops::download_floats(whole_c, size_t(m) * n), y = ops::download_floats(split_c, size_t(m) * n);
  CHECK(x == y);  // the same kernel over all of k: the same sums
  // Only the tiled and matrix kernels split k, into at most kMaxSplitK slices.
  CHECK_THROWS_WITH(ops::Matmul(dev, ElementType::F32, ElementType::F16, ops::MatmulChoice{ops::MatmulKernel::Registers, {}, {}, 2}),
                    Catch::Contains("only the tiled and coopmat kernels split k"));
  CHECK_THROWS_WITH(ops::Matmul(dev, ElementType::F32, ElementType::F16, ops::MatmulChoice{ops::MatmulKernel::Tiled, {}, {}, 17}),
                    Catch::Contains("at most 16"));
}

TEST_CASE_METHOD(GpuTest, "matmul is correct for every tile configuration", "[gpu][matmul]") {
  const ops::MatmulTiles tiles = GENERATE(ops::MatmulTiles{16, 16, 8, 1, 1}, ops::MatmulTiles{32, 64, 16, 4, 4},
                                          ops::MatmulTiles{64, 32, 8, 2, 4}, ops::MatmulTiles{128, 64, 16, 8, 4});
  INFO("tile " << tiles.bm << "x" << tiles.bn << "x" << tiles.bk << " micro " << tiles.tm << "x" << tiles.tn);
  if (tiles.workgroup_size() > device().caps().max_workgroup_invocations) {  // a device profile's limit
    CHECK_THROWS_WITH(ops::Matmul(device(), ElementType::F32, ElementType::F16, tiles),
                      Catch::Contains("exceed maxComputeWorkGroupInvocations"));
    return;
  }
  const MatmulResult r = run_matmul(127, 255, 129, ElementType::F32, ElementType::F16, tiles, 99);
  CHECK(r.nmse <= 1e-9);
  CHECK(r.guard_violations == 0);
}

TEST_CASE_METHOD(GpuTest, "matmul rejects tiles and operands that do not fit", "[gpu][matmul]") {
  vk::Device& dev = device();
  // Micro-tile does not divide the tile.
  CHECK_THROWS_WITH(ops::Matmul(dev, ElementType::F32, ElementType::F32, {64, 64, 16, 3, 4}),
                    Catch::Contains("not a multiple"));
  // More invocations than the device allows.
  CHECK_THROWS_WITH(ops::Matmul(dev, ElementType::F32, ElementType::F32, {256, 256, 8, 1, 1}),
                    Catch::Contains("maxComputeWorkGroupInvocations"));

  ops::Matmul matmul(dev, ElementType::F32, ElementType::F32);
  vk::Buffer a(dev, 16 * 16 * 4, vk::MemoryUse::DeviceLocal, "A");
  vk::Buffer c(dev, 16 * 16 * 4, vk::MemoryUse::DeviceLocal, "C");
  vk::CommandStream stream(dev);
  stream.begin();
  // A range one row too short for k = 16, m = 17.
  CHECK_THROWS_WITH(matmul.record(stream, {17, 16, 16, vk::BufferRange::whole(a), vk::BufferRange::whole(a),
                                           vk::BufferRange::whole(c)}),
                    Catch::Contains("needs"));
  stream.end();
}

}  // namespace
}  // namespace infini::test
