#pragma once
// What every route of `infini serve` shares: JSON bodies and errors, handlers that turn any
// exception into a JSON error, and responses of server-sent events.
#include <httplib.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "infini/error.hpp"
#include "serve/api_error.hpp"

namespace infini::serve {

// Generated text may hold invalid UTF-8 (a token can end mid-character); JSON gets U+FFFD there.
std::string dump(const nlohmann::json& j);
nlohmann::json error_json(int status, const std::string& type, const std::string& message);
nlohmann::json error_json(const ApiError& e);
void send_json(httplib::Response& res, const nlohmann::json& j, int status = 200);
// The error type of a status the server or httplib set without a message.
const char* status_type(int status);

// Runs a handler; every failure becomes a JSON error with its status.
template <typename Handler>
httplib::Server::Handler guarded(Handler handler) {
  return [handler](const httplib::Request& req, httplib::Response& res) {
    try {
      handler(req, res);
    } catch (const ApiError& e) {
      send_json(res, error_json(e), e.status());
    } catch (const Error& e) {
      send_json(res, error_json(500, "server_error", e.what()), 500);
    } catch (const std::exception& e) {
      send_json(res, error_json(500, "server_error", std::string("internal error: ") + e.what()), 500);
    }
  };
}

// A response of server-sent events: `work` gets a function that sends one event (false once the
// client has gone; a null event sends only a comment, to ask whether the client is still there);
// its errors become an error event. The stream ends with "data: [DONE]".
using SendEvent = std::function<bool(const nlohmann::json&)>;
void stream_events(httplib::Response& res, std::function<void(const SendEvent&)> work);

}  // namespace infini::serve
