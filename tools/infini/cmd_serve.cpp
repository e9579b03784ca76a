// infini serve: an HTTP server for endless streams (serve/). Sessions live in a state store (a
// directory, or Redis for several replicas); each --devices entry is a worker that runs --parallel
// requests at a time on one copy of the weights.
#include <pthread.h>
#include <signal.h>

#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <thread>

#include "command.hpp"
#include "model_options.hpp"
#include "option_checks.hpp"
#include "serve/chat_request.hpp"
#include "serve/http_api.hpp"
#include "serve/session_service.hpp"
#include "split_list.hpp"

namespace infini::cli {
namespace {

struct ServeArgs {
  std::string model;
  ModelOptions options;
  int64_t ctx_size = 0;  // -c and --sinks: a plain file's sliding context (model_options.hpp)
  int64_t sinks = kDefaultSinks;
  std::string host = "127.0.0.1";
  int port = 8080;
  std::vector<std::string> devices;
  std::string store;  // default_store() when empty
  std::string api_key;
  std::string alias;
  std::vector<std::string> cors_origins;
  int64_t session_ttl = 0;  // seconds a session may sit unused before it expires; 0: never
  std::string chat_template;
  serve::ServeLimits limits;
  size_t max_body_bytes = 16u << 20;
  int threads = 0;
};

// One worker per --devices entry; "0+1" is one worker whose layers are split over devices 0 and 1.
std::vector<serve::Worker> open_workers(const ServeArgs& args) {
  std::vector<std::string> entries = args.devices;
  if (entries.empty()) entries.push_back("");
  std::vector<serve::Worker> workers;
  for (const std::string& entry : entries) {
    serve::Worker w;
    w.context = std::make_unique<Context>(ContextOptions{.devices = split_list(entry, '+')});
    ModelOptions options = args.options;
    options.context = args.ctx_size;
    options.sinks = args.sinks;
    w.model = std::make_unique<Model>(*w.context, args.model, options);
    if (workers.empty()) {
      check_context_options(args.model, w.model->info(), args.ctx_size, args.sinks);
      check_ctx_full(args.limits.stop_at_full_context, args.model, w.model->info());
      for (const std::string& warning : w.model->warnings()) std::fprintf(stderr, "warning: %s\n", warning.c_str());
    }
    workers.push_back(std::move(w));
  }
  return workers;
}

// Sessions belong with the user's data, not in whatever folder the server was started from.
std::string default_store() {
  if (const char* data = std::getenv("XDG_DATA_HOME"); data && *data) return std::string(data) + "/infini/sessions";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.local/share/infini/sessions";
  throw Error("neither XDG_DATA_HOME nor HOME is set; name the session store with --store DIR");
}

// Binds the port for this server alone: cpp-httplib's default socket options add SO_REUSEPORT,
// with which a second server on a taken port would bind too and share its connections.
int bind_port(httplib::Server& server, const std::string& host, int port) {
  server.set_socket_options([](socket_t sock) {
    const int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  errno = 0;
  const int bound = port == 0 ? server.bind_to_any_port(host) : (server.bind_to_port(host, port) ? port : -1);
  if (bound < 0)
    throw Error("cannot listen on " + host + ":" + std::to_string(port) +
                (errno ? std::string(": ") + std::strerror(errno) : std::string(" (is the host an address of this machine?)")));
  return bound;
}

int run_serve(ServeArgs& args) {
  if (args.api_key.empty())
    if (const char* key = std::getenv("INFINI_API_KEY")) args.api_key = key;
  // SIGINT and SIGTERM stop the server cleanly: blocked in every thread, taken by one watcher.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  // The model first: a server that cannot start leaves nothing behind (no store, no port).
  std::vector<serve::Worker> workers = open_workers(args);
  const std::optional<ChatTemplate> chat = serve::server_chat_template(*workers.front().model, args.chat_template);
  httplib::Server server;
  const int port = bind_port(server, args.host, args.port);
  serve::Metrics metrics;
  serve::SessionService service(std::move(workers),
                                serve::open_state_store(args.store.empty() ? default_store() : args.store,
                                                        std::chrono::seconds(args.session_ttl)),
                                args.limits, metrics);
  const int threads = args.threads > 0 ? args.threads : int(args.limits.queue) + 16;
  server.new_task_queue = [threads] { return new httplib::ThreadPool(size_t(threads)); };
  const std::string model_id = args.alias.empty() ? std::filesystem::path(args.model).filename().string() : args.alias;
  serve::install_routes(server, service, metrics, {args.api_key, model_id, args.cors_origins, args.max_body_bytes, chat});

  const ModelInfo& info = service.model().info();
  std::printf("infini serve: listening on http://%s:%d (model %s, digest %s, %zu workers, store %s, chat %s%s)\n",
              args.host.c_str(), port, model_id.c_str(), digest_hex(info.digest).c_str(), service.workers(),
              service.store().describe().c_str(), chat ? std::string(chat_template_name(*chat)).c_str() : "none",
              args.api_key.empty() ? "" : ", API key required");
  std::fflush(stdout);

  std::thread watcher([&] {
    int signal = 0;
    sigwait(&stop_signals, &signal);
    server.stop();
  });
  const bool ok = server.listen_after_bind();
  pthread_kill(watcher.native_handle(), SIGTERM);  // wakes the watcher when the server stopped by itself
  watcher.join();
  std::fprintf(stderr, "infini serve: stopped\n");
  return ok ? 0 : 1;
}

const RegisterCommand kServe{
    "serve", "HTTP server: OpenAI-style completions and endless sessions whose state lives in a directory or Redis",
    [](CLI::App& app) -> std::function<int()> {
      auto args = std::make_shared<ServeArgs>();
      app.add_option("-m,--model", args->model, "GGUF model file")->required();
      auto* segment = app.add_option("--segment", args->options.segment, "Segment length N (default: the file's)")
                          ->check(integer_range(int64_t(1), kMaxSegment));
      add_context_options(app, args->ctx_size, args->sinks, segment);
      add_ctx_full_option(app, args->limits.stop_at_full_context);
      add_memory_option(app, args->options.memory);
      app.add_option("--host", args->host, "Address to listen on")->capture_default_str();
      app.add_option("--port", args->port, "Port (0: any free port, printed at startup)")
          ->capture_default_str()
          ->check(integer_range(0, 65535));
      app.add_option("--devices", args->devices,
                     "One worker per entry, comma-separated (a device named twice runs two workers on it; 0+1 is one "
                     "worker with its layers split over devices 0 and 1); default: one worker on the default device")
          ->delimiter(',');
      app.add_option("--store", args->store,
                     "Where session states live: a directory, or redis://HOST:PORT/DB (default: "
                     "$XDG_DATA_HOME/infini/sessions, else ~/.local/share/infini/sessions)");
      app.add_option("--alias", args->alias, "The model's id in /v1/models and responses (default: the file's name)");
      app.add_option("--cors-origin", args->cors_origins,
                     "Origins whose browsers may call the API, comma-separated, or * for any (default: none)")
          ->delimiter(',');
      app.add_option("--session-ttl", args->session_ttl,
                     "Seconds a session may go unused (no append or generate) before the store drops it (0: never)")
          ->capture_default_str()
          ->check(integer_range(int64_t(0), int64_t(1) << 40));
      app.add_option("--chat-template", args->chat_template,
                     "Template for /v1/chat/completions: chatml, llama3, gemma, mistral-v1, mistral-v3, mistral-v7, "
                     "llama2, llama2-sys (default: recognised from the file)");
      app.add_option("--api-key", args->api_key, "Require 'Authorization: Bearer KEY' (also INFINI_API_KEY)");
      app.add_option("--max-sessions", args->limits.max_sessions, "Most sessions in the store")
          ->capture_default_str()
          ->check(integer_range(int64_t(1), int64_t(1) << 40));
      app.add_option("--max-request-tokens", args->limits.max_request_tokens,
                     "Most tokens in one prompt or append")
          ->capture_default_str()
          ->check(integer_range(int64_t(1), int64_t(1) << 40));
      app.add_option("--max-tokens", args->limits.max_generate_tokens, "Largest max_tokens a request may ask for")
          ->capture_default_str()
          ->check(integer_range(int64_t(0), int64_t(1) << 30));
      app.add_option("--max-body-bytes", args->max_body_bytes, "Largest request body")
          ->capture_default_str()
          ->check(integer_range(size_t(1), size_t(1) << 40));
      app.add_option("--queue", args->limits.queue, "Requests waiting or running at once; more get 429")
          ->capture_default_str()
          ->check(integer_range(int64_t(1), int64_t(1) << 20));
      app.add_option("--parallel", args->limits.parallel,
                     "Requests each --devices entry runs at once, its sessions sharing one copy of the weights "
                     "(each adds its stream state; they are interleaved on the device, not batched)")
          ->capture_default_str()
          ->check(integer_range(int64_t(1), int64_t(SessionPool::kMaxSessionsPerModel)));
      app.add_option("--threads", args->threads, "HTTP threads (default: --queue + 16)")->check(integer_range(1, 4096));
      return [args] { return run_serve(*args); };
    }};

}  // namespace
}  // namespace infini::cli
