#pragma once
// Where `infini serve` commits session states: a local directory, or Redis so that any number of
// replicas serve any session. Every operation is atomic on its own; commit is a compare-and-set
// on the version, the only way a record changes, so concurrent writers cannot fork a session.
// Stores are used from many threads at once.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "serve/session_record.hpp"

namespace infini::serve {

enum class CommitResult { Committed, Stale, Missing };

class StateStore {
 public:
  virtual ~StateStore() = default;
  // Adds a new session; false when the id is taken.
  virtual bool create(const std::string& id, const SessionRecord& record) = 0;
  // The record, or nullopt for an unknown session; with_state false leaves record.state empty.
  virtual std::optional<SessionRecord> load(const std::string& id, bool with_state) = 0;
  // Stores `next` iff the stored version is `expected` (next.version is expected + 1).
  virtual CommitResult commit(const std::string& id, uint64_t expected, const SessionRecord& next) = 0;
  // False when there was no such session.
  virtual bool remove(const std::string& id) = 0;
  virtual int64_t count() = 0;
  // The ids of the sessions held now.
  virtual std::vector<std::string> list() = 0;
  virtual std::string describe() const = 0;  // for the startup line and /health
};

// "redis://HOST:PORT/DB" (port and db optional) or a directory path (created when missing).
// With an idle_expiry above zero a session no request has committed to for that long is gone
// (Redis expires its key; the directory drops its file). Throws infini::Error with one line when
// the store cannot be opened.
std::unique_ptr<StateStore> open_state_store(const std::string& spec,
                                             std::chrono::seconds idle_expiry = std::chrono::seconds(0));

}  // namespace infini::serve
