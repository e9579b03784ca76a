#include "stream_state_input.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "infini/error.hpp"
#include "serve/session_record.hpp"

namespace infini::cli {

std::vector<std::byte> read_stream_state(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error(path + ": is a directory, not a state file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw Error(path + ": cannot read");
  std::vector<std::byte> out(bytes.size());
  if (!bytes.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
  if (bytes.rfind("INFSREC1", 0) == 0) return serve::decode_record(out, path).state;
  return out;
}

void restore_stream_state(Session& session, const std::string& path) {
  const std::vector<std::byte> state = read_stream_state(path);
  if (state.empty()) throw Error(path + ": the session has read nothing yet; there is no state to continue");
  session.restore(state, path);
}

}  // namespace infini::cli
