#include "ops/matmul.hpp"

#include <array>
#include <optional>
#include <string>
#include <utility>

#include "spirv/matmul_coopmat_variants.h"
#include "spirv/matmul_lanes_variants.h"
#include "spirv/matmul_regs_variants.h"
#include "spirv/matmul_split_sum.h"
#include "spirv/matmul_variants.h"
#include "spirv/matvec_variants.h"
#include "infini/error.hpp"
#include "ops/kernel_digest.hpp"
#include "ops/matrix_units.hpp"
#include "vk/device.hpp"
#include "vk/pipeline_cache.hpp"

namespace infini::ops {
namespace {

struct Push {
  uint32_t m, n, k, lda, ldb, ldc, a_off, b_off, c_off, accumulate;
};
// matvec.comp's: the fused steps' operands after the product's.
struct VectorPush {
  Push product;
  uint32_t bias_off;
  float eps;
};
// matmul_split_sum.comp's.
struct SplitSumPush {
  uint32_t m, n, ldc, c_off, accumulate, slices;
};
constexpr uint32_t kSplitSumWorkgroup = 64;
// matvec.comp's bindings: A, B, C, the norm's weights, U (the up weights), the bias.
constexpr uint32_t kVectorBuffers = 6;

// A kernel family: the variants of one shader with one suffix ("" or e.g. "_shared"). Its
// variant for A of type a and B of type b is named <shader>_a<a>_b<b><suffix>, f32 and f16 as
// 32 and 16, the block formats by their names (matvec_a32_bq4_k_shared); a storage pair whose
// variant the shader does not declare has no kernel. A new weight type is a new variant line in
// each shader, and nothing here.
struct KernelFamily {
  std::string_view shader;
  std::span<const spirv::ShaderVariant> variants;
  std::string_view suffix = "";
};

std::string operand_code(ElementType t) {
  return t == ElementType::F32 ? "32" : t == ElementType::F16 ? "16" : std::string(element_name(t));
}

const spirv::ShaderVariant* find_variant(const KernelFamily& family, ElementType a, ElementType b) {
  const std::string name =
      std::string(family.shader) + "_a" + operand_code(a) + "_b" + operand_code(b) + std::string(family.suffix);
  for (const spirv::ShaderVariant& v : family.variants)
    if (v.name == name) return &v;
  return nullptr;
}

vk::KernelSource kernel_for(const KernelFamily& family, ElementType a, ElementType b, uint32_t buffers = 3,
                            uint32_t push_bytes = sizeof(Push)) {
  if (const spirv::ShaderVariant* v = find_variant(family, a, b)) return {v->name, v->words, buffers, push_bytes};
  throw Error("matmul: no kernel for A " + std::string(element_name(a)) + " and B " + std::string(element_name(b)));
}

const KernelFamily kTiled{"matmul", spirv::matmul_variants};
// matmul.comp with f16 arithmetic (HALF_MATH): f16 weights only, whose values f16 holds exactly.
const KernelFamily kTiledHalf{"matmul", spirv::matmul_variants, "_half"};
const KernelFamily kRegs{"matmul_regs", spirv::matmul_regs_variants};
const KernelFamily kVector{"matvec", spirv::matvec_variants};
const KernelFamily kVectorShared{"matvec", spirv::matvec_variants, "_shared"};
const KernelFamily kLanes{"matmul_lanes", spirv::matmul_lanes_variants};
// matmul_coopmat.comp on matrix units, and the same tiling with emulated fragments (tests). f16
// and block-format weights only: f32 weights would lose precision in f16.
const KernelFamily kMatrix{"matmul_coopmat", spirv::matmul_coopmat_variants};
const KernelFamily kMatrixEmulated{"matmul_coopmat", spirv::matmul_coopmat_variants, "_emulated"};

// Cooperative-matrix loads and stores need 16-byte alignment, which the kernel derives from element
// offsets; the ranges must start on 16 bytes for that to hold in memory.
bool matrix_ranges_aligned(const MatmulArgs& args) {
  return args.a.offset % 16 == 0 && args.b.offset % 16 == 0 && args.c.offset % 16 == 0;
}

// matmul_lanes.comp: rows of C per workgroup (A rows shared by its lanes) and columns per lane.
// 32 x 8 was the fastest of 8x4 .. 32x8 and 16x16 on llvmpipe (512 rows, K 1024 and 2816: 1.6-1.9x
// matmul_regs.comp's 8x8). Below kLanesMinRows rows most of the block would be clamped copies.
constexpr uint32_t kLanesWidth = 8, kLanesRows = 32, kLanesCols = 8, kLanesMinRows = 16;

// matmul_regs.comp blocks: 8x8 for many rows (best of 4x4..16x8 on llvmpipe); 1x16 when there is one row (decode), where each
// weight is used once anyway and a taller block would only compute clamped copies.
constexpr uint32_t kRegsLanes = 8, kRegsRows = 8, kRegsCols = 8, kRegsRowCols = 16;


// matvec.comp: invocations per workgroup, columns of C per workgroup and loads of each column in
// flight per invocation. Block-format weights are read a 32-value chunk per invocation, so their
// workgroups are smaller: K 2048 (a 1B model's width) is then one chunk for each of 64
// invocations, where 128 would leave half of them idle; Q6_K half a super-block (128 values), 16
// of 32 invocations at K 2048. One load in flight until a GPU measures more (--vector-tiles 128x2x4).
constexpr uint32_t kVectorWorkgroup = 128, kVectorBlockWorkgroup = 64, kVectorHalfBlockWorkgroup = 32, kVectorCols = 2,
                   kVectorWords = 1;

// Whether matvec.comp's subgroup reduction can run: subgroup arithmetic in compute shaders, and
// subgroups of at least 4 invocations (its shared array has a slot per 4).
bool supports_subgroup_matvec(const vk::Capabilities& caps) {
  constexpr VkSubgroupFeatureFlags kNeeded = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
  return caps.subgroups_in_compute && (caps.subgroup_operations & kNeeded) == kNeeded && caps.min_subgroup_size >= 4;
}

void check_operand(const char* name, const vk::BufferRange& r, uint64_t rows, uint64_t cols, uint64_t ld,
                   uint64_t offset, ElementType type) {
  if (rows == 0 || cols == 0) return;
  const ElementTraits& e = element_traits(type);
  // A block format is addressed by value, so every row must start on a block boundary.
  if (e.block_elements > 1 && (cols % e.block_elements || ld % e.block_elements || offset % e.block_elements))
    throw Error(std::string("matmul: ") + name + " is " + std::string(e.name) + ", whose rows, row stride and offset must be "
                "whole blocks of " + std::to_string(e.block_elements) + " values");
  const uint64_t last = offset + (rows - 1) * ld + cols;  // one past the last element
  if (ld < cols) throw Error(std::string("matmul: ") + name + " row stride is smaller than its row");
  // Data is read as whole 32-bit words, so the range must cover the last element's word.
  const uint64_t blocks = (last + e.block_elements - 1) / e.block_elements;
  const uint64_t needed = (blocks * e.block_bytes + 3) / 4 * 4;
  if (!r.buffer || needed > r.size)
    throw Error(std::string("matmul: ") + name + " needs " + std::to_string(needed) +
                " bytes but its range has " + std::to_string(r.size));
}

}  // namespace

bool supports_lanes_matmul(const vk::Capabilities& caps) {
  return caps.subgroups_in_compute && (caps.subgroup_operations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT) &&
         caps.subgroup_size == kLanesWidth && caps.min_subgroup_size == kLanesWidth &&
         caps.max_subgroup_size == kLanesWidth;
}

bool matrix_matmul_types(ElementType a, ElementType b) { return find_variant(kMatrix, a, b) != nullptr; }

std::string tiles_misfit(const vk::Capabilities& caps, const MatmulTiles& t, bool half) {
  if (!t.tm || !t.tn || !t.bk || t.bm % t.tm || t.bn % t.tn)
    return "tile " + std::to_string(t.bm) + "x" + std::to_string(t.bn) + " is not a multiple of micro-tile " +
           std::to_string(t.tm) + "x" + std::to_string(t.tn);
  if (t.workgroup_size() > caps.max_workgroup_invocations || t.workgroup_size() > caps.max_workgroup_size[0])
    return std::to_string(t.workgroup_size()) + " invocations exceed maxComputeWorkGroupInvocations " +
           std::to_string(caps.max_workgroup_invocations);
  if (half && t.bk % 2) return "the tiled-half kernel takes k in pairs, so BK must be even, got " + std::to_string(t.bk);
  const uint64_t shared = uint64_t(t.bk) * (t.bm + t.bn) * (half ? 2 : 4);
  if (shared > caps.max_shared_memory_bytes)
    return "tiles need " + std::to_string(shared) + " bytes of shared memory; maxComputeSharedMemorySize is " +
           std::to_string(caps.max_shared_memory_bytes);
  return "";
}

MatmulTiles default_matmul_tiles(const vk::Capabilities& caps) {
  // 64x64 tiles of 4x4 per invocation: 256 invocations and 8 KiB of shared memory fit every
  // Vulkan 1.2 device that reports the minimum limits (256 invocations is not guaranteed, so
  // fall back to 32x32).
  if (caps.max_workgroup_invocations >= 256 && caps.max_shared_memory_bytes >= 8192) return {64, 64, 16, 4, 4};
  return {32, 32, 16, 4, 4};
}

Matmul::Matmul(vk::Device& device, ElementType a, ElementType b, MatmulTiles tiles, MatmulKernel kernel,
               MatrixTiles matrix_tiles, VectorTiles vector_tiles, std::optional<MatmulChoice> piece)
    : a_(a), b_(b), matrix_tiles_(matrix_tiles), device_(&device) {
  if (piece && *piece != MatmulChoice{kernel, tiles, matrix_tiles, 1}) {
    try {
      piece_ = std::make_shared<const Matmul>(device, a, b, *piece);
    } catch (const Error&) {
      // A choice this device cannot take (a cache measured without the device profile now in
      // force, or edited by hand): the rule runs, as without a tuning.
    }
  }
  const bool requested_auto = kernel == MatmulKernel::Auto;
  if (kernel == MatmulKernel::Auto)
    kernel = !device.caps().is_software()              ? MatmulKernel::Tiled
             : supports_lanes_matmul(device.caps()) ? MatmulKernel::Lanes
                                                    : MatmulKernel::Registers;
  if (kernel == MatmulKernel::TiledHalf && !device.caps().shader_float16)
    throw Error("matmul: the tiled-half kernel needs f16 arithmetic (shaderFloat16), which '" + device.caps().name +
                "' does not have");
  if (kernel == MatmulKernel::Lanes && !supports_lanes_matmul(device.caps()))
    throw Error("matmul: the lanes kernel needs 8-lane subgroups with shuffle operations in compute shaders");
  if (const std::string missing = kernel == MatmulKernel::Matrix ? missing_matrix_units(device.caps()) : "";
      !missing.empty())
    throw Error("matmul: the coopmat kernel needs " + missing + ", which '" + device.caps().name + "' does not have");
  if (kernel == MatmulKernel::MatrixEmulated && !device.caps().shader_float16)
    throw Error("matmul: the coopmat-emulated kernel needs f16 arithmetic (shaderFloat16), which '" + device.caps().name +
                "' does not have");
  kernel_ = kernel;
  // Matrix units: asked for, or Auto where the device has them (or emulates them, see
  // matrix_units_for_auto) for the types they take.
  const MatrixUnits units = requested_auto ? matrix_units_for_auto(device.caps()) : MatrixUnits::None;
  if (units != MatrixUnits::None && matrix_matmul_types(a, b))
    kernel_ = units == MatrixUnits::Hardware ? MatmulKernel::Matrix : MatmulKernel::MatrixEmulated;
  if (kernel_ == MatmulKernel::Matrix || kernel_ == MatmulKernel::MatrixEmulated) {
    const bool emulated = kernel_ == MatmulKernel::MatrixEmulated;
    const MatrixTiles& t = matrix_tiles_;
    if (t.bk % 16 || !t.warps_m || !t.warps_n || !t.frags_m || !t.frags_n || t.stages < 1 || t.stages > 2)
      throw Error("matmul: matrix tiles " + t.name() +
                  " need at least one warp and fragment, BK a multiple of 16 and 1 or 2 tile buffers");
    if (t.workgroup_size() > device.caps().max_workgroup_invocations)
      throw Error("matmul: matrix tiles " + t.name() + " need " + std::to_string(t.workgroup_size()) +
                  " invocations; maxComputeWorkGroupInvocations is " +
                  std::to_string(device.caps().max_workgroup_invocations));
    // Shared memory is checked against the device when the pipeline is made (from its SPIR-V).
    matrix_source_ = kernel_for(emulated ? kMatrixEmulated : kMatrix, a, b);
    matrix_ = &matrix_pipeline(t);
    // Auto leaves decode's few rows to the vector kernel.
    matrix_min_rows_ = requested_auto ? kMaxVectorRows + 1 : 1;
  }
  // GPUs (Auto) take the matrix-vector kernel for calls of at most kMaxVectorRows rows, as does a
  // device emulating matrix units (it runs what such a GPU runs).
  const bool vector = kernel == MatmulKernel::Vector || kernel == MatmulKernel::VectorShared ||
                      (kernel == MatmulKernel::Tiled && requested_auto) || units == MatrixUnits::Emulated;
  if (vector) {
    const bool shared = kernel == MatmulKernel::VectorShared || !supports_subgroup_matvec(device.caps());
    vector_source_ = kernel_for(shared ? kVectorShared : kVector, a, b, kVectorBuffers,
                                sizeof(VectorPush));
    VectorTiles& v = vector_tiles_;
    v = vector_tiles;
    if (!v.workgroup)
      v.workgroup = b == ElementType::Q6_K                      ? kVectorHalfBlockWorkgroup
                    : element_traits(b).block_elements > 1 ? kVectorBlockWorkgroup
                                                            : kVectorWorkgroup;
    if (!v.cols) v.cols = kVectorCols;
    if (!v.words) v.words = kVectorWords;
    if (!vector_shape_possible(v) || v.workgroup > device.caps().max_workgroup_invocations ||
        v.workgroup > device.caps().max_workgroup_size[0])
      throw Error("matmul: vector tiles " + v.name() + " need a workgroup of a power of two from 16 to " +
                  std::to_string(std::min(device.caps().max_workgroup_invocations, device.caps().max_workgroup_size[0])) +
                  " invocations, 1 to 4 columns and 1 to 8 words");
    // Decode's one row now, so a shape this device cannot run is refused here; 2 to kMaxVectorRows
    // rows when a call first needs them (on lavapipe each pipeline takes about a second to build).
    vector_ = true;
    vector_pipeline(1, {});
  }
  if (kernel == MatmulKernel::Lanes) {
    const uint32_t spec[] = {kLanesRows, kLanesCols};
    lanes_ = &device.pipelines().get(kernel_for(kLanes, a, b), spec);
  }
  if (kernel == MatmulKernel::Registers || kernel == MatmulKernel::Lanes) {
    const uint32_t block[] = {kRegsLanes, kRegsRows, kRegsCols};
    const uint32_t row[] = {kRegsLanes, 1, kRegsRowCols};
    regs_source_ = kernel_for(kRegs, a, b);
    regs_block_ = &device.pipelines().get(*regs_source_, block);
    regs_row_ = &device.pipelines().get(*regs_source_, row);
  }
  const vk::Capabilities& caps = device.caps();
  tiles_ = tiles.bm ? tiles : default_matmul_tiles(caps);
  const MatmulTiles& t = tiles_;
  const bool half = kernel == MatmulKernel::TiledHalf;
  if (const std::string misfit = tiles_misfit(caps, t, half); !misfit.empty()) throw Error("matmul: " + misfit);
  const uint32_t spec[] = {t.workgroup_size(), t.bm, t.bn, t.bk, t.tm, t.tn};
  pipeline_ = &device.pipelines().get(kernel_for(half ? kTiledHalf : kTiled, a, b), spec);
}

Matmul::Matmul(vk::Device& device, ElementType a, ElementType b, const MatmulChoice& choice)
    : Matmul(device, a, b, choice.tiles, choice.kernel, choice.matrix) {
  if (choice.split_k <= 1) return;
  if (!choice.tiled_family() && !choice.matrix_family())
    throw Error("matmul: only the tiled and coopmat kernels split k, not " + std::string(matmul_kernel_name(choice.kernel)));
  if (choice.split_k > kMaxSplitK)
    throw Error("matmul: k is split into at most " + std::to_string(kMaxSplitK) + " slices, not " +
                std::to_string(choice.split_k));
  split_k_ = choice.split_k;
  split_sum_ = &device.pipelines().get({"matmul_split_sum", spirv::matmul_split_sum, 2, sizeof(SplitSumPush)});
}

Matmul::Plan Matmul::plan(const MatmulArgs& args) const {
  const uint32_t lda = args.lda ? args.lda : args.k;
  const uint32_t ldb = args.ldb ? args.ldb : args.k;
  // The CPU kernels read A and B in vectors of 4 (registers) or 8 (lanes) values, matrix-unit
  // tiles 8 at a time.
  const auto aligned = [&](uint32_t n) {
    return args.k % n == 0 && lda % n == 0 && ldb % n == 0 && args.a_offset % n == 0 && args.b_offset % n == 0;
  };
  const auto ceil_div = [](uint32_t x, uint32_t y) { return (x + y - 1) / y; };
  const MatmulKernel tiled = kernel_ == MatmulKernel::TiledHalf ? MatmulKernel::TiledHalf : MatmulKernel::Tiled;
  if (vector_ && aligned(4) && args.m <= kMaxVectorRows)
    return {&vector_pipeline(args.m, {}), {ceil_div(args.n, vector_tiles_.cols), 1, 1},
            kernel_ == MatmulKernel::VectorShared ? MatmulKernel::VectorShared : MatmulKernel::Vector};
  if (matrix_ && args.m >= matrix_min_rows_ && aligned(8) && matrix_ranges_aligned(args)) {
    const MatrixTiles t = matrix_tiles_for_call(args);
    return {t == matrix_tiles_ ? matrix_ : &matrix_pipeline(t), {ceil_div(args.n, t.bn()), ceil_div(args.m, t.bm()), 1},
            kernel_ == MatmulKernel::MatrixEmulated ? MatmulKernel::MatrixEmulated : MatmulKernel::Matrix};
  }
  if (kernel_ == MatmulKernel::Lanes && aligned(8) && args.m >= kLanesMinRows)
    return {lanes_, {ceil_div(args.n, kLanesWidth * kLanesCols), ceil_div(args.m, kLanesRows), 1}, MatmulKernel::Lanes};
  if ((kernel_ == MatmulKernel::Registers || kernel_ == MatmulKernel::Lanes) && aligned(4)) {
    // Decode's one row, a batch's few (2 or 4 rows by 16 columns: the block's 8 rows would be
    // mostly clamped copies), or blocks. Every shape sums each output over k in the same order.
    const uint32_t tm = args.m == 1 ? 1 : args.m <= 2 ? 2 : args.m <= 4 ? 4 : kRegsRows;
    const uint32_t tn = tm < kRegsRows ? kRegsRowCols : kRegsCols;
    const vk::Pipeline* pipeline = tm == 1 ? regs_row_ : tm == kRegsRows ? regs_block_ : &regs_pipeline(tm, tn);
    return {pipeline, {ceil_div(ceil_div(args.n, tn), kRegsLanes), ceil_div(args.m, tm), 1}, MatmulKernel::Registers};
  }
  return {pipeline_, {ceil_div(args.n, tiles_.bn), ceil_div(args.m, tiles_.bm), 1}, tiled};
}

MatmulKernel Matmul::kernel_for_call(const MatmulArgs& args) const { return for_call(args).plan(args).kernel; }

bool Matmul::does_fused_steps(const MatmulArgs& args) const {
  const MatmulKernel k = kernel_for_call(args);
  return k == MatmulKernel::Vector || k == MatmulKernel::VectorShared;
}

MatrixTiles Matmul::matrix_tiles_for_call(const MatmulArgs& args) const {
  const MatrixTiles& t = matrix_tiles_;
  const uint64_t grid = uint64_t((args.n + t.bn() - 1) / t.bn()) * ((args.m + t.bm() - 1) / t.bm());
  return t.adapt && grid < kMatrixFillWorkgroups ? kSmallMatrixTiles : t;
}

const vk::Pipeline& Matmul::matrix_pipeline(const MatrixTiles& t) const {
  const uint32_t spec[] = {t.workgroup_size(), t.warps_m, t.warps_n, t.frags_m, t.frags_n, t.bk, t.stages};
  return device_->pipelines().get(*matrix_source_, spec);
}

const vk::Pipeline& Matmul::regs_pipeline(uint32_t rows, uint32_t cols) const {
  const uint32_t spec[] = {kRegsLanes, rows, cols};
  return device_->pipelines().get(*regs_source_, spec);
}

const vk::Pipeline& Matmul::vector_pipeline(uint32_t rows, const MatmulArgs& steps) const {
  const uint32_t spec[] = {vector_tiles_.workgroup, rows, vector_tiles_.cols, steps.a_norm.buffer ? 1u : 0u,
                           steps.glu_up.buffer ? 1u : 0u, steps.bias.buffer ? 1u : 0u, vector_tiles_.words};
  return device_->pipelines().get(*vector_source_, spec);
}

void Matmul::record(vk::CommandStream& stream, const MatmulArgs& args) const {
  if (const Matmul& m = for_call(args); &m != this) return m.record(stream, args);
  const uint32_t lda = args.lda ? args.lda : args.k;
  const uint32_t ldb = args.ldb ? args.ldb : args.k;
  const uint32_t ldc = args.ldc ? args.ldc : args.n;
  check_operand("A", args.a, args.m, args.k, lda, args.a_offset, a_);
  check_operand("B", args.b, args.n, args.k, ldb, args.b_offset, b_);
  check_operand("C", args.c, args.m, args.n, ldc, args.c_offset, ElementType::F32);
  if (args.has_fused_steps()) {
    if (!does_fused_steps(args))
      throw Error("matmul: a norm, gated output or bias in the same pass needs the vector kernel (at most " +
                  std::to_string(kMaxVectorRows) + " rows, K and offsets multiples of 4); this call runs " +
                  std::string(matmul_kernel_name(kernel_for_call(args))));
    if (args.glu_up.buffer && args.bias.buffer) throw Error("matmul: a bias and a gated output cannot share a pass");
    if (args.a_norm.buffer) check_operand("the norm's weights", args.a_norm, 1, args.k, args.k, 0, ElementType::F32);
    if (args.glu_up.buffer) check_operand("U", args.glu_up, args.n, args.k, ldb, args.b_offset, b_);
    if (args.bias.buffer) check_operand("the bias", args.bias, 1, args.n, args.n, args.bias_offset, ElementType::F32);
    if (args.a_norm.buffer && !(args.norm_eps > 0))
      throw Error("matmul: the norm's epsilon must be positive, got " + std::to_string(args.norm_eps));
  }
  if (args.m == 0 || args.n == 0) return;
  if (split_k_ > 1 && record_split(stream, args)) return;
  const Push push{args.m, args.n, args.k, lda, ldb, ldc, args.a_offset, args.b_offset, args.c_offset,
                  args.accumulate ? 1u : 0u};
  const Plan p = plan(args);
  const vk::Access c_access = args.accumulate ? vk::Access::ReadWrite : vk::Access::Write;
  if (p.kernel != MatmulKernel::Vector && p.kernel != MatmulKernel::VectorShared) {
    stream.dispatch(*p.pipeline, {{args.a, vk::Access::Read}, {args.b, vk::Access::Read}, {args.c, c_access}}, push,
                    p.groups);
    return;
  }
  // The vector kernel binds the fused steps' operands too; an unused one is bound to A, which the
  // pass reads anyway.
  const auto or_a = [&](const vk::BufferRange& r) { return r.buffer ? r : args.a; };
  const vk::Pipeline& pipeline = args.has_fused_steps() ? vector_pipeline(args.m, args) : *p.pipeline;
  stream.dispatch(pipeline,
                  {{args.a, vk::Access::Read},
                   {args.b, vk::Access::Read},
                   {args.c, c_access},
                   {or_a(args.a_norm), vk::Access::Read},
                   {or_a(args.glu_up), vk::Access::Read},
                   {or_a(args.bias), vk::Access::Read}},
                  VectorPush{push, args.bias_offset, args.norm_eps}, p.groups);
}

bool Matmul::record_split(vk::CommandStream& stream, const MatmulArgs& args) const {
  const uint64_t floats = uint64_t(split_k_) * args.m * args.n;
  if (!args.split_scratch.buffer || args.split_scratch.size < floats * 4) return false;

  // Slice z's partial product goes to rows z * m .. of the scratch, packed.
  MatmulArgs part = args;
  part.c = args.split_scratch;
  part.ldc = args.n;
  part.c_offset = 0;
  part.accumulate = false;
  const Plan p = plan(part);
  if (p.kernel != MatmulKernel::Tiled && p.kernel != MatmulKernel::TiledHalf && p.kernel != MatmulKernel::Matrix &&
      p.kernel != MatmulKernel::MatrixEmulated)
    return false;
  const uint32_t lda = args.lda ? args.lda : args.k;
  const uint32_t ldb = args.ldb ? args.ldb : args.k;
  const Push push{args.m, args.n, args.k, lda, ldb, args.n, args.a_offset, args.b_offset, 0, 0};
  stream.dispatch(*p.pipeline,
                  {{args.a, vk::Access::Read}, {args.b, vk::Access::Read}, {args.split_scratch, vk::Access::Write}}, push,
                  {p.groups[0], p.groups[1], split_k_});
  const SplitSumPush sum{args.m, args.n, args.ldc ? args.ldc : args.n, args.c_offset, args.accumulate ? 1u : 0u, split_k_};
  stream.dispatch(*split_sum_,
                  {{args.split_scratch, vk::Access::Read}, {args.c, args.accumulate ? vk::Access::ReadWrite : vk::Access::Write}},
                  sum, {(args.n + kSplitSumWorkgroup - 1) / kSplitSumWorkgroup, args.m, 1});
  return true;
}

uint64_t matmul_kernels_digest() {
  using Variants = std::span<const spirv::ShaderVariant>;
  const spirv::ShaderVariant split_sum[] = {{"matmul_split_sum", spirv::matmul_split_sum}};
  return shader_variants_digest({Variants(spirv::matmul_variants), Variants(spirv::matmul_regs_variants),
                                 Variants(spirv::matmul_lanes_variants), Variants(spirv::matvec_variants),
                                 Variants(spirv::matmul_coopmat_variants), Variants(split_sum)});
}

}  // namespace infini::ops
