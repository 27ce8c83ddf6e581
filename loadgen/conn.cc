#include "loadgen/conn.h"

#include <netinet/in.h>
#include <time.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <cstring>

#include "loadgen/ws_frame.h"

namespace anteroom::loadgen {

namespace {
constexpr auto kTok = net::as_tuple(net::use_awaitable);
constexpr size_t kMaxHead = size_t{64} * 1024;
constexpr size_t kMaxBody = size_t{4} * 1024 * 1024;

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

net::awaitable<Fail> Conn::sse_open(std::string_view request, int* status) {
  timed_out_ = false;
  arm();
  if (Fail f = co_await reopen()) co_return f;
  compact();
  if (Fail f = co_await write_all(request)) co_return f;
  Head h;
  if (Fail f = co_await read_head(&h)) co_return f;
  *status = h.status;
  pos_ += h.length;
  if (h.status != 200 && h.content_length > 0) {
    while (end_ - pos_ < static_cast<size_t>(h.content_length)) {
      if (Fail f = co_await fill()) co_return f;
    }
    pos_ += static_cast<size_t>(h.content_length);
  }
  deadline_ = 0;
  co_return std::nullopt;
}

net::awaitable<Fail> Conn::sse_next(std::string* data) {
  timed_out_ = false;
  arm();
  for (;;) {
    std::string_view v = pending();
    size_t e = v.find("\n\n");
    if (e != std::string_view::npos) {
      std::string_view block = v.substr(0, e + 1);
      pos_ += e + 2;
      data->clear();
      bool has_data = false;
      while (!block.empty()) {
        size_t nl = block.find('\n');
        std::string_view line = block.substr(0, nl);
        block.remove_prefix(nl + 1);
        if (line.starts_with("data:")) {
          line.remove_prefix(5);
          if (line.starts_with(' ')) line.remove_prefix(1);
          if (has_data) *data += '\n';
          *data += line;
          has_data = true;
        }
      }
      if (has_data) {
        deadline_ = 0;
        co_return std::nullopt;
      }
      continue;
    }
    if (v.size() > kMaxBody) co_return ErrorKind::kProtocol;
    if (Fail f = co_await fill()) co_return f;
  }
}

net::awaitable<Fail> Conn::ws_open(std::string_view host, std::string_view path) {
  timed_out_ = false;
  arm();
  if (Fail f = co_await reopen()) co_return f;
  std::string key = ws_new_key();
  std::string req;
  req.reserve(256);
  req.append("GET ").append(path).append(" HTTP/1.1\r\nHost: ").append(host);
  req.append("\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ").append(key);
  req.append("\r\nSec-WebSocket-Version: 13\r\n\r\n");
  compact();
  if (Fail f = co_await write_all(req)) co_return f;
  Head h;
  if (Fail f = co_await read_head(&h)) co_return f;
  if (h.status != 101) co_return h.status >= 500 ? ErrorKind::k5xx : ErrorKind::k4xx;
  if (h.accept != ws_accept_for(key)) co_return ErrorKind::kProtocol;
  pos_ += h.length;
  frame_.clear();
  deadline_ = 0;
  co_return std::nullopt;
}

net::awaitable<Fail> Conn::ws_send(std::string_view text) {
  timed_out_ = false;
  arm();
  mask_state_ = mask_state_ * 1664525u + 1013904223u;
  std::array<uint8_t, 4> mask{};
  std::memcpy(mask.data(), &mask_state_, 4);
  std::string frame = ws_client_frame(WsOpcode::kText, text, mask);
  Fail f = co_await write_all(frame);
  deadline_ = 0;
  co_return f;
}

net::awaitable<Fail> Conn::ws_next(std::string* text) {
  timed_out_ = false;
  arm();
  for (;;) {
    WsFrame fr;
    size_t n = ws_parse_frame(pending(), kMaxBody, &fr);
    if (n == kWsBad) co_return ErrorKind::kProtocol;
    if (n == kWsNeedMore) {
      if (Fail f = co_await fill()) co_return f;
      continue;
    }
    std::string payload(fr.payload);
    pos_ += n;
    switch (fr.opcode) {
      case WsOpcode::kText:
      case WsOpcode::kBinary:
      case WsOpcode::kContinuation:
        frame_ += payload;
        if (fr.fin) {
          *text = std::move(frame_);
          frame_.clear();
          deadline_ = 0;
          co_return std::nullopt;
        }
        break;
      case WsOpcode::kPing: {
        mask_state_ = mask_state_ * 1664525u + 1013904223u;
        std::array<uint8_t, 4> mask{};
        std::memcpy(mask.data(), &mask_state_, 4);
        if (Fail f = co_await write_all(ws_client_frame(WsOpcode::kPong, payload, mask)))
          co_return f;
        break;
      }
      case WsOpcode::kPong:
        break;
      case WsOpcode::kClose:
        co_return ErrorKind::kClosed;
    }
  }
}

net::awaitable<void> Conn::ws_close() {
  // The closing handshake, as browsers do it: send Close, then read (and drop) whatever is
  // still coming until the server's Close or the end of the stream. Closing the socket with
  // unread data in it would send a reset, and a reset can make the server's kernel drop
  // frames the server has not read yet, such as the LEAVE just sent.
  if (sock_.is_open()) {
    std::array<uint8_t, 4> mask{1, 2, 3, 4};
    std::string body = {'\x03', '\xe8'};  // 1000: normal closure
    timed_out_ = false;
    arm();
    Fail f = co_await write_all(ws_client_frame(WsOpcode::kClose, body, mask));
    while (!f) {
      WsFrame fr;
      size_t n = ws_parse_frame(pending(), kMaxBody, &fr);
      if (n == kWsBad) break;
      if (n == kWsNeedMore) {
        f = co_await fill();
        continue;
      }
      pos_ += n;
      if (fr.opcode == WsOpcode::kClose) break;
    }
    deadline_ = 0;
  }
  close();
}

}  // namespace anteroom::loadgen
