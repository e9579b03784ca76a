#include "vk/spirv_requirements.hpp"

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "infini/error.hpp"
#include "vk/capabilities.hpp"

namespace infini::vk {
namespace {

// Numbers from the SPIR-V specification (unified1), section 3: the few instructions, storage
// classes, decorations and capabilities this reader needs. They never change once published.
enum Op : uint32_t {
  OpExecutionMode = 16,
  OpCapability = 17,
  OpTypeBool = 20,
  OpTypeInt = 21,
  OpTypeFloat = 22,
  OpTypeVector = 23,
  OpTypeMatrix = 24,
  OpTypeArray = 28,
  OpTypeStruct = 30,
  OpTypePointer = 32,
  OpConstantTrue = 41,
  OpConstantFalse = 42,
  OpConstant = 43,
  OpConstantComposite = 44,
  OpSpecConstantTrue = 48,
  OpSpecConstantFalse = 49,
  OpSpecConstant = 50,
  OpSpecConstantComposite = 51,
  OpSpecConstantOp = 52,
  OpVariable = 59,
  OpDecorate = 71,
  OpExecutionModeId = 331,
};
constexpr uint32_t kMagic = 0x07230203;
constexpr uint32_t kStorageWorkgroup = 4;
constexpr uint32_t kDecorationSpecId = 1, kDecorationBuiltIn = 11, kBuiltInWorkgroupSize = 25;
constexpr uint32_t kModeLocalSize = 17, kModeLocalSizeId = 38;

uint64_t evaluate(uint32_t op, std::span<const uint64_t> a) {
  auto need = [&](size_t n) {
    if (a.size() < n) throw Error("SPIR-V OpSpecConstantOp " + std::to_string(op) + " has too few operands");
  };
  need(op == 169 ? 3 : op == 126 || op == 200 || op == 168 ? 1 : 2);
  const auto s = [&](size_t i) { return int64_t(int32_t(uint32_t(a[i]))); };
  switch (op) {
    case 126: return uint64_t(-s(0));                                    // OpSNegate
    case 128: return a[0] + a[1];                                        // OpIAdd
    case 130: return a[0] - a[1];                                        // OpISub
    case 132: return a[0] * a[1];                                        // OpIMul
    case 134: if (!a[1]) break; return uint32_t(a[0]) / uint32_t(a[1]);  // OpUDiv
    case 135: if (!a[1]) break; return uint64_t(s(0) / s(1));            // OpSDiv
    case 137: if (!a[1]) break; return uint32_t(a[0]) % uint32_t(a[1]);  // OpUMod
    case 139: if (!a[1]) break; return uint64_t(s(0) % s(1));            // OpSRem
    case 168: return !a[0];                                              // OpLogicalNot
    case 169: return a[0] ? a[1] : a[2];                                 // OpSelect
    case 170: return a[0] == a[1];                                       // OpIEqual
    case 171: return a[0] != a[1];                                       // OpINotEqual
    case 172: return uint32_t(a[0]) > uint32_t(a[1]);                    // OpUGreaterThan
    case 173: return s(0) > s(1);                                        // OpSGreaterThan
    case 174: return uint32_t(a[0]) >= uint32_t(a[1]);                   // OpUGreaterThanEqual
    case 175: return s(0) >= s(1);                                       // OpSGreaterThanEqual
    case 176: return uint32_t(a[0]) < uint32_t(a[1]);                    // OpULessThan
    case 177: return s(0) < s(1);                                        // OpSLessThan
    case 178: return uint32_t(a[0]) <= uint32_t(a[1]);                   // OpULessThanEqual
    case 179: return s(0) <= s(1);                                       // OpSLessThanEqual
    case 194: return uint32_t(a[0]) >> (a[1] & 31);                      // OpShiftRightLogical
    case 196: return uint32_t(a[0]) << (a[1] & 31);                      // OpShiftLeftLogical
    case 197: return a[0] | a[1];                                        // OpBitwiseOr
    case 198: return a[0] ^ a[1];                                        // OpBitwiseXor
    case 199: return a[0] & a[1];                                        // OpBitwiseAnd
    case 200: return ~a[0];                                              // OpNot
    default: throw Error("SPIR-V OpSpecConstantOp with opcode " + std::to_string(op) + " is not understood");
  }
  throw Error("SPIR-V specialization constant divides by zero");
}

VkSubgroupFeatureFlags subgroup_bit(uint32_t capability) {
  switch (capability) {
    case 61: return VK_SUBGROUP_FEATURE_BASIC_BIT;             // GroupNonUniform
    case 62: return VK_SUBGROUP_FEATURE_VOTE_BIT;              // GroupNonUniformVote
    case 63: return VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;        // GroupNonUniformArithmetic
    case 64: return VK_SUBGROUP_FEATURE_BALLOT_BIT;            // GroupNonUniformBallot
    case 65: return VK_SUBGROUP_FEATURE_SHUFFLE_BIT;           // GroupNonUniformShuffle
    case 66: return VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT;  // GroupNonUniformShuffleRelative
    case 67: return VK_SUBGROUP_FEATURE_CLUSTERED_BIT;         // GroupNonUniformClustered
    case 68: return VK_SUBGROUP_FEATURE_QUAD_BIT;              // GroupNonUniformQuad
    default: return 0;
  }
}

}  // namespace

SpirvRequirements spirv_requirements(std::span<const uint32_t> words, std::span<const uint32_t> spec) {
  if (words.size() < 5 || words[0] != kMagic) throw Error("not a SPIR-V module (bad magic number)");
  SpirvRequirements out;
  std::unordered_map<uint32_t, uint32_t> spec_ids;       // result id -> SpecId
  std::unordered_set<uint32_t> workgroup_size_ids;       // composites decorated BuiltIn WorkgroupSize
  std::unordered_map<uint32_t, uint64_t> values;         // constant id -> value (specialized)
  std::unordered_map<uint32_t, std::vector<uint32_t>> composites;
  std::unordered_map<uint32_t, uint64_t> type_bytes;     // type id -> size
  std::unordered_map<uint32_t, uint32_t> pointee;        // Workgroup pointer type id -> pointee type
  std::array<uint32_t, 3> local_size_ids{};
  bool local_size_by_id = false;

  auto value_of = [&](uint32_t id) -> uint64_t {
    auto it = values.find(id);
    if (it == values.end()) throw Error("SPIR-V refers to constant %" + std::to_string(id) + " before defining it");
    return it->second;
  };
  auto bytes_of = [&](uint32_t id) -> uint64_t {
    auto it = type_bytes.find(id);
    return it == type_bytes.end() ? 0 : it->second;  // opaque and pointer types hold no shared memory
  };
  auto specialized = [&](uint32_t id, uint64_t fallback) -> uint64_t {
    auto it = spec_ids.find(id);
    return it != spec_ids.end() && it->second < spec.size() ? spec[it->second] : fallback;
  };

  for (size_t at = 5; at < words.size();) {
    const uint32_t count = words[at] >> 16, op = words[at] & 0xffff;
    if (count == 0 || at + count > words.size()) throw Error("SPIR-V instruction at word " + std::to_string(at) + " is truncated");
    const std::span<const uint32_t> w = words.subspan(at, count);
    at += count;
    switch (op) {
      case OpCapability:
        if (count < 2) break;
        switch (w[1]) {
          case 9: out.float16 = true; break;           // Float16
          case 39: out.int8 = true; break;             // Int8
          case 4433: out.storage_16bit = true; break;  // StorageBuffer16BitAccess
          case 4448: out.storage_8bit = true; break;   // StorageBuffer8BitAccess
          case 5345: out.vulkan_memory_model = true; break;    // VulkanMemoryModel
          case 5357: out.cooperative_matrix_nv = true; break;  // CooperativeMatrixNV
          case 6022: out.cooperative_matrix_khr = true; break;  // CooperativeMatrixKHR
          default: out.subgroup_operations |= subgroup_bit(w[1]);
        }
        break;
      case OpExecutionMode:
        if (count >= 6 && w[2] == kModeLocalSize) out.local_size = {w[3], w[4], w[5]};
        break;
      case OpExecutionModeId:
        if (count >= 6 && w[2] == kModeLocalSizeId) {
          local_size_ids = {w[3], w[4], w[5]};
          local_size_by_id = true;
        }
        break;
      case OpDecorate:
        if (count >= 4 && w[2] == kDecorationSpecId) spec_ids[w[1]] = w[3];
        if (count >= 4 && w[2] == kDecorationBuiltIn && w[3] == kBuiltInWorkgroupSize) workgroup_size_ids.insert(w[1]);
        break;
      case OpTypeBool: type_bytes[w[1]] = 4; break;
      case OpTypeInt:
      case OpTypeFloat: type_bytes[w[1]] = w[2] / 8; break;
      case OpTypeVector:
      case OpTypeMatrix: type_bytes[w[1]] = bytes_of(w[2]) * w[3]; break;
      case OpTypeArray: type_bytes[w[1]] = bytes_of(w[2]) * value_of(w[3]); break;
      case OpTypeStruct: {
        uint64_t sum = 0;
        for (size_t i = 2; i < count; ++i) sum += bytes_of(w[i]);
        type_bytes[w[1]] = sum;
        break;
      }
      case OpTypePointer:
        if (w[2] == kStorageWorkgroup) pointee[w[1]] = w[3];
        break;
      case OpConstantTrue: values[w[2]] = 1; break;
      case OpConstantFalse: values[w[2]] = 0; break;
      case OpConstant: values[w[2]] = count > 4 ? (uint64_t(w[4]) << 32 | w[3]) : w[3]; break;
      case OpSpecConstantTrue: values[w[2]] = specialized(w[2], 1) != 0; break;
      case OpSpecConstantFalse: values[w[2]] = specialized(w[2], 0) != 0; break;
      case OpSpecConstant: values[w[2]] = specialized(w[2], count > 4 ? (uint64_t(w[4]) << 32 | w[3]) : w[3]); break;
      case OpConstantComposite:
      case OpSpecConstantComposite: composites[w[2]].assign(w.begin() + 3, w.end()); break;
      case OpSpecConstantOp: {
        if (count < 4) throw Error("SPIR-V OpSpecConstantOp is truncated");
        std::vector<uint64_t> operands;
        // Only integer and boolean operations size arrays; composite ones (OpCompositeExtract...)
        // carry literal indices, and are taken apart here when they pick from a composite.
        if (w[3] == 81 && count >= 6) {  // OpCompositeExtract of a constant composite
          auto it = composites.find(w[4]);
          if (it == composites.end() || w[5] >= it->second.size()) throw Error("SPIR-V composite extract out of range");
          values[w[2]] = value_of(it->second[w[5]]);
          break;
        }
        for (size_t i = 4; i < count; ++i) operands.push_back(value_of(w[i]));
        values[w[2]] = evaluate(w[3], operands);
        break;
      }
      case OpVariable:
        if (count >= 4 && w[3] == kStorageWorkgroup) {
          auto it = pointee.find(w[1]);
          if (it != pointee.end()) out.shared_bytes += bytes_of(it->second);
        }
        break;
      default: break;
    }
  }
  if (local_size_by_id)
    for (int i = 0; i < 3; ++i) out.local_size[i] = uint32_t(value_of(local_size_ids[i]));
  // A WorkgroupSize built-in overrides the execution mode (that is how local_size_x_id lowers).
  for (uint32_t id : workgroup_size_ids) {
    auto it = composites.find(id);
    if (it == composites.end() || it->second.size() != 3) throw Error("SPIR-V WorkgroupSize is not a 3-component constant");
    for (int i = 0; i < 3; ++i) out.local_size[i] = uint32_t(value_of(it->second[i]));
  }
  return out;
}

std::string unmet_requirement(std::string_view kernel, const SpirvRequirements& needs, const Capabilities& caps) {
  const std::string k = "kernel " + std::string(kernel);
  if (needs.shared_bytes > caps.max_shared_memory_bytes)
    return k + " needs " + std::to_string(needs.shared_bytes) + " bytes of shared memory; the device allows " +
           "maxComputeSharedMemorySize " + std::to_string(caps.max_shared_memory_bytes);
  const uint64_t invocations = uint64_t(needs.local_size[0]) * needs.local_size[1] * needs.local_size[2];
  if (invocations > caps.max_workgroup_invocations)
    return k + " needs workgroups of " + std::to_string(invocations) + " invocations; the device allows " +
           "maxComputeWorkGroupInvocations " + std::to_string(caps.max_workgroup_invocations);
  for (int i = 0; i < 3; ++i)
    if (needs.local_size[i] > caps.max_workgroup_size[i])
      return k + " needs a workgroup size of " + std::to_string(needs.local_size[i]) + " in dimension " +
             std::to_string(i) + "; the device allows maxComputeWorkGroupSize " + std::to_string(caps.max_workgroup_size[i]);
  if (needs.float16 && !caps.shader_float16) return k + " needs shaderFloat16, which the device does not have";
  if (needs.int8 && !caps.shader_int8) return k + " needs shaderInt8, which the device does not have";
  if (needs.storage_16bit && !caps.storage_buffer_16bit)
    return k + " needs storageBuffer16BitAccess, which the device does not have";
  if (needs.storage_8bit && !caps.storage_buffer_8bit)
    return k + " needs storageBuffer8BitAccess, which the device does not have";
  if (needs.cooperative_matrix_nv && !caps.cooperative_matrix_nv)
    return k + " needs cooperative matrices (VK_NV_cooperative_matrix), which the device does not have";
  if (needs.cooperative_matrix_khr && !caps.cooperative_matrix_khr)
    return k + " needs cooperative matrices (VK_KHR_cooperative_matrix), which the device does not have";
  if (needs.cooperative_matrix_khr && !caps.fragment_shape().m)
    return k + " needs cooperative matrices of f16 with f32 sums in 8s or 16s, which the device does not have";
  if ((needs.cooperative_matrix_nv || needs.cooperative_matrix_khr) && !caps.compute_full_subgroups)
    return k + " needs full subgroups (computeFullSubgroups) for its cooperative matrices, which the device does not have";
  if ((needs.cooperative_matrix_nv || needs.cooperative_matrix_khr) && !caps.fragment_lanes())
    return k + " needs subgroups of 32 lanes (or, for KHR, of sizes dividing 32) for its cooperative matrices, "
               "which the device does not have";
  if (needs.vulkan_memory_model && !caps.vulkan_memory_model)
    return k + " needs vulkanMemoryModel, which the device does not have";
  if (needs.subgroup_operations) {
    const VkSubgroupFeatureFlags have = caps.subgroups_in_compute ? caps.subgroup_operations : 0;
    if (const VkSubgroupFeatureFlags missing = needs.subgroup_operations & ~have)
      return k + " needs subgroup operations [" + subgroup_operation_names(missing) + "] in compute shaders, " +
             "which the device does not have";
  }
  return {};
}

}  // namespace infini::vk
