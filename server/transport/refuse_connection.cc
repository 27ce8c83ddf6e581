// A connection refused before anything is read, at the server's connection limits (the
// listener decides, listener.cc): one 503 naming the limit in X-Anteroom-Limit, then closed.
#include <memory>
#include <string>

#include "server/transport/response_head.h"
#include "server/transport/sessions.h"

namespace anteroom {

namespace {

std::shared_ptr<const std::string> limit_answer(const char* message, const char* flag) {
  ApiResponse r = error_response(503, "overloaded", message);
  r.headers.emplace_back("X-Anteroom-Limit", flag);
  return closing_answer(503, r.content_type, r.body, r.headers);
}

}  // namespace

void refuse_connection(tcp::socket socket, bool per_address) {
  static PerSecondAnswer kBusy(
      [] { return limit_answer("too many open connections, try again soon", "max-connections"); });
  static PerSecondAnswer kBusyAddress([] {
    return limit_answer("too many open connections from your address, try again soon",
                        "max-connections-per-address");
  });
  auto bytes = per_address ? kBusyAddress.get() : kBusy.get();
  auto s = std::make_shared<tcp::socket>(std::move(socket));
  net::async_write(*s, net::buffer(*bytes), [s, bytes](beast::error_code, std::size_t) {
    beast::error_code ec;
    s->shutdown(tcp::socket::shutdown_both, ec);
    s->close(ec);
  });
}

}  // namespace anteroom
