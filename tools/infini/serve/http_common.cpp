#include "serve/http_common.hpp"

namespace infini::serve {

using nlohmann::json;

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

const char* status_code_name(int status) {
  switch (status) {
    case 400: return "invalid_request";
    case 401: return "invalid_api_key";
    case 404: return "not_found";
    case 405: return "method_not_allowed";
    case 409: return "conflict";
    case 413: return "request_too_large";
    case 422: return "state_refused";
    case 429: return "rate_limit_exceeded";
    case 499: return "cancelled";
    default: return status >= 500 ? "server_error" : "invalid_request";
  }
}

json error_json(int status, const std::string& type, const std::string& message) {
  return error_json(ApiError(status, type, message));
}

json error_json(const ApiError& e) {
  return {{"error",
           {{"message", e.what()},
            {"type", e.type()},
            {"param", e.param().empty() ? json(nullptr) : json(e.param())},
            {"code", e.code()}}}};
}

void send_json(httplib::Response& res, const json& j, int status) {
  res.status = status;
  res.set_content(dump(j), "application/json");
}

const char* status_type(int status) {
  switch (status) {
    case 401: return "authentication_error";
    case 404: return "not_found_error";
    case 413: return "limit_error";
    case 429: return "rate_limit_error";
    default: return status >= 500 ? "server_error" : "invalid_request_error";
  }
}

void stream_events(httplib::Response& res, std::function<void(const SendEvent&)> work) {
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider("text/event-stream", [work](size_t, httplib::DataSink& sink) {
    const SendEvent send = [&sink](const json& j) {
      const std::string event = j.is_null() ? std::string(": \n\n") : "data: " + dump(j) + "\n\n";
      return sink.write(event.data(), event.size());
    };
    try {
      work(send);
    } catch (const ApiError& e) {
      send(error_json(e));
    } catch (const std::exception& e) {
      send(error_json(500, "server_error", e.what()));
    }
    const std::string done = "data: [DONE]\n\n";
    sink.write(done.data(), done.size());
    sink.done();
    return true;
  });
}

}  // namespace infini::serve
