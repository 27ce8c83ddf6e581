// One client connection over Asio coroutines, speaking HTTP/1.1 (keep-alive; answers read by
// Beast's parser: Content-Length, chunked, or to the end), Server-Sent Events and WebSocket for
// a virtual visitor. Errors come
// back as values (an ErrorKind), never as exceptions. Timeouts come from a per-thread
// Watchdog that sweeps deadlines every few milliseconds instead of arming a timer per request.
#pragma once

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "loadgen/run_result.h"

namespace anteroom::loadgen {

namespace net = boost::asio;
// Microseconds on the steady clock (CLOCK_MONOTONIC: the same in every process).
int64_t now_us();
// HOST (an IPv4 or IPv6 address, or a name looked up once) and PORT as an endpoint; an
// unspecified address if the name does not resolve (connecting to it then fails).
boost::asio::ip::tcp::endpoint resolve_endpoint(const std::string& host, uint16_t port);
using tcp = net::ip::tcp;
using Fail = std::optional<ErrorKind>;  // nullopt: it worked

class Conn;

// Closes connections whose deadline passed. One per thread; Conns link themselves in.
class Watchdog {
 public:
  explicit Watchdog(net::io_context& io) : timer_(io) {}
  void start();
  void stop();

 private:
  friend class Conn;
  void sweep();
  net::steady_timer timer_;
  Conn* head_ = nullptr;
  bool stopped_ = false;
};

struct HttpResponse {
  int status = 0;
  std::string_view body;  // valid until the next call on the connection
  bool close = false;     // the server said Connection: close (or HTTP/1.0 without keep-alive)
  // Response headers a visitor acts on (valid until the next call on the connection).
  std::string_view location;    // a redirect's
  std::string_view set_cookie;  // the first Set-Cookie, whole
  std::string_view content_type;
  // A 503 at a server's connection limit (X-Anteroom-Limit): which; otherwise nothing.
  std::optional<ErrorKind> limit;
};
// The error an HTTP answer of `status` is where another was wanted: a server's connection
// limit if X-Anteroom-Limit (`limit_header`) names one, else by class (4xx, 5xx).
ErrorKind answer_error(unsigned status, std::string_view limit_header);

class Conn {
 public:
  // `open_gauge` counts this process's open connections (may be null).
  Conn(net::io_context& io, Watchdog& watchdog, std::atomic<int64_t>* open_gauge);
  ~Conn();
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  // Connects to `to`, from `from` if it is not unspecified (any free port of that address).
  net::awaitable<Fail> connect(tcp::endpoint to, net::ip::address from);
  // Sends one request and reads its response. If the connection was closed, or the server
  // closed an idle keep-alive connection just as the request went out, it reconnects once,
  // as browsers do.
  net::awaitable<Fail> exchange(std::string_view request, HttpResponse* out);

  // Server-Sent Events: sends the request and reads the response head; `*status` is its code
  // (the stream follows only if it is 200).
  net::awaitable<Fail> sse_open(std::string_view request, int* status);
  // The data of the next event that has data (comments and retry lines are skipped).
  net::awaitable<Fail> sse_next(std::string* data);

  // WebSocket: the upgrade handshake on `path`, then text messages.
  net::awaitable<Fail> ws_open(std::string_view host, std::string_view path);
  net::awaitable<Fail> ws_send(std::string_view text);
  net::awaitable<Fail> ws_next(std::string* text);  // answers pings, ends on close
  net::awaitable<void> ws_close();

  // Requests after this many microseconds from now fail with kTimeout; 0 switches it off.
  void set_timeout(int64_t micros);
  void close();
  bool is_open() const { return sock_.is_open(); }

 private:
  friend class Watchdog;
  friend struct ConnParse;  // conn_parse.h
  // The longest body, SSE event or WebSocket message accepted (conn.cc, conn_streams.cc).
  static constexpr size_t kMaxBody = size_t{4} * 1024 * 1024;
  static constexpr size_t kFirstBuffer = 2048;  // taken at the first read; doubles as needed
  net::awaitable<Fail> fill();                  // reads more bytes into the buffer
  // For a held stream: with nothing pending, gives the buffer back while it waits for the
  // socket to be readable, then takes just the bytes that arrived (else as fill()).
  net::awaitable<Fail> fill_lean();
  net::awaitable<Fail> reopen();  // connects again to the same place if it was closed
  net::awaitable<Fail> write_all(std::string_view bytes);
  net::awaitable<Fail> read_response(HttpResponse* out);
  std::string_view pending() const { return {buf_.data() + pos_, end_ - pos_}; }
  void arm() { deadline_ = timeout_ == 0 ? 0 : now_us() + timeout_; }
  Fail map_error(const boost::system::error_code& ec) const;
  void compact();

  tcp::socket sock_;
  Watchdog& watchdog_;
  std::atomic<int64_t>* open_gauge_;
  bool counted_ = false;
  tcp::endpoint to_;
  net::ip::address from_;
  bool connected_once_ = false;
  std::vector<char> buf_;  // received bytes; [pos_, end_) not yet consumed
  size_t pos_ = 0;
  size_t end_ = 0;
  uint32_t mask_state_ = 0x9e3779b9;  // WebSocket masks need not be secret, only varied
  std::string frame_;                 // a WebSocket message being reassembled
  // The last response's body and the headers HttpResponse points at, until the next call.
  std::string body_, location_, set_cookie_, content_type_;
  int64_t deadline_ = 0;  // steady clock, microseconds; 0: none
  int64_t timeout_ = 0;
  bool timed_out_ = false;
  Conn* prev_ = nullptr;
  Conn* next_ = nullptr;
};

}  // namespace anteroom::loadgen
