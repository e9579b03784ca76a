#include "serve/request_log.hpp"

#include <chrono>
#include <cstdio>

namespace infini::serve {
namespace {

struct RequestCounts {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  int64_t tokens = 0;
};
thread_local RequestCounts current;

}  // namespace

void begin_request_log() { current = RequestCounts{}; }

void note_request_tokens(int64_t tokens) { current.tokens += tokens; }

void write_request_log(const httplib::Request& req, const httplib::Response& res) {
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - current.start).count();
  // The path only (no query string, where a client might put a key), cut to a bounded length.
  std::string path = req.path.size() > 200 ? req.path.substr(0, 200) + "..." : req.path;
  for (char& c : path)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';  // one line, whatever the path holds
  std::fprintf(stderr, "%s %s %d tokens=%lld ms=%.1f\n", req.method.c_str(), path.c_str(), res.status,
               static_cast<long long>(current.tokens), ms);
}

}  // namespace infini::serve
