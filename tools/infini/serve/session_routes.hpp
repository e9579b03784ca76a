#pragma once
// The session endpoints of `infini serve`: create, append (text or tokens, with progress events),
// generate (plain or streamed), status and delete. Sessions live in the service's state store.
#include <httplib.h>

#include "serve/session_service.hpp"

namespace infini::serve {

void install_session_routes(httplib::Server& server, SessionService& service);

}  // namespace infini::serve
