#include "serve/stop_scanner.hpp"

#include <algorithm>

namespace infini::serve {
namespace {

// How many bytes at the end of `s` begin a UTF-8 character that is not complete yet.
size_t incomplete_utf8_tail(std::string_view s) {
  for (size_t back = 1; back <= std::min<size_t>(3, s.size()); ++back) {
    const auto c = static_cast<unsigned char>(s[s.size() - back]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    const size_t length = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return length > back ? back : 0;
  }
  return 0;
}

}  // namespace

StopScanner::StopScanner(std::vector<std::string> stops) : stops_(std::move(stops)) {
  std::erase_if(stops_, [](const std::string& s) { return s.empty(); });
}

std::string StopScanner::take(size_t end) {
  std::string out = text_.substr(sent_, end - sent_);
  sent_ = end;
  return out;
}

std::string StopScanner::add(std::string_view piece) {
  if (stopped_) return {};
  text_ += piece;
  // Text already sent cannot hold the start of a stop string, so the search starts there.
  size_t first = std::string::npos;
  for (const std::string& stop : stops_) first = std::min(first, text_.find(stop, sent_));
  if (first != std::string::npos) {
    text_.resize(first);
    stopped_ = true;
    return take(first);
  }
  // Hold back the longest end of the text that some stop string begins with.
  size_t hold = 0;
  for (const std::string& stop : stops_)
    for (size_t n = std::min(stop.size() - 1, text_.size() - sent_); n > hold; --n)
      if (text_.compare(text_.size() - n, n, stop, 0, n) == 0) {
        hold = n;
        break;
      }
  hold = std::max(hold, incomplete_utf8_tail(text_));
  return take(text_.size() - std::min(hold, text_.size() - sent_));
}

std::string StopScanner::finish() { return take(text_.size()); }

}  // namespace infini::serve
