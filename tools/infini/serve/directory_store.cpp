#include "serve/directory_store.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>

#include "infini/error.hpp"

namespace infini::serve {
namespace {

std::string os_error(const std::filesystem::path& p, const char* what) {
  return p.string() + ": cannot " + what + " (" + std::strerror(errno) + ")";
}

// Holds the directory's lock file exclusively for one compare-and-set.
class DirectoryLock {
 public:
  explicit DirectoryLock(const std::filesystem::path& dir) {
    const std::filesystem::path p = dir / ".infini-store.lock";
    fd_ = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw Error(os_error(p, "open the lock file"));
    while (::flock(fd_, LOCK_EX) != 0)
      if (errno != EINTR) {
        ::close(fd_);
        throw Error(os_error(p, "lock"));
      }
  }
  ~DirectoryLock() { ::close(fd_); }  // closing releases the flock
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

 private:
  int fd_ = -1;
};

// The whole file, or its first `limit` bytes; nullopt when it does not exist.
std::optional<std::vector<std::byte>> read_file(const std::filesystem::path& p, std::optional<size_t> limit) {
  std::ifstream in(p, std::ios::binary | std::ios::ate);
  if (!in) return std::nullopt;
  size_t size = size_t(in.tellg());
  if (limit) size = std::min(size, *limit);
  in.seekg(0);
  std::vector<std::byte> bytes(size);
  in.read(reinterpret_cast<char*>(bytes.data()), std::streamsize(size));
  bytes.resize(size_t(in.gcount()));
  return bytes;
}

void sync_directory(const std::filesystem::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

// Removes a temporary record file unless it was renamed into place.
class TemporaryFile {
 public:
  explicit TemporaryFile(std::filesystem::path p) : path_(std::move(p)) {}
  ~TemporaryFile() {
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  const std::filesystem::path& path() const { return path_; }
  void published() { path_.clear(); }

 private:
  std::filesystem::path path_;
};

}  // namespace

DirectoryStore::DirectoryStore(std::filesystem::path dir, std::chrono::seconds idle_expiry)
    : dir_(std::move(dir)), idle_expiry_(idle_expiry) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (!std::filesystem::is_directory(dir_)) throw Error(dir_.string() + ": cannot create the store directory");
  DirectoryLock probe(dir_);  // fails early on a read-only directory
  // Temporary files a crashed writer left behind; recent ones may belong to a live replica.
  const auto stale = std::filesystem::file_time_type::clock::now() - std::chrono::hours(1);
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with(".") && name.find(".tmp-") != std::string::npos && entry.last_write_time(ec) < stale)
      std::filesystem::remove(entry.path(), ec);
  }
}

std::filesystem::path DirectoryStore::file(const std::string& id) const { return dir_ / (id + ".session"); }

// A record's file is rewritten by every commit, so its time is when the session was last used.
bool DirectoryStore::expired(const std::filesystem::path& record) const {
  if (idle_expiry_.count() <= 0) return false;
  std::error_code ec;
  const auto written = std::filesystem::last_write_time(record, ec);
  return !ec && std::filesystem::file_time_type::clock::now() - written > idle_expiry_;
}

std::filesystem::path DirectoryStore::write_temporary(const std::string& id, const SessionRecord& record) const {
  static std::atomic<uint64_t> counter{0};
  const std::filesystem::path tmp =
      dir_ / ("." + id + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  const std::vector<std::byte> bytes = encode_record(record);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(os_error(tmp, "create"));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string message = os_error(tmp, "write");
      ::close(fd);
      ::unlink(tmp.c_str());
      throw Error(message);
    }
    done += size_t(n);
  }
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!synced) {
    ::unlink(tmp.c_str());
    throw Error(os_error(tmp, "fsync"));
  }
  return tmp;
}

void DirectoryStore::publish(const std::filesystem::path& tmp, const std::string& id) const {
  if (::rename(tmp.c_str(), file(id).c_str()) != 0) throw Error(os_error(file(id), "rename into"));
  sync_directory(dir_);
}

bool DirectoryStore::create(const std::string& id, const SessionRecord& record) {
  TemporaryFile tmp(write_temporary(id, record));
  DirectoryLock lock(dir_);
  if (std::filesystem::exists(file(id))) return false;
  publish(tmp.path(), id);
  tmp.published();
  return true;
}

std::optional<SessionRecord> DirectoryStore::load(const std::string& id, bool with_state) {
  // Renames are atomic, so a reader sees a whole old record or a whole new one.
  constexpr size_t kHeader = 40;
  if (expired(file(id))) return std::nullopt;  // removed by the next list() or count()
  std::optional<std::vector<std::byte>> bytes = read_file(file(id), with_state ? std::nullopt : std::optional(kHeader));
  if (!bytes) return std::nullopt;
  // The header alone decodes as a record with no state.
  uint64_t state_bytes = 0;
  if (!with_state && bytes->size() == kHeader) {
    std::memcpy(&state_bytes, bytes->data() + 32, 8);
    std::memset(bytes->data() + 32, 0, 8);
  }
  SessionRecord r = decode_record(*bytes, file(id).string());
  if (!with_state) r.state_bytes = state_bytes;
  return r;
}

CommitResult DirectoryStore::commit(const std::string& id, uint64_t expected, const SessionRecord& next) {
  TemporaryFile tmp(write_temporary(id, next));
  DirectoryLock lock(dir_);
  const std::optional<SessionRecord> current = load(id, false);
  if (!current) return CommitResult::Missing;
  if (current->version != expected) return CommitResult::Stale;
  publish(tmp.path(), id);
  tmp.published();
  return CommitResult::Committed;
}

bool DirectoryStore::remove(const std::string& id) {
  DirectoryLock lock(dir_);
  if (::unlink(file(id).c_str()) == 0) {
    sync_directory(dir_);
    return true;
  }
  if (errno == ENOENT) return false;
  throw Error(os_error(file(id), "remove"));
}

int64_t DirectoryStore::count() { return int64_t(list().size()); }

std::vector<std::string> DirectoryStore::list() {
  std::vector<std::string> ids;
  std::vector<std::filesystem::path> gone;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    if (entry.path().extension() != ".session") continue;
    if (expired(entry.path())) gone.push_back(entry.path());
    else ids.push_back(entry.path().stem().string());
  }
  if (!gone.empty()) {
    DirectoryLock lock(dir_);
    for (const std::filesystem::path& p : gone)
      if (expired(p)) ::unlink(p.c_str());  // a commit since the scan made it fresh again
    sync_directory(dir_);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::string DirectoryStore::describe() const { return "directory " + dir_.string(); }

}  // namespace infini::serve
