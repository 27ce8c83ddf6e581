// The client connection's socket, its deadline watchdog and the HTTP/1.1 request-response
// exchange; the SSE and WebSocket streams are in conn_streams.cc.
#include "loadgen/conn.h"

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

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i];
    char y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}
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
  buf_.resize(size_t{16} * 1024);
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
  if (end_ == buf_.size()) buf_.resize(buf_.size() * 2);
  auto [ec, n] =
      co_await sock_.async_read_some(net::buffer(buf_.data() + end_, buf_.size() - end_), kTok);
  if (ec) co_return map_error(ec);
  end_ += n;
  co_return std::nullopt;
}

net::awaitable<Fail> Conn::write_all(std::string_view bytes) {
  if (timed_out_) co_return ErrorKind::kTimeout;
  auto [ec, n] = co_await net::async_write(sock_, net::buffer(bytes.data(), bytes.size()), kTok);
  if (ec) co_return map_error(ec);
  co_return std::nullopt;
}

net::awaitable<Fail> Conn::read_head(Head* h) {
  for (;;) {
    std::string_view v = pending();
    size_t e = v.find("\r\n\r\n");
    if (e != std::string_view::npos) {
      std::string_view head = v.substr(0, e + 2);
      h->length = e + 4;
      if (head.size() < 12 || !head.starts_with("HTTP/1.")) co_return ErrorKind::kProtocol;
      int st = 0;
      for (size_t i = 9; i < 12; ++i) {
        if (head[i] < '0' || head[i] > '9') co_return ErrorKind::kProtocol;
        st = st * 10 + (head[i] - '0');
      }
      h->status = st;
      h->close = false;
      h->content_length = -1;
      h->accept = {};
      size_t line = head.find("\r\n") + 2;
      while (line < head.size()) {
        size_t end = head.find("\r\n", line);
        std::string_view l = head.substr(line, end - line);
        line = end + 2;
        size_t colon = l.find(':');
        if (colon == std::string_view::npos) co_return ErrorKind::kProtocol;
        std::string_view name = l.substr(0, colon);
        std::string_view value = trim(l.substr(colon + 1));
        if (iequals(name, "content-length")) {
          int64_t n = 0;
          for (char ch : value) {
            if (ch < '0' || ch > '9') co_return ErrorKind::kProtocol;
            n = n * 10 + (ch - '0');
          }
          h->content_length = n;
        } else if (iequals(name, "connection")) {
          h->close = iequals(value, "close");
        } else if (iequals(name, "transfer-encoding")) {
          co_return ErrorKind::kProtocol;  // no server it talks to sends chunked answers
        } else if (iequals(name, "sec-websocket-accept")) {
          h->accept = value;
        }
      }
      co_return std::nullopt;
    }
    if (v.size() > kMaxHead) co_return ErrorKind::kProtocol;
    if (Fail f = co_await fill()) co_return f;
  }
}

net::awaitable<Fail> Conn::read_response(HttpResponse* out) {
  Head h;
  if (Fail f = co_await read_head(&h)) co_return f;
  out->status = h.status;
  out->close = h.close;
  bool no_body = h.status == 204 || h.status == 304 || (h.status >= 100 && h.status < 200);
  if (no_body) h.content_length = 0;
  if (h.content_length > static_cast<int64_t>(kMaxBody)) co_return ErrorKind::kProtocol;
  if (h.content_length >= 0) {
    auto need = static_cast<size_t>(h.content_length);
    while (end_ - pos_ < h.length + need) {
      if (Fail f = co_await fill()) co_return f;
    }
    out->body = std::string_view(buf_.data() + pos_ + h.length, need);
    pos_ += h.length + need;
  } else {
    // No length: the body runs to the end of the connection.
    for (;;) {
      Fail f = co_await fill();
      if (f == ErrorKind::kClosed) break;
      if (f) co_return f;
      if (end_ - pos_ > kMaxBody) co_return ErrorKind::kProtocol;
    }
    out->body = std::string_view(buf_.data() + pos_ + h.length, end_ - pos_ - h.length);
    pos_ = end_;
    out->close = true;
  }
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

}  // namespace anteroom::loadgen
