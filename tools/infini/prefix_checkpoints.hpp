#pragma once
// Stream states saved at segment boundaries of the last input streamed, so that the next input
// that shares a prefix with it resumes from the latest state inside that prefix instead of from
// token 0. The passkey inputs of one length are the same tokens up to the key line, so most of
// each input need not be streamed again. Restoring at a segment boundary is exact (see
// infini/session.hpp): the logits are bit-identical to streaming the input from the start.
#include <cstdint>
#include <span>
#include <vector>

#include "infini/session.hpp"

namespace infini::cli {

class PrefixCheckpoints {
 public:
  // At most `max_states` states (spread evenly over an input) and `max_bytes` of host memory.
  PrefixCheckpoints(int64_t max_states, uint64_t max_bytes) : max_states_(max_states), max_bytes_(max_bytes) {}

  // Puts the session at the latest saved state whose tokens begin `ids` (always leaving at least
  // one token to feed, so the caller gets logits), or resets it. Forgets the states that do not
  // belong to `ids`. Returns the tokens already streamed, session.tokens_seen().
  int64_t resume(Session& session, std::span<const int32_t> ids);
  // Call after every piece of `ids` fed (pieces ending on segment boundaries save a state).
  void after_piece(const Session& session);

 private:
  int64_t max_states_;
  uint64_t max_bytes_;
  int64_t every_ = 0;         // tokens between saved states, a multiple of the segment
  uint64_t state_bytes_ = 0;  // one state's size (all are alike), once one was saved
  std::vector<int32_t> ids_;  // the input the saved states belong to
  std::vector<SessionSnapshot> saved_;  // by token count, ascending
};

}  // namespace infini::cli
