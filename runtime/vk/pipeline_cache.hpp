#pragma once
// Compute pipelines keyed by kernel and specialization constants: created on first use, kept
// for the device's lifetime, and backed by a VkPipelineCache that persists across runs.
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "vk/kernel.hpp"
#include "vk/owned.hpp"

namespace infini::vk {

class Device;

struct Pipeline {
  std::string name;
  uint32_t storage_buffers = 0;
  uint32_t push_constant_bytes = 0;
  Owned<VkDescriptorSetLayout> set_layout;
  Owned<VkPipelineLayout> layout;
  Owned<VkPipeline> pipeline;
};

class PipelineCache {
 public:
  PipelineCache(Device& device, bool use_disk);
  ~PipelineCache();  // saves the cache file
  PipelineCache(const PipelineCache&) = delete;
  PipelineCache& operator=(const PipelineCache&) = delete;

  // The pipeline for `kernel` with specialization constant i set to spec_constants[i].
  // The reference stays valid for the device's lifetime. Thread-safe.
  const Pipeline& get(const KernelSource& kernel, std::span<const uint32_t> spec_constants = {});

  size_t pipeline_count() const;
  bool loaded_from_disk() const noexcept { return loaded_from_disk_; }
  const std::filesystem::path& file() const noexcept { return file_; }  // empty when not on disk
  void save() const;

 private:
  Device& device_;
  std::filesystem::path file_;
  bool loaded_from_disk_ = false;
  Owned<VkPipelineCache> cache_;
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Pipeline>> pipelines_;
};

}  // namespace infini::vk
