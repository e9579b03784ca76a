#pragma once
// An error a request ends with: the HTTP status and a one-line message, sent in OpenAI's error
// shape {"error": {"message", "type", "param", "code"}}: `type` and `code` are strings (clients
// switch on them), `param` names the request field at fault or is null.
#include <stdexcept>
#include <string>

namespace infini::serve {

// The code OpenAI-style clients see for a status when the error names none of its own.
const char* status_code_name(int status);

class ApiError : public std::runtime_error {
 public:
  ApiError(int status, std::string type, const std::string& message, std::string param = {}, std::string code = {})
      : std::runtime_error(message),
        status_(status),
        type_(std::move(type)),
        param_(std::move(param)),
        code_(code.empty() ? status_code_name(status) : std::move(code)) {}
  int status() const noexcept { return status_; }
  const std::string& type() const noexcept { return type_; }
  const std::string& param() const noexcept { return param_; }  // empty: none
  const std::string& code() const noexcept { return code_; }

 private:
  int status_;
  std::string type_, param_, code_;
};

inline ApiError bad_request(const std::string& message, std::string param = {}) {
  return {400, "invalid_request_error", message, std::move(param)};
}
inline ApiError not_found(const std::string& message) { return {404, "not_found_error", message}; }
inline ApiError conflict(const std::string& message) { return {409, "conflict_error", message}; }
// A field OpenAI defines whose effect infini cannot give: refused, never ignored.
inline ApiError unsupported(const std::string& field, const std::string& why) {
  return {400, "invalid_request_error", "'" + field + "' is not supported by infini serve: " + why, field,
          "unsupported_parameter"};
}

}  // namespace infini::serve
