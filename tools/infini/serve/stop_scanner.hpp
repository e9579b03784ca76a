#pragma once
// Generated text as it is streamed: cut at the first stop string, and handed out only once it can
// no longer turn out to be the start of one, nor end inside a UTF-8 character.
#include <string>
#include <string_view>
#include <vector>

namespace infini::serve {

class StopScanner {
 public:
  explicit StopScanner(std::vector<std::string> stops);
  // Adds one token's bytes; returns the text that is now safe to send (often empty).
  std::string add(std::string_view piece);
  // At the end of generation without a stop: whatever was held back.
  std::string finish();
  bool stopped() const noexcept { return stopped_; }
  const std::string& text() const noexcept { return text_; }  // everything, cut at the stop

 private:
  std::string take(size_t end);
  std::vector<std::string> stops_;
  std::string text_;
  size_t sent_ = 0;
  bool stopped_ = false;
};

}  // namespace infini::serve
