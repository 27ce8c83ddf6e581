#include "loadgen/origin.h"

#include <unistd.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <cstdio>
#include <string>

namespace anteroom::loadgen {

namespace {
namespace net = boost::asio;
using tcp = net::ip::tcp;
constexpr auto kTok = net::as_tuple(net::use_awaitable);

struct State {
  uint32_t capacity;
  double service_ms;
  uint32_t in_flight = 0;
};

net::awaitable<void> serve(tcp::socket sock, State& st) {
  std::string buf;
  char chunk[4096];
  net::steady_timer timer(sock.get_executor());
  for (;;) {
    size_t end;
    while ((end = buf.find("\r\n\r\n")) == std::string::npos) {
      auto [ec, n] = co_await sock.async_read_some(net::buffer(chunk), kTok);
      if (ec || buf.size() > 65536) co_return;
      buf.append(chunk, n);
    }
    buf.erase(0, end + 4);  // requests to the origin carry no body
    std::string_view answer;
    if (st.in_flight >= st.capacity) {
      answer =
          "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: "
          "10\r\n\r\noverloaded";
    } else {
      ++st.in_flight;
      timer.expires_after(std::chrono::microseconds(static_cast<int64_t>(st.service_ms * 1000)));
      co_await timer.async_wait(kTok);
      --st.in_flight;
      answer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    }
    auto [ec, n] = co_await net::async_write(sock, net::buffer(answer.data(), answer.size()), kTok);
    if (ec) co_return;
  }
}

net::awaitable<void> accept_loop(tcp::acceptor& acc, State& st) {
  for (;;) {
    auto [ec, sock] = co_await acc.async_accept(kTok);
    if (ec) {
      if (ec == net::error::operation_aborted) co_return;
      continue;  // e.g. out of descriptors for a moment
    }
    net::co_spawn(acc.get_executor(), serve(std::move(sock), st), net::detached);
  }
}
}  // namespace

int run_origin(uint16_t port, uint32_t capacity, double service_ms, int ready_fd) {
  net::io_context io(1);
  State st{capacity, service_ms};
  tcp::acceptor acc(io);
  boost::system::error_code ec;
  tcp::endpoint ep(net::ip::make_address("127.0.0.1"), port);
  acc.open(ep.protocol(), ec);
  if (!ec) acc.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acc.bind(ep, ec);
  if (!ec) acc.listen(4096, ec);
  if (ec) {
    std::fprintf(stderr, "origin: cannot listen on 127.0.0.1:%u: %s\n", port, ec.message().c_str());
    return 2;
  }
  std::string bound = std::to_string(acc.local_endpoint().port()) + "\n";
  if (ready_fd >= 0) {
    (void)!write(ready_fd, bound.data(), bound.size());
    close(ready_fd);
  } else {
    std::printf("origin listening on http://127.0.0.1:%s", bound.c_str());
    std::fflush(stdout);
  }
  net::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code&, int) { io.stop(); });
  net::co_spawn(io, accept_loop(acc, st), net::detached);
  io.run();
  return 0;
}

}  // namespace anteroom::loadgen
