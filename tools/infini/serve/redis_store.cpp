#include "serve/redis_store.hpp"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <charconv>

#include "infini/error.hpp"

namespace infini::serve {
namespace {

const std::string kSessions = "infini:sessions";
std::string key(const std::string& id) { return "infini:session:" + id; }

// KEYS[1] the session, KEYS[2] the id set; ARGV: version, digest, tokens, state, id, idle expiry
// in seconds (0: none).
const char* kCreate = R"(
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'version', ARGV[1], 'digest', ARGV[2], 'tokens', ARGV[3], 'state', ARGV[4])
if ARGV[6] ~= '0' then redis.call('EXPIRE', KEYS[1], ARGV[6]) end
redis.call('SADD', KEYS[2], ARGV[5])
return 1)";
// ARGV: expected version, then the new version, digest, tokens, state, idle expiry.
const char* kCommit = R"(
local v = redis.call('HGET', KEYS[1], 'version')
if not v then return -1 end
if v ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'version', ARGV[2], 'digest', ARGV[3], 'tokens', ARGV[4], 'state', ARGV[5])
if ARGV[6] ~= '0' then redis.call('EXPIRE', KEYS[1], ARGV[6]) end
return 1)";
// The ids whose keys still exist; those of expired keys leave the set.
const char* kList = R"(
local out = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if redis.call('EXISTS', ARGV[1] .. id) == 1 then table.insert(out, id) else redis.call('SREM', KEYS[1], id) end
end
return out)";
const char* kRemove = R"(
local n = redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[1])
return n)";

std::string bytes_string(const std::vector<std::byte>& b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

template <typename T>
T number(const redisReply* r, const char* what) {
  T v{};
  if (!r || r->type != REDIS_REPLY_STRING) throw Error(std::string("redis: session field ") + what + " is missing");
  const auto [end, ec] = std::from_chars(r->str, r->str + r->len, v);
  if (ec != std::errc() || end != r->str + r->len) throw Error(std::string("redis: session field ") + what + " is damaged");
  return v;
}

}  // namespace

RedisAddress parse_redis_url(const std::string& url) {
  const std::string scheme = "redis://";
  if (url.rfind(scheme, 0) != 0) throw Error(url + ": not a redis:// URL");
  RedisAddress a;
  std::string rest = url.substr(scheme.size());
  auto integer = [&](const std::string& s, const char* what, int lo, int hi) {
    int v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < lo || v > hi)
      throw Error(url + ": bad " + what + " '" + s + "'");
    return v;
  };
  if (const size_t slash = rest.find('/'); slash != std::string::npos) {
    if (slash + 1 < rest.size()) a.db = integer(rest.substr(slash + 1), "database number", 0, 1 << 20);
    rest.resize(slash);
  }
  if (const size_t colon = rest.rfind(':'); colon != std::string::npos) {
    a.port = integer(rest.substr(colon + 1), "port", 1, 65535);
    rest.resize(colon);
  }
  if (!rest.empty()) a.host = rest;
  return a;
}

void RedisStore::ReplyDeleter::operator()(redisReply* r) const { freeReplyObject(r); }

RedisStore::RedisStore(const RedisAddress& address, std::chrono::seconds idle_expiry)
    : address_(address), idle_expiry_(idle_expiry) {
  idle_.push_back(connect());
}

RedisStore::~RedisStore() {
  for (redisContext* c : idle_) redisFree(c);
}

redisContext* RedisStore::connect() const {
  const std::string where = "redis://" + address_.host + ":" + std::to_string(address_.port);
  const timeval connect_timeout{5, 0}, io_timeout{30, 0};
  redisContext* c = redisConnectWithTimeout(address_.host.c_str(), address_.port, connect_timeout);
  if (!c) throw Error(where + ": cannot allocate a connection");
  if (c->err) {
    const std::string message = where + ": " + c->errstr;
    redisFree(c);
    throw Error(message);
  }
  // A Redis that stops answering fails the request after io_timeout instead of holding a worker.
  redisSetTimeout(c, io_timeout);
  redisEnableKeepAlive(c);
  if (address_.db != 0) {
    Reply r(static_cast<redisReply*>(redisCommand(c, "SELECT %d", address_.db)));
    if (!r || r->type == REDIS_REPLY_ERROR) {
      const std::string message = where + ": cannot select database " + std::to_string(address_.db);
      redisFree(c);
      throw Error(message);
    }
  }
  return c;
}

