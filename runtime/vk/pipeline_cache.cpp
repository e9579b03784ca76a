#include "vk/pipeline_cache.hpp"

#include <cstdio>

#include "vk/check.hpp"
#include "vk/device.hpp"
#include "vk/pipeline_cache_file.hpp"
#include "vk/spirv_requirements.hpp"

namespace infini::vk {

PipelineCache::PipelineCache(Device& device, bool use_disk) : device_(device) {
  std::vector<uint8_t> initial;
  if (!device.caps().pipeline_cache) return;  // a quirk: build every pipeline without a cache
  if (use_disk) {
    if (auto dir = user_cache_directory(); !dir.empty()) file_ = pipeline_cache_path(dir, device.caps());
    if (!file_.empty()) {
      if (auto data = load_pipeline_cache(file_, device.caps())) {
        initial = std::move(*data);
        loaded_from_disk_ = true;
      }
    }
  }
  VkPipelineCacheCreateInfo info{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  info.initialDataSize = initial.size();
  info.pInitialData = initial.empty() ? nullptr : initial.data();
  VkPipelineCache cache = VK_NULL_HANDLE;
  INFINI_VK_CHECK(vkCreatePipelineCache(device.handle(), &info, nullptr, &cache));
  cache_ = Owned<VkPipelineCache>(device.handle(), cache, vkDestroyPipelineCache);
}

PipelineCache::~PipelineCache() {
  try {
    save();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "infini: warning: pipeline cache not saved: %s\n", e.what());
  }
}

void PipelineCache::save() const {
  if (file_.empty() || !cache_) return;
  std::lock_guard lock(mutex_);
  if (pipelines_.empty()) return;  // nothing new to remember
  size_t size = 0;
  INFINI_VK_CHECK(vkGetPipelineCacheData(device_.handle(), cache_.get(), &size, nullptr));
  std::vector<uint8_t> data(size);
  INFINI_VK_CHECK(vkGetPipelineCacheData(device_.handle(), cache_.get(), &size, data.data()));
  data.resize(size);
  save_pipeline_cache(file_, data);  // best effort: a read-only home only costs compile time
}

size_t PipelineCache::pipeline_count() const {
  std::lock_guard lock(mutex_);
  return pipelines_.size();
}

const Pipeline& PipelineCache::get(const KernelSource& kernel, std::span<const uint32_t> spec_constants) {
  std::string key(kernel.name);
  for (uint32_t v : spec_constants) key += ':' + std::to_string(v);

  std::lock_guard lock(mutex_);
  if (auto it = pipelines_.find(key); it != pipelines_.end()) return *it->second;

  const Capabilities& caps = device_.caps();
  if (kernel.push_constant_bytes > caps.max_push_constants_bytes)
    throw Error("kernel " + std::string(kernel.name) + " needs " + std::to_string(kernel.push_constant_bytes) +
                " bytes of push constants; the device allows maxPushConstantsSize " +
                std::to_string(caps.max_push_constants_bytes));
  if (kernel.storage_buffers > caps.max_storage_buffers_per_stage)
    throw Error("kernel " + std::string(kernel.name) + " binds " + std::to_string(kernel.storage_buffers) +
                " storage buffers; the device allows maxPerStageDescriptorStorageBuffers " +
                std::to_string(caps.max_storage_buffers_per_stage));
  if (kernel.spirv.empty()) throw Error("kernel " + std::string(kernel.name) + " has no SPIR-V");
  const SpirvRequirements needs = spirv_requirements(kernel.spirv, spec_constants);
  if (std::string unmet = unmet_requirement(kernel.name, needs, caps); !unmet.empty()) throw Error(unmet);

  VkDevice dev = device_.handle();
  auto p = std::make_unique<Pipeline>();
  p->name = std::string(kernel.name);
  p->storage_buffers = kernel.storage_buffers;
  p->push_constant_bytes = kernel.push_constant_bytes;

  std::vector<VkDescriptorSetLayoutBinding> bindings(kernel.storage_buffers);
  for (uint32_t i = 0; i < kernel.storage_buffers; ++i)
    bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  set_info.bindingCount = kernel.storage_buffers;
  set_info.pBindings = bindings.data();
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  INFINI_VK_CHECK(vkCreateDescriptorSetLayout(dev, &set_info, nullptr, &set_layout));
  p->set_layout = Owned<VkDescriptorSetLayout>(dev, set_layout, vkDestroyDescriptorSetLayout);

  VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, kernel.push_constant_bytes};
  VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  layout_info.setLayoutCount = 1;
  layout_info.pSetLayouts = &set_layout;
  layout_info.pushConstantRangeCount = kernel.push_constant_bytes ? 1 : 0;
  layout_info.pPushConstantRanges = &push;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  INFINI_VK_CHECK(vkCreatePipelineLayout(dev, &layout_info, nullptr, &layout));
  p->layout = Owned<VkPipelineLayout>(dev, layout, vkDestroyPipelineLayout);

  VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  module_info.codeSize = kernel.spirv.size_bytes();
  module_info.pCode = kernel.spirv.data();
  VkShaderModule module_handle = VK_NULL_HANDLE;
  INFINI_VK_CHECK(vkCreateShaderModule(dev, &module_info, nullptr, &module_handle));
  Owned<VkShaderModule> module(dev, module_handle, vkDestroyShaderModule);

  std::vector<VkSpecializationMapEntry> entries(spec_constants.size());
  for (uint32_t i = 0; i < entries.size(); ++i) entries[i] = {i, i * 4u, 4};
  std::vector<uint32_t> values(spec_constants.begin(), spec_constants.end());
  if (needs.cooperative_matrix_khr) {
    // The device's fragment shape, constants 20-22 of common/fragments.glsl.
    if (spec_constants.size() > 20)
      throw Error("kernel " + std::string(kernel.name) + " has " + std::to_string(spec_constants.size()) +
                  " specialization constants; ids 20-22 are the matrix fragments' shape");
    const MatrixShape shape = device_.caps().fragment_shape();
    for (const uint32_t size : {shape.m, shape.n, shape.k}) {
      entries.push_back({uint32_t(20 + entries.size() - spec_constants.size()), uint32_t(values.size() * 4), 4});
      values.push_back(size);
    }
  }
  VkSpecializationInfo spec{static_cast<uint32_t>(entries.size()), entries.data(), values.size() * sizeof(uint32_t),
                            values.data()};

  VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = module_handle;
  info.stage.pName = "main";
  info.stage.pSpecializationInfo = entries.empty() ? nullptr : &spec;
  // Cooperative matrices are operated on by whole subgroups: every lane of each must be there,
  // and where the size varies (32 to 64 on AMD) it is asked to be the fragments' 32.
  VkPipelineShaderStageRequiredSubgroupSizeCreateInfo lanes{
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO};
  if (needs.cooperative_matrix_nv || needs.cooperative_matrix_khr) {
    info.stage.flags |= VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
    if (device_.caps().fragment_lanes_required()) {
      lanes.requiredSubgroupSize = device_.caps().fragment_lanes();
      info.stage.pNext = &lanes;
    }
  }
  info.layout = layout;
  if (device_.captures_statistics()) info.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  VkPipeline pipeline = VK_NULL_HANDLE;
  INFINI_VK_CHECK(vkCreateComputePipelines(dev, cache_.get(), 1, &info, nullptr, &pipeline));
  p->pipeline = Owned<VkPipeline>(dev, pipeline, vkDestroyPipeline);

  return *pipelines_.emplace(key, std::move(p)).first->second;
}

}  // namespace infini::vk
