// Accepts connections and starts an HTTP session for each on the next io_context in turn;
// past --max-connections, or --max-connections-per-address from one address, it answers
// 503 and closes instead. Out of descriptors, it stops accepting for 100 ms rather than
// retrying in a loop (the ones it has keep being served).
//
// Thread safety: start() once; stop() from any thread (it posts itself to the acceptor's
// context); everything else runs on that context.
#pragma once

#include <functional>
#include <memory>

#include "engine/status.h"
#include "server/transport/beast.h"
#include "server/transport/context.h"

namespace anteroom {

class Listener {
 public:
  // `next_context` picks the io_context a new connection lives on. `operator_routes`: this
  // is the --admin-listen listener (ApiRequest::operator_listener).
  Listener(net::io_context& ioc, ServerContext& ctx, std::function<net::io_context&()> next_context,
           bool operator_routes = false);

  // Binds and listens; returns the bound port (useful with port 0).
  Result<uint16_t> listen(const std::string& host, uint16_t port);
  void start() { do_accept(); }
  void stop();

 private:
  void do_accept();
  void on_accept(beast::error_code ec, tcp::socket socket);

  net::io_context& ioc_;  // the acceptor's
  tcp::acceptor acceptor_;
  net::steady_timer backoff_;  // waits out running out of descriptors
  ServerContext& ctx_;
  std::function<net::io_context&()> next_context_;
  const bool operator_routes_;
};

}  // namespace anteroom
