#pragma once
// A file that appears all at once: data goes to a temporary file next to the target (same
// filesystem, so rename is atomic), which commit() flushes to disk and renames over the target.
// Readers and crashes never see a half-written file; a writer destroyed without commit() (an
// exception, a failed write) removes its temporary file.
#include <cstddef>
#include <filesystem>
#include <span>

namespace infini::io {

class AtomicFile {
 public:
  // Creates "<dir>/.<name>.tmp-<pid>-<n>". Throws infini::Error naming `path` on failure.
  explicit AtomicFile(std::filesystem::path path);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  void write(std::span<const std::byte> bytes);  // throws on a short write or I/O error
  void commit();                                 // fsync, close, rename into place
  std::size_t written() const { return written_; }

 private:
  std::filesystem::path path_, tmp_;
  int fd_ = -1;
  std::size_t written_ = 0;
  bool committed_ = false;
};

}  // namespace infini::io
