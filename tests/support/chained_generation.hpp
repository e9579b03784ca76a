#pragma once
// Session::generate with decode chains of up to 8 tokens against one token per submission, with
// `sampling`: the same tokens, the same stops (at the end-of-sequence token, found by trying
// seeds of a 24-token vocabulary until one stops inside 30 tokens, and at each place a callback
// can stop), and the same stream and generation after them. Catch2 checks; `file_name` names the
// temporary model.
#include "infini/session.hpp"

namespace infini::test {

void check_chained_generation(const SamplingOptions& sampling, const char* file_name);

}  // namespace infini::test