RedisStore::Reply RedisStore::command(const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  std::vector<size_t> lengths;
  for (const std::string& a : args) {
    argv.push_back(a.data());
    lengths.push_back(a.size());
  }
  // A pooled connection may have been closed while idle (Redis' timeout, a restart): a command
  // that fails on one is sent once more on a new connection. A commit that did land the first
  // time is then refused as stale, never applied twice.
  for (int attempt = 0;; ++attempt) {
    redisContext* c = nullptr;
    {
      std::lock_guard lock(mutex_);
      if (!idle_.empty() && attempt == 0) {
        c = idle_.back();
        idle_.pop_back();
      }
    }
    const bool reused = c != nullptr;
    if (!c) c = connect();
    Reply r(static_cast<redisReply*>(redisCommandArgv(c, int(args.size()), argv.data(), lengths.data())));
    if (!r || c->err) {
      const std::string message = std::string("redis: ") + (c->err ? c->errstr : "no reply");
      redisFree(c);  // a broken connection is dropped
      if (reused) continue;
      throw Error(message);
    }
    {
      std::lock_guard lock(mutex_);
      idle_.push_back(c);
    }
    if (r->type == REDIS_REPLY_ERROR) throw Error("redis: " + std::string(r->str, r->len));
    return r;
  }
}

bool RedisStore::create(const std::string& id, const SessionRecord& rec) {
  const Reply r = command({"EVAL", kCreate, "2", key(id), kSessions, std::to_string(rec.version),
                           std::to_string(rec.model_digest), std::to_string(rec.tokens_seen), bytes_string(rec.state), id,
                           std::to_string(idle_expiry_.count())});
  return r->type == REDIS_REPLY_INTEGER && r->integer == 1;
}

std::optional<SessionRecord> RedisStore::load(const std::string& id, bool with_state) {
  std::vector<std::string> args = {"HMGET", key(id), "version", "digest", "tokens"};
  if (with_state) args.push_back("state");
  const Reply r = command(args);
  if (r->type != REDIS_REPLY_ARRAY || r->elements != args.size() - 2) throw Error("redis: unexpected reply to HMGET");
  if (r->element[0]->type == REDIS_REPLY_NIL) return std::nullopt;
  uint64_t state_bytes = 0;
  if (!with_state) {
    const Reply length = command({"HSTRLEN", key(id), "state"});
    if (length->type == REDIS_REPLY_INTEGER) state_bytes = uint64_t(length->integer);
  }
  SessionRecord rec;
  rec.version = number<uint64_t>(r->element[0], "version");
  rec.model_digest = number<uint64_t>(r->element[1], "digest");
  rec.tokens_seen = number<int64_t>(r->element[2], "tokens");
  if (with_state) {
    const redisReply* s = r->element[3];
    if (s->type != REDIS_REPLY_STRING) throw Error("redis: session " + id + " has no state field");
    const auto* begin = reinterpret_cast<const std::byte*>(s->str);
    rec.state.assign(begin, begin + s->len);
  }
  rec.state_bytes = with_state ? rec.state.size() : state_bytes;
  return rec;
}

CommitResult RedisStore::commit(const std::string& id, uint64_t expected, const SessionRecord& next) {
  const Reply r = command({"EVAL", kCommit, "1", key(id), std::to_string(expected), std::to_string(next.version),
                           std::to_string(next.model_digest), std::to_string(next.tokens_seen), bytes_string(next.state),
                           std::to_string(idle_expiry_.count())});
  if (r->type != REDIS_REPLY_INTEGER) throw Error("redis: unexpected reply to the commit script");
  return r->integer == 1 ? CommitResult::Committed : r->integer == 0 ? CommitResult::Stale : CommitResult::Missing;
}

bool RedisStore::remove(const std::string& id) {
  const Reply r = command({"EVAL", kRemove, "2", key(id), kSessions, id});
  return r->type == REDIS_REPLY_INTEGER && r->integer == 1;
}

int64_t RedisStore::count() {
  if (idle_expiry_.count() > 0) return int64_t(list().size());  // the set still holds expired ids
  const Reply r = command({"SCARD", kSessions});
  return r->type == REDIS_REPLY_INTEGER ? r->integer : 0;
}

std::vector<std::string> RedisStore::list() {
  const Reply r = command({"EVAL", kList, "1", kSessions, key("")});
  if (r->type != REDIS_REPLY_ARRAY) throw Error("redis: unexpected reply to the list script");
  std::vector<std::string> ids;
  for (size_t i = 0; i < r->elements; ++i)
    if (r->element[i]->type == REDIS_REPLY_STRING) ids.emplace_back(r->element[i]->str, r->element[i]->len);
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::string RedisStore::describe() const {
  return "redis://" + address_.host + ":" + std::to_string(address_.port) + "/" + std::to_string(address_.db);
}

}  // namespace infini::serve
