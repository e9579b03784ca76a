#pragma once
// A whole file mapped read-only into memory. Model weights are used straight from the mapping,
// so loading a multi-GB GGUF file costs page faults, not a copy. The mapping lives as long as the
// object; spans into bytes() dangle after it is destroyed.
//
// Like any mmap, a file that another process truncates while it is mapped raises SIGBUS on access;
// model files are not expected to change under a running program.
#include <cstddef>
#include <filesystem>
#include <span>

namespace infini::io {

class MappedFile {
 public:
  // Throws infini::Error "<path>: cannot open: <reason>" (or stat/map failure, not a regular file).
  explicit MappedFile(const std::filesystem::path& path);
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const std::byte> bytes() const { return {data_, size_}; }

 private:
  void unmap() noexcept;

  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace infini::io
