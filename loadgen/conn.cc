// The client connection's socket, its deadline watchdog and the HTTP/1.1 request-response
// exchange; the SSE and WebSocket streams are in conn_streams.cc.
#include "loadgen/conn.h"

#include "loadgen/conn_parse.h"

#include <netinet/in.h>
#include <time.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <cstring>

namespace anteroom::loadgen {

namespace {
constexpr auto kTok = net::as_tuple(net::use_awaitable);
constexpr size_t kMaxHead = size_t{64} * 1024;

}  // namespace

tcp::endpoint resolve_endpoint(const std::string& host, uint16_t port) {
  boost::system::error_code ec;
  auto address = net::ip::make_address(host, ec);
  if (!ec) return {address, port};
  net::io_context io;
  tcp::resolver resolver(io);
  auto results = resolver.resolve(host, std::to_string(port), ec);
  if (ec || results.empty()) return {net::ip::address_v4::any(), port};
  return *results.begin();
}

int64_t now_us() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000 + ts.tv_nsec / 1000;
}

void Watchdog::start() {
  stopped_ = false;
  sweep();
}

void Watchdog::stop() {
  stopped_ = true;
  timer_.cancel();
}

void Watchdog::sweep() {
  timer_.expires_after(std::chrono::milliseconds(25));
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopped_) return;
    int64_t now = now_us();
    for (Conn* c = head_; c != nullptr; c = c->next_) {
      if (c->deadline_ != 0 && now >= c->deadline_ && !c->timed_out_) {
        c->timed_out_ = true;
        boost::system::error_code ignored;
        c->sock_.cancel(ignored);
      }
    }
    sweep();
  });
}

Conn::Conn(net::io_context& io, Watchdog& watchdog, std::atomic<int64_t>* open_gauge)
    : sock_(io), watchdog_(watchdog), open_gauge_(open_gauge) {
  next_ = watchdog_.head_;
  if (next_ != nullptr) next_->prev_ = this;
  watchdog_.head_ = this;
  mask_state_ ^= static_cast<uint32_t>(reinterpret_cast<uintptr_t>(this) >> 4);
}

Conn::~Conn() {
  close();
  if (prev_ != nullptr) prev_->next_ = next_;
  if (next_ != nullptr) next_->prev_ = prev_;
  if (watchdog_.head_ == this) watchdog_.head_ = next_;
}

void Conn::set_timeout(int64_t micros) { timeout_ = micros; }

void Conn::close() {
  if (sock_.is_open()) {
    boost::system::error_code ignored;
    sock_.close(ignored);
  }
  if (counted_ && open_gauge_ != nullptr) open_gauge_->fetch_sub(1, std::memory_order_relaxed);
  counted_ = false;
  pos_ = end_ = 0;
}

Fail Conn::map_error(const boost::system::error_code& ec) const {
  if (timed_out_) return ErrorKind::kTimeout;
  if (ec == net::error::operation_aborted) return ErrorKind::kTimeout;
  return ErrorKind::kClosed;
}

