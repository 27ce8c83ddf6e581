#include "server/transport/health_probe.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "server/transport/beast.h"

namespace anteroom {
namespace {

// HOST:PORT to probe: the argument, or ANTEROOM_LISTEN's port; a wildcard host (0.0.0.0, ::,
// empty) is probed on the loopback of its family.
bool target_of(std::string endpoint, std::string* host, std::string* port) {
  if (endpoint.empty()) {
    // NOLINTNEXTLINE(concurrency-mt-unsafe): the health command runs no other thread
    const char* listen = std::getenv("ANTEROOM_LISTEN");
    endpoint = listen != nullptr && *listen != '\0' ? listen : "127.0.0.1:8080";
  }
  const size_t colon = endpoint.rfind(':');
  if (colon == std::string::npos || colon + 1 == endpoint.size()) return false;
  *port = endpoint.substr(colon + 1);
  std::string h = endpoint.substr(0, colon);
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  if (h.empty() || h == "0.0.0.0") h = "127.0.0.1";
  if (h == "::") h = "::1";
  *host = h;
  return port->find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

int health_main(int argc, char** argv) {
  if (argc > 4) {
    std::fputs("usage: anteroom health [HOST:PORT] [PATH]\n", stderr);
    return 2;
  }
  std::string host, port;
  if (!target_of(argc >= 3 ? argv[2] : "", &host, &port)) {
    std::fputs("anteroom health: HOST:PORT expected, e.g. 127.0.0.1:8080\n", stderr);
    return 2;
  }
  const std::string path = argc >= 4 ? argv[3] : "/readyz";
  if (!path.starts_with('/')) {
    std::fputs("anteroom health: PATH must start with /\n", stderr);
    return 2;
  }
  // Asynchronous, so that the 3 s bound holds (a blocking call ignores the stream's timer):
  // a server whose kernel still accepts but which never answers is no hang.
  net::io_context io;
  tcp::resolver resolver(io);
  beast::tcp_stream stream(io);
  http::request<http::empty_body> req(http::verb::get, path, 11);
  req.set(http::field::host, host);
  req.set(http::field::user_agent, "anteroom-health");
  req.keep_alive(false);
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  std::string failed = "no answer within 3 s";
  bool answered = false;
  auto fail = [&](const beast::error_code& ec) { failed = ec.message(); };
  stream.expires_after(std::chrono::seconds(3));
  resolver.async_resolve(
      host, port, [&](beast::error_code ec, const tcp::resolver::results_type& at) {
        if (ec) return fail(ec);
        stream.async_connect(at, [&](beast::error_code ec2, const tcp::endpoint&) {
          if (ec2) return fail(ec2);
          http::async_write(stream, req, [&](beast::error_code ec3, size_t) {
            if (ec3) return fail(ec3);
            http::async_read(stream, buffer, res, [&](beast::error_code ec4, size_t) {
              if (ec4) return fail(ec4);
              answered = true;
            });
          });
        });
      });
  io.run_for(std::chrono::seconds(3));
  if (!answered) {
    std::printf("no answer from %s:%s: %s\n", host.c_str(), port.c_str(), failed.c_str());
    return 1;
  }
  std::printf("%u %s\n", res.result_int(), std::string(res.reason()).c_str());
  return res.result() == http::status::ok ? 0 : 1;
}

}  // namespace anteroom
