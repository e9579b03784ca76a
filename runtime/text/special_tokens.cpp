#include "text/special_tokens.hpp"

namespace infini::model {

std::vector<TextFragment> partition_special(std::string_view text, std::span<const int32_t> candidates,
                                            const std::vector<std::string>& texts,
                                            const std::function<bool(int32_t)>& allowed) {
  std::vector<TextFragment> fragments;
  if (!text.empty()) fragments.push_back({0, text.size(), -1});
  std::vector<TextFragment> next;
  for (int32_t id : candidates) {
    if (!allowed(id)) continue;
    const std::string& t = texts[size_t(id)];
    if (text.find(t) == std::string_view::npos) continue;  // common case: no rebuild
    next.clear();
    for (const TextFragment& f : fragments) {
      if (f.token >= 0) {
        next.push_back(f);
        continue;
      }
      const std::string_view raw = text.substr(0, f.offset + f.length);
      size_t pos = f.offset;
      for (size_t hit; (hit = raw.find(t, pos)) != std::string_view::npos; pos = hit + t.size()) {
        if (hit > pos) next.push_back({pos, hit - pos, -1});
        next.push_back({hit, t.size(), id});
      }
      if (pos < raw.size()) next.push_back({pos, raw.size() - pos, -1});
    }
    fragments.swap(next);
  }
  return fragments;
}

}  // namespace infini::model
