#pragma once
// Session records in Redis, so that any number of `infini serve` replicas behind any load
// balancer serve any session: a hash per session (infini:session:<id> with version, digest,
// tokens and state) and a set of ids (infini:sessions) for counting. Create, commit and remove
// are Lua scripts, which Redis runs atomically: commit is a compare-and-set on the version.
// Connections are pooled (a hiredis context serves one thread at a time) and reopened after an
// error.
#include <memory>
#include <mutex>
#include <vector>

#include "serve/state_store.hpp"

struct redisContext;
struct redisReply;

namespace infini::serve {

struct RedisAddress {
  std::string host = "127.0.0.1";
  int port = 6379;
  int db = 0;
};

// "redis://HOST[:PORT][/DB]"; throws infini::Error on anything else.
RedisAddress parse_redis_url(const std::string& url);

class RedisStore : public StateStore {
 public:
  // Connects once to fail early; with idle_expiry above 0 every create and commit sets the
  // session's key to expire after it.
  explicit RedisStore(const RedisAddress& address, std::chrono::seconds idle_expiry = std::chrono::seconds(0));
  ~RedisStore() override;
  bool create(const std::string& id, const SessionRecord& record) override;
  std::optional<SessionRecord> load(const std::string& id, bool with_state) override;
  CommitResult commit(const std::string& id, uint64_t expected, const SessionRecord& next) override;
  bool remove(const std::string& id) override;
  int64_t count() override;
  std::vector<std::string> list() override;
  std::string describe() const override;

 private:
  struct ReplyDeleter {
    void operator()(redisReply* r) const;
  };
  using Reply = std::unique_ptr<redisReply, ReplyDeleter>;
  // Runs one command (binary-safe arguments) on a pooled connection; throws on a connection or
  // Redis error.
  Reply command(const std::vector<std::string>& args);
  redisContext* connect() const;

  RedisAddress address_;
  std::chrono::seconds idle_expiry_;
  std::mutex mutex_;
  std::vector<redisContext*> idle_;
};

}  // namespace infini::serve
