#include "prefix_checkpoints.hpp"

#include <algorithm>

namespace infini::cli {

int64_t PrefixCheckpoints::resume(Session& session, std::span<const int32_t> ids) {
  const int64_t segment = session.segment();
  const int64_t segments = int64_t(ids.size()) / segment;
  const int64_t every = segment * std::max<int64_t>(1, (segments + max_states_ - 1) / max_states_);
  const size_t common = size_t(std::mismatch(ids.begin(), ids.end(), ids_.begin(), ids_.end()).first - ids.begin());
  // Keep the states inside the shared prefix that leave a token to feed; a new spacing (another
  // length) starts over, so that the states stay evenly spread.
  const int64_t usable = std::min<int64_t>(int64_t(common), int64_t(ids.size()) - 1);
  if (every != every_) saved_.clear();
  while (!saved_.empty() && saved_.back().tokens_seen() > usable) saved_.pop_back();
  every_ = every;
  ids_.assign(ids.begin(), ids.end());
  if (saved_.empty()) {
    session.reset();
  } else {
    session.restore(saved_.back());
  }
  return session.tokens_seen();
}

void PrefixCheckpoints::after_piece(const Session& session) {
  const int64_t t = session.tokens_seen();
  const int64_t last = saved_.empty() ? 0 : saved_.back().tokens_seen();
  if (t % session.segment() != 0 || t - last < every_ || t >= int64_t(ids_.size())) return;
  // States at boundaries are all the same size: once one is known, skip a save that cannot fit
  // (a large model keeps fewer states and resumes from earlier ones).
  if ((saved_.size() + 1) * state_bytes_ > max_bytes_) return;
  SessionSnapshot state = session.snapshot();
  state_bytes_ = state.bytes();
  if ((saved_.size() + 1) * state_bytes_ > max_bytes_) return;
  saved_.push_back(std::move(state));
}

}  // namespace infini::cli
