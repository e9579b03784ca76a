#pragma once
// What `GET /metrics` reports, in Prometheus' text format: requests by endpoint and status,
// tokens fed and generated (totals and the rate over the last ten seconds), and the gauges the
// server passes in when it renders (queue depth, sessions, device memory, workers).
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace infini::serve {

struct Gauge {
  std::string name, help;
  double value = 0;
};

class Metrics {
 public:
  void request(const std::string& endpoint, int status);
  void tokens_fed(int64_t n) { add_tokens(n, 0); }
  void tokens_generated(int64_t n) { add_tokens(0, n); }
  std::string render(const std::vector<Gauge>& gauges);

 private:
  void add_tokens(int64_t fed, int64_t generated);
  using Clock = std::chrono::steady_clock;
  std::mutex mutex_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;
  int64_t fed_ = 0, generated_ = 0;
  std::deque<std::pair<Clock::time_point, int64_t>> recent_;  // (when, tokens fed + generated)
};

}  // namespace infini::serve