net::awaitable<Fail> Conn::connect(tcp::endpoint to, net::ip::address from) {
  close();
  to_ = to;
  from_ = from;
  connected_once_ = true;
  timed_out_ = false;
  arm();
  boost::system::error_code ec;
  sock_.open(to.protocol(), ec);
  if (ec) co_return ErrorKind::kConnect;  // typically out of descriptors
  if (!from.is_unspecified()) {
    // Choose the port at connect time, per destination: otherwise bind() would spend one of
    // the address's ~28,000 ephemeral ports per socket whatever the destination.
    int one = 1;
    ::setsockopt(sock_.native_handle(), IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
    sock_.bind(tcp::endpoint(from, 0), ec);
    if (ec) {
      close();
      co_return ErrorKind::kConnect;
    }
  }
  auto [cec] = co_await sock_.async_connect(to, kTok);
  if (cec) {
    bool timed_out = timed_out_;
    close();
    deadline_ = 0;
    co_return timed_out ? ErrorKind::kTimeout : ErrorKind::kConnect;
  }
  sock_.set_option(tcp::no_delay(true), ec);
  if (open_gauge_ != nullptr) open_gauge_->fetch_add(1, std::memory_order_relaxed);
  counted_ = true;
  deadline_ = 0;
  co_return std::nullopt;
}

void Conn::compact() {
  if (pos_ == end_) {
    pos_ = end_ = 0;
  } else if (pos_ > 0) {
    std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
    end_ -= pos_;
    pos_ = 0;
  }
}

net::awaitable<Fail> Conn::fill() {
  if (timed_out_) co_return ErrorKind::kTimeout;
  if (!sock_.is_open()) co_return ErrorKind::kClosed;
  compact();
  if (end_ == buf_.size()) buf_.resize(std::max(buf_.size() * 2, kFirstBuffer));
  auto [ec, n] =
      co_await sock_.async_read_some(net::buffer(buf_.data() + end_, buf_.size() - end_), kTok);
  if (ec) co_return map_error(ec);
  end_ += n;
  co_return std::nullopt;
}

net::awaitable<Fail> Conn::fill_lean() {
  if (pos_ != end_) co_return co_await fill();  // a message half read keeps its buffer
  if (timed_out_) co_return ErrorKind::kTimeout;
  if (!sock_.is_open()) co_return ErrorKind::kClosed;
  std::vector<char>().swap(buf_);
  pos_ = end_ = 0;
  boost::system::error_code ec;
  sock_.non_blocking(true, ec);  // the read below must not block; async calls are unaffected
  for (;;) {
    auto [wec] = co_await sock_.async_wait(tcp::socket::wait_read, kTok);
    if (wec) co_return map_error(wec);
    // What is there, exactly; at least a little, so that the end of the stream shows.
    const size_t ready = sock_.available(ec);
    if (ec) co_return ErrorKind::kClosed;
    buf_.resize(std::max<size_t>(ready, 64));
    const size_t n = sock_.read_some(net::buffer(buf_), ec);
    if (ec == net::error::would_block || ec == net::error::try_again) continue;
    if (ec) co_return map_error(ec);
    end_ = n;
    co_return std::nullopt;
  }
}

net::awaitable<Fail> Conn::write_all(std::string_view bytes) {
  if (timed_out_) co_return ErrorKind::kTimeout;
  auto [ec, n] = co_await net::async_write(sock_, net::buffer(bytes.data(), bytes.size()), kTok);
  if (ec) co_return map_error(ec);
  co_return std::nullopt;
}

net::awaitable<Fail> ConnParse::feed(Conn& c, http::basic_parser<false>& p, bool head_only) {
  for (;;) {
    if (std::string_view v = c.pending(); !v.empty()) {
      boost::beast::error_code ec;
      const size_t used = p.put(net::buffer(v.data(), v.size()), ec);
      c.pos_ += used;
      if (ec && ec != http::error::need_more) co_return ErrorKind::kProtocol;
      if (head_only ? p.is_header_done() : p.is_done()) co_return std::nullopt;
      if (!ec && used != 0) continue;  // it may take more of what is buffered
    }
    Fail f = co_await c.fill();
    if (f == ErrorKind::kClosed && p.is_header_done() && !head_only) {
      boost::beast::error_code ec;
      p.put_eof(ec);  // a body that runs to the end of the connection ends here
      if (!ec && p.is_done()) co_return std::nullopt;
    }
    if (f) co_return f;
  }
}

net::awaitable<Fail> Conn::read_response(HttpResponse* out) {
  http::response_parser<http::string_body> p;
  p.header_limit(static_cast<uint32_t>(kMaxHead));
  p.body_limit(kMaxBody);
  if (Fail f = co_await ConnParse::feed(*this, p, false)) co_return f;
  auto& res = p.get();
  body_ = std::move(res.body());
  location_ = res[http::field::location];
  set_cookie_ = res[http::field::set_cookie];
  content_type_ = res[http::field::content_type];
  out->status = static_cast<int>(res.result_int());
  out->limit.reset();
  if (out->status == 503) {
    const ErrorKind k = answer_error(503, res["X-Anteroom-Limit"]);
    if (k != ErrorKind::k5xx) out->limit = k;
  }
  out->body = body_;
  out->location = location_;
  out->set_cookie = set_cookie_;
  out->content_type = content_type_;
  out->close = !res.keep_alive();
  if (out->close) {
    // The body stays readable: close the socket but keep the buffer until the next call.
    boost::system::error_code ignored;
    sock_.close(ignored);
    if (counted_ && open_gauge_ != nullptr) open_gauge_->fetch_sub(1, std::memory_order_relaxed);
    counted_ = false;
  }
  co_return std::nullopt;
}

net::awaitable<Fail> Conn::exchange(std::string_view request, HttpResponse* out) {
  timed_out_ = false;
  arm();
  for (int attempt = 0; attempt < 2; ++attempt) {
    bool reused = sock_.is_open();
    if (!reused) {
      if (!connected_once_) co_return ErrorKind::kConnect;
      int64_t deadline = deadline_;
      if (Fail f = co_await connect(to_, from_)) co_return f;
      deadline_ = deadline;
    }
    compact();
    Fail f = co_await write_all(request);
    if (!f) f = co_await read_response(out);
    if (!f) {
      deadline_ = 0;
      co_return std::nullopt;
    }
    bool nothing_back = end_ == pos_;
    close();
    if (!(reused && f == ErrorKind::kClosed && nothing_back)) {
      deadline_ = 0;
      co_return f;
    }
  }
  deadline_ = 0;
  co_return ErrorKind::kClosed;
}

net::awaitable<Fail> Conn::reopen() {
  if (sock_.is_open()) co_return std::nullopt;
  if (!connected_once_) co_return ErrorKind::kConnect;
  Fail f = co_await connect(to_, from_);
  arm();  // connect() spent the deadline it was given; the request gets its own
  co_return f;
}

ErrorKind answer_error(unsigned status, std::string_view limit_header) {
  if (status == 503 && limit_header == "max-connections-per-address") {
    return ErrorKind::kLimitAddress;
  }
  if (status == 503 && limit_header == "max-connections") return ErrorKind::kLimitConnections;
  if (status >= 500) return ErrorKind::k5xx;
  if (status >= 400) return ErrorKind::k4xx;
  return ErrorKind::kProtocol;
}

}  // namespace anteroom::loadgen
