#pragma once
// Persistence of VkPipelineCache data across runs, one file per device and driver under the
// user's cache directory. Data is checked against the device's header before Vulkan sees it:
// drivers are not required to survive foreign or corrupt cache data.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "vk/capabilities.hpp"

namespace infini::vk {

// $INFINI_CACHE_DIR, else $XDG_CACHE_HOME/infini, else $HOME/.cache/infini; empty when none.
std::filesystem::path user_cache_directory();

// "<vendor>-<device>-<driver>-<cache uuid>" in hex: what names a device's cache files, so that a
// driver update changes the names.
std::string device_cache_stem(const Capabilities& caps);

// "pipelines-<device_cache_stem>.bin".
std::filesystem::path pipeline_cache_path(const std::filesystem::path& dir, const Capabilities& caps);

// True when `data` starts with a VkPipelineCacheHeaderVersionOne for exactly this device.
bool pipeline_cache_matches(const std::vector<uint8_t>& data, const Capabilities& caps);

// The file's data when it exists and matches the device; nothing otherwise.
std::optional<std::vector<uint8_t>> load_pipeline_cache(const std::filesystem::path& file, const Capabilities& caps);

// Writes to a temporary file and renames it, so readers never see a half-written cache.
// Returns false (and changes nothing) when the directory is not writable.
bool save_pipeline_cache(const std::filesystem::path& file, const std::vector<uint8_t>& data);

}  // namespace infini::vk
