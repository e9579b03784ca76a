#pragma once
// A stream state from a file for `infini run --load-state` and `infini session import`: a state
// file (Session::save) or a session record from `infini serve`'s directory store (its state
// inside), told apart by the record's magic, so either continues the stream.
#include <cstddef>
#include <string>
#include <vector>

#include "infini/session.hpp"

namespace infini::cli {

// The state bytes the file holds; throws infini::Error with one line naming the file.
std::vector<std::byte> read_stream_state(const std::string& path);

void restore_stream_state(Session& session, const std::string& path);

}  // namespace infini::cli
