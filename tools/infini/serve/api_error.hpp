#pragma once
// An error a request ends with: the HTTP status and a one-line message, sent as
// {"error": {"message": ..., "type": ..., "code": status}} (the OpenAI error shape).
#include <stdexcept>
#include <string>

namespace infini::serve {

class ApiError : public std::runtime_error {
 public:
  ApiError(int status, std::string type, const std::string& message)
      : std::runtime_error(message), status_(status), type_(std::move(type)) {}
  int status() const noexcept { return status_; }
  const std::string& type() const noexcept { return type_; }

 private:
  int status_;
  std::string type_;
};

inline ApiError bad_request(const std::string& message) { return {400, "invalid_request_error", message}; }
inline ApiError not_found(const std::string& message) { return {404, "not_found_error", message}; }
inline ApiError conflict(const std::string& message) { return {409, "conflict_error", message}; }

}  // namespace infini::serve
