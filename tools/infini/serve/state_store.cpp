#include "serve/state_store.hpp"

#include "infini/error.hpp"
#include "serve/directory_store.hpp"
#include "serve/redis_store.hpp"

namespace infini::serve {

std::unique_ptr<StateStore> open_state_store(const std::string& spec, std::chrono::seconds idle_expiry) {
  if (spec.rfind("redis://", 0) == 0) return std::make_unique<RedisStore>(parse_redis_url(spec), idle_expiry);
  if (spec.find("://") != std::string::npos) throw Error(spec + ": a store is a directory or redis://HOST[:PORT][/DB]");
  return std::make_unique<DirectoryStore>(spec, idle_expiry);
}

}  // namespace infini::serve
