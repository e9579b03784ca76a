#include "serve/metrics.hpp"

#include <sstream>

namespace infini::serve {
namespace {
constexpr std::chrono::seconds kRateWindow{10};
}

void Metrics::request(const std::string& endpoint, int status) {
  std::lock_guard lock(mutex_);
  ++requests_[{endpoint, status}];
}

void Metrics::add_tokens(int64_t fed, int64_t generated) {
  std::lock_guard lock(mutex_);
  fed_ += fed;
  generated_ += generated;
  const Clock::time_point now = Clock::now();
  recent_.emplace_back(now, fed + generated);
  while (now - recent_.front().first > kRateWindow) recent_.pop_front();
}

std::string Metrics::render(const std::vector<Gauge>& gauges) {
  std::lock_guard lock(mutex_);
  const Clock::time_point now = Clock::now();
  while (!recent_.empty() && now - recent_.front().first > kRateWindow) recent_.pop_front();
  int64_t recent_tokens = 0;
  for (const auto& r : recent_) recent_tokens += r.second;

  std::ostringstream o;
  o << "# HELP infini_requests_total HTTP requests served, by endpoint and status.\n"
    << "# TYPE infini_requests_total counter\n";
  for (const auto& [key, n] : requests_)
    o << "infini_requests_total{endpoint=\"" << key.first << "\",status=\"" << key.second << "\"} " << n << "\n";
  o << "# HELP infini_tokens_fed_total Tokens fed through the model (prompts and appends).\n"
    << "# TYPE infini_tokens_fed_total counter\ninfini_tokens_fed_total " << fed_ << "\n"
    << "# HELP infini_tokens_generated_total Tokens generated.\n"
    << "# TYPE infini_tokens_generated_total counter\ninfini_tokens_generated_total " << generated_ << "\n"
    << "# HELP infini_tokens_per_second Tokens fed and generated per second over the last 10 s.\n"
    << "# TYPE infini_tokens_per_second gauge\ninfini_tokens_per_second "
    << double(recent_tokens) / double(kRateWindow.count()) << "\n";
  for (const Gauge& g : gauges)
    o << "# HELP " << g.name << " " << g.help << "\n# TYPE " << g.name << " gauge\n" << g.name << " " << g.value << "\n";
  return o.str();
}

}  // namespace infini::serve
