// infini session export|import: moves a stream between `infini serve`'s store and state files, so
// a session served over HTTP continues in `infini run --load-state` (which also reads a directory
// store's record as it is) and a stream read by `infini run --save-state` is served as a session.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "command.hpp"
#include "infini/error.hpp"
#include "model_options.hpp"
#include "serve/state_store.hpp"
#include "stream_state_input.hpp"

namespace infini::cli {
namespace {

struct SessionArgs {
  std::string store, id, file;
  ModelArgs model;
};

// Written next to its name and renamed into place, so a reader never sees half a file.
void write_atomically(const std::string& path, const std::vector<std::byte>& bytes) {
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(path + ": cannot create");
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) {
      ::close(fd);
      ::unlink(tmp.c_str());
      throw Error(path + ": cannot write");
    }
    done += size_t(n);
  }
  const bool ok = ::fsync(fd) == 0 && ::close(fd) == 0;
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    throw Error(path + ": cannot write");
  }
}

int run_export(const SessionArgs& args) {
  std::error_code ec;
  if (args.store.rfind("redis://", 0) != 0 && !std::filesystem::is_directory(args.store, ec))
    throw Error(args.store + ": no such store directory");
  std::unique_ptr<serve::StateStore> store = serve::open_state_store(args.store);
  const std::optional<serve::SessionRecord> record = store->load(args.id, true);
  if (!record) throw Error("no session '" + args.id + "' in " + store->describe());
  if (record->state.empty()) throw Error("session '" + args.id + "' has read nothing yet; there is no state to export");
  write_atomically(args.file, record->state);
  std::fprintf(stderr, "wrote %s: session %s at version %llu, %lld tokens\n", args.file.c_str(), args.id.c_str(),
               static_cast<unsigned long long>(record->version), static_cast<long long>(record->tokens_seen));
  return 0;
}

int run_import(const SessionArgs& args) {
  // The state is restored on the model first: a file of another model, or a damaged one, is
  // refused here rather than by the server later.
  const std::vector<std::byte> state = read_stream_state(args.file);
  OpenModel m = open_model(args.model);
  m.session->restore(state, args.file);
  std::unique_ptr<serve::StateStore> store = serve::open_state_store(args.store);
  serve::SessionRecord record{0, m.model->info().digest, m.session->tokens_seen(), state, state.size()};
  std::string id = serve::new_session_id();
  while (!store->create(id, record)) id = serve::new_session_id();
  std::printf("%s\n", id.c_str());
  std::fprintf(stderr, "imported %s into %s as session %s (%lld tokens)\n", args.file.c_str(),
               store->describe().c_str(), id.c_str(), static_cast<long long>(record.tokens_seen));
  return 0;
}

const RegisterCommand group{"session", "Move streams between infini serve's session store and state files", {}};

const RegisterCommand export_command{
    "session export", "Write a served session's state to a file (for infini run --load-state)", [](CLI::App& app) {
      auto args = std::make_shared<SessionArgs>();
      app.add_option("--store", args->store, "The server's store: a directory, or redis://HOST:PORT/DB")->required();
      app.add_option("id", args->id, "Session id")->required();
      app.add_option("out", args->file, "State file to write (atomic)")->required();
      return [args] { return run_export(*args); };
    }};

const RegisterCommand import_command{
    "session import", "Make a state file (infini run --save-state) a session of infini serve; prints its id",
    [](CLI::App& app) {
      auto args = std::make_shared<SessionArgs>();
      add_model_options(app, args->model);
      app.add_option("--store", args->store, "The server's store: a directory, or redis://HOST:PORT/DB")->required();
      app.add_option("file", args->file, "State file")->required();
      return [args] { return run_import(*args); };
    }};

}  // namespace
}  // namespace infini::cli
