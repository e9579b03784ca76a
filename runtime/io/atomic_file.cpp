// Temp-file-and-rename writing (see atomic_file.hpp). The same scheme as write_npy_f32: a unique
// temp name with O_EXCL so concurrent writers of one target never share a temp file.
#include "io/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#include "infini/error.hpp"
#include "infini/printable.hpp"

namespace infini::io {

namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what) {
  throw Error(printable(path.string(), false) + ": " + what);
}

}  // namespace

AtomicFile::AtomicFile(std::filesystem::path path) : path_(std::move(path)) {
  if (path_.filename().empty()) fail(path_, "not a file name");
  static std::atomic<unsigned> counter{0};
  const std::filesystem::path dir = path_.parent_path().empty() ? std::filesystem::path(".") : path_.parent_path();
  for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
    std::string leaf = ".";  // appended piecewise: GCC 12 warns falsely (-Wrestrict) on "." + string
    leaf += path_.filename().string();
    leaf += ".tmp-";
    leaf += std::to_string(::getpid());
    leaf += '-';
    leaf += std::to_string(counter.fetch_add(1));
    tmp_ = dir / leaf;
    fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0 && errno != EEXIST) break;
  }
  if (fd_ < 0) fail(path_, "cannot create a temporary file in " + dir.string() + ": " + std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(tmp_.c_str());
}

void AtomicFile::write(std::span<const std::byte> bytes) {
  if (fd_ < 0) fail(path_, "write after commit");
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), std::min<std::size_t>(bytes.size(), std::size_t(1) << 30));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(path_, std::string("write failed: ") + std::strerror(errno));
    if (n == 0) fail(path_, "short write: the device accepted no more data");
    bytes = bytes.subspan(static_cast<std::size_t>(n));
    written_ += static_cast<std::size_t>(n);
  }
}

void AtomicFile::commit() {
  if (fd_ < 0) fail(path_, "commit twice");
  // Data must be on disk before the rename is, or a crash could leave an empty file behind.
  if (::fsync(fd_) != 0) fail(path_, std::string("cannot flush to disk: ") + std::strerror(errno));
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail(path_, std::string("cannot close: ") + std::strerror(errno));
  if (::rename(tmp_.c_str(), path_.c_str()) != 0)
    fail(path_, std::string("cannot rename the temporary file into place: ") + std::strerror(errno));
  committed_ = true;
  // Make the rename itself durable; failure here loses nothing already visible, so ignore it.
  const std::filesystem::path dir = path_.parent_path().empty() ? std::filesystem::path(".") : path_.parent_path();
  if (const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace infini::io
