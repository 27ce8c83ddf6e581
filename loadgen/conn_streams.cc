// Conn's stream half: a Server-Sent Events stream and a WebSocket, each opened by an
// HTTP/1.1 request on the same buffered socket that exchange() uses (conn.cc).
#include "loadgen/conn.h"

#include "loadgen/conn_parse.h"

#include <array>
#include <cstring>

#include "loadgen/ws_frame.h"

namespace anteroom::loadgen {

net::awaitable<Fail> Conn::sse_open(std::string_view request, int* status) {
  timed_out_ = false;
  arm();
  if (Fail f = co_await reopen()) co_return f;
  compact();
  if (Fail f = co_await write_all(request)) co_return f;
  // The head; a refusal's body (any framing) is read and dropped, a 200's stream follows.
  body_.clear();
  body_.shrink_to_fit();  // a held stream keeps no earlier answer
  http::response_parser<http::string_body> p;
  p.body_limit(kMaxBody);
  if (Fail f = co_await ConnParse::feed(*this, p, true)) co_return f;
  *status = static_cast<int>(p.get().result_int());
  if (*status != 200) {
    const ErrorKind limit = answer_error(*status, p.get()["X-Anteroom-Limit"]);
    if (Fail f = co_await ConnParse::feed(*this, p, false)) co_return f;
    if (limit == ErrorKind::kLimitAddress || limit == ErrorKind::kLimitConnections) {
      deadline_ = 0;
      co_return limit;  // a connection limit: the caller says which
    }
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
    if (Fail f = co_await fill_lean()) co_return f;
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
  body_.clear();
  body_.shrink_to_fit();
  http::response_parser<http::empty_body> p;  // a 101's head; the frames follow
  if (Fail f = co_await ConnParse::feed(*this, p, true)) co_return f;
  const unsigned status = p.get().result_int();
  if (status != 101) {
    const ErrorKind k = answer_error(status, p.get()["X-Anteroom-Limit"]);
    co_return k == ErrorKind::kProtocol ? ErrorKind::k4xx : k;
  }
  if (p.get()[http::field::sec_websocket_accept] != ws_accept_for(key)) {
    co_return ErrorKind::kProtocol;
  }
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
      if (Fail f = co_await fill_lean()) co_return f;
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
