#pragma once
// One line per request on stderr: method, path, status, tokens (prompt and generated, or fed) and
// milliseconds. cpp-httplib runs a request's routing, handler, streamed body and logger on one
// thread, so what a request counts is kept per thread between begin and end.
#include <httplib.h>

#include <cstdint>

namespace infini::serve {

void begin_request_log();
void note_request_tokens(int64_t tokens);
void write_request_log(const httplib::Request& req, const httplib::Response& res);

}  // namespace infini::serve
