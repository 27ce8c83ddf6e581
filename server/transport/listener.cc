#include "server/transport/listener.h"

#include <cerrno>
#include <chrono>

#include "server/transport/fail.h"
#include "server/transport/sessions.h"
#include "server/transport/trusted_proxies.h"

namespace anteroom {

Listener::Listener(net::io_context& ioc, ServerContext& ctx,
                   std::function<net::io_context&()> next_context, bool operator_routes)
    : ioc_(ioc),
      acceptor_(ioc),
      backoff_(ioc),
      ctx_(ctx),
      next_context_(std::move(next_context)),
      operator_routes_(operator_routes) {}

Result<uint16_t> Listener::listen(const std::string& host, uint16_t port) {
  beast::error_code ec;
  auto addr = net::ip::make_address(host, ec);
  const char* flag = operator_routes_ ? "--admin-listen" : "--listen";
  if (ec) {
    return Status(Code::kInvalidArgument,
                  std::string(flag) + ": '" + host + "' is not an IP address");
  }
  tcp::endpoint ep(addr, port);
  acceptor_.open(ep.protocol(), ec);
  if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(ep, ec);
  if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status(Code::kUnavailable,
                  "cannot listen on " + host + ":" + std::to_string(port) + ": " + ec.message());
  }
  return acceptor_.local_endpoint().port();
}

void Listener::stop() {
  net::post(ioc_, [this] {
    beast::error_code ec;
    acceptor_.close(ec);
    backoff_.cancel();
  });
}

void Listener::do_accept() {
  acceptor_.async_accept(next_context_(), [this](beast::error_code ec, tcp::socket s) {
    on_accept(ec, std::move(s));
  });
}

namespace {

AddressKey key_of(const tcp::socket& s) {
  beast::error_code ec;
  auto ep = s.remote_endpoint(ec);
  if (ec) return AddressKey{};
  return connection_key(ep.address());
}

// Accept errors that mean "no descriptors or memory for now": retrying at once would spin.
bool out_of_resources(const beast::error_code& ec) {
  return ec == net::error::no_descriptors || ec == net::error::no_buffer_space ||
         ec == net::error::no_memory || ec.value() == ENFILE;
}

}  // namespace

void Listener::on_accept(beast::error_code ec, tcp::socket s) {
  if (ec == net::error::operation_aborted || !acceptor_.is_open()) return;
  if (ec) {
    fail(ec, "accept");
    if (!out_of_resources(ec)) return do_accept();
    // Back off: the descriptors come back as connections close; the ones already open keep
    // being served meanwhile.
    ctx_.metrics.accept_backoff();
    backoff_.expires_after(std::chrono::milliseconds(100));
    return backoff_.async_wait([this](beast::error_code e) {
      if (!e) do_accept();
    });
  }
  s.set_option(tcp::no_delay(true), ec);
  const AddressKey address = key_of(s);
  const int64_t open = ctx_.connections.fetch_add(1, std::memory_order_relaxed) + 1;
  const bool proxy =
      !ctx_.proxies.empty() && ctx_.proxies.contains(s.remote_endpoint(ec).address());
  // A proxy's connections carry many visitors: no per-address limit for it.
  const uint32_t per_address = proxy ? UINT32_MAX : ctx_.options.max_connections_per_address;
  const bool over_total = open > static_cast<int64_t>(ctx_.options.max_connections);
  if (over_total || !ctx_.addresses.try_add(address, per_address)) {
    ctx_.connections.fetch_sub(1, std::memory_order_relaxed);
    ctx_.metrics.refused_connection();
    refuse_connection(std::move(s), !over_total);
  } else {
    const bool in_reserve =
        open > static_cast<int64_t>(ctx_.options.max_connections - ctx_.options.operator_reserve);
    run_http_session(std::move(s), ctx_, ConnectionSlot(ctx_, ConnKind::kHttp, address), in_reserve,
                     operator_routes_);
  }
  do_accept();
}

}  // namespace anteroom
