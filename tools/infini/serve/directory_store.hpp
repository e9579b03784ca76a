#pragma once
// Session records as files in one directory: DIR/<id>.session, written to a temporary file,
// fsynced and renamed into place, so a crash leaves the old record or the new one. A lock file
// (flock) makes commit's compare-and-set atomic across threads and across processes that share
// the directory.
#include <filesystem>

#include "serve/state_store.hpp"

namespace infini::serve {

class DirectoryStore : public StateStore {
 public:
  // Creates the directory when missing; records untouched for idle_expiry (above 0) are gone.
  explicit DirectoryStore(std::filesystem::path dir, std::chrono::seconds idle_expiry = std::chrono::seconds(0));
  bool create(const std::string& id, const SessionRecord& record) override;
  std::optional<SessionRecord> load(const std::string& id, bool with_state) override;
  CommitResult commit(const std::string& id, uint64_t expected, const SessionRecord& next) override;
  bool remove(const std::string& id) override;
  int64_t count() override;
  std::vector<std::string> list() override;
  std::string describe() const override;

 private:
  std::filesystem::path file(const std::string& id) const;
  // Writes the record next to its final name and returns the temporary path.
  std::filesystem::path write_temporary(const std::string& id, const SessionRecord& record) const;
  void publish(const std::filesystem::path& temporary, const std::string& id) const;
  bool expired(const std::filesystem::path& record) const;
  std::filesystem::path dir_;
  std::chrono::seconds idle_expiry_;
};

}  // namespace infini::serve
