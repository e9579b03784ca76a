#include "vk/pipeline_cache_file.hpp"
#include "util/environment.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace infini::vk {

std::filesystem::path user_cache_directory() {
  if (const auto dir = env::value(env::Variable::CacheDir)) return *dir;
  if (const auto xdg = env::value(env::Variable::XdgCacheHome)) return std::filesystem::path(*xdg) / "infini";
  if (const auto home = env::value(env::Variable::Home)) return std::filesystem::path(*home) / ".cache" / "infini";
  return {};
}

std::string device_cache_stem(const Capabilities& caps) {
  char name[96];
  int n = std::snprintf(name, sizeof name, "%04x-%04x-%08x-", caps.vendor_id, caps.device_id, caps.driver_version);
  for (uint8_t b : caps.pipeline_cache_uuid) n += std::snprintf(name + n, sizeof name - static_cast<size_t>(n), "%02x", b);
  return name;
}

std::filesystem::path pipeline_cache_path(const std::filesystem::path& dir, const Capabilities& caps) {
  return dir / ("pipelines-" + device_cache_stem(caps) + ".bin");
}

bool pipeline_cache_matches(const std::vector<uint8_t>& data, const Capabilities& caps) {
  VkPipelineCacheHeaderVersionOne header{};
  if (data.size() < sizeof header) return false;
  std::memcpy(&header, data.data(), sizeof header);
  return header.headerSize >= sizeof header && header.headerSize <= data.size() &&
         header.headerVersion == VK_PIPELINE_CACHE_HEADER_VERSION_ONE && header.vendorID == caps.vendor_id &&
         header.deviceID == caps.device_id &&
         std::memcmp(header.pipelineCacheUUID, caps.pipeline_cache_uuid.data(), VK_UUID_SIZE) == 0;
}

std::optional<std::vector<uint8_t>> load_pipeline_cache(const std::filesystem::path& file, const Capabilities& caps) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::vector<uint8_t> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!pipeline_cache_matches(data, caps)) return std::nullopt;
  return data;
}

bool save_pipeline_cache(const std::filesystem::path& file, const std::vector<uint8_t>& data) {
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  if (ec) return false;
  const std::filesystem::path tmp = file.string() + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return false;
    out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
    if (!out.flush()) {
      std::filesystem::remove(tmp, ec);
      return false;
    }
  }
  std::filesystem::rename(tmp, file, ec);
  if (ec) std::filesystem::remove(tmp, ec);
  return !ec;
}

}  // namespace infini::vk
