// A WebSocket speaking seed 000's protocol for one room: the socket side. What the messages
// say is app/ws_protocol.h; this reads frames, hands them over, and writes the answers.
#include <array>

#include "server/app/ws_protocol.h"
#include "server/transport/fail.h"
#include "server/transport/sessions.h"
#include "server/transport/stream_session.h"

namespace anteroom {
namespace {

class WsSession final : public StreamSession {
 public:
  WsSession(beast::tcp_stream stream, ServerContext& ctx, ConnectionSlot slot, std::string room)
      : StreamSession(ctx, std::move(slot), room, stream.get_executor()),
        // The socket alone: Beast's websocket keeps its own timer.
        ws_(stream.release_socket()),
        protocol_(ctx.api, std::move(room)) {}

  // The upgrade request is kept until the handshake completes.
  void start(http::request<http::string_body> req) {
    req_ = std::move(req);
    beast::error_code peer_ec;
    const auto peer = ws_.next_layer().remote_endpoint(peer_ec).address();
    if (!peer_ec) protocol_.set_client(ctx_.proxies.client_of(peer, forwarded_for(req_)));
    ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    ws_.set_option(websocket::stream_base::decorator(
        [](websocket::response_type& res) { res.set(http::field::server, "anteroom"); }));
    ws_.read_message_max(ctx_.options.body_limit);
    ws_.text(true);
    ws_.async_accept(req_, [self = shared()](beast::error_code ec) { self->on_accept(ec); });
  }

 private:
  std::shared_ptr<WsSession> shared() {
    return std::static_pointer_cast<WsSession>(shared_from_this());
  }

  void on_accept(beast::error_code ec) {
    req_ = {};  // the upgrade request's headers are not needed once the handshake is done
    if (ec) return fail(ec, "ws accept");
    begin();
    if (std::string hello = protocol_.greeting(); !hello.empty()) send(std::move(hello));
    do_read();
  }

  void write(const std::string& m) override {
    ws_.async_write(net::buffer(m), [self = shared()](beast::error_code ec, size_t) {
      self->written(ec, "ws write");
    });
  }
  void close_socket() override {
    if (keep_socket_) return;  // on_shutdown closes it with the closing handshake
    beast::error_code ec;
    ws_.next_layer().shutdown(tcp::socket::shutdown_both, ec);
    ws_.next_layer().close(ec);
  }
  bool wants_counts() const override { return true; }
  void on_change() override {
    if (auto push = protocol_.on_change()) send(std::move(*push));
  }
  void on_tick() override {
    if (!protocol_.ticket().empty() && heartbeat_allowed()) {
      ctx_.api.engine().heartbeat(room_, protocol_.ticket());
    }
  }
  void on_shutdown() override {
    close_without_socket();
    // 1012: service restart; clients reconnect.
    ws_.async_close(websocket::close_reason(websocket::close_code::service_restart),
                    [self = shared()](beast::error_code) {});
  }
  // The stream's bookkeeping ends; the socket stays for the closing handshake.
  void close_without_socket() {
    keep_socket_ = true;
    close();
  }

  void send(std::string m) { enqueue(std::make_shared<const std::string>(std::move(m))); }

  // Reads a message in small pieces into msg_: a waiting visitor sends a message every few
  // seconds at most, and a full-size read buffer per held socket would be most of its memory.
  void do_read() {
    ws_.async_read_some(net::buffer(piece_), [self = shared()](beast::error_code ec, size_t n) {
      self->on_read(ec, n);
    });
  }

  void on_read(beast::error_code ec, size_t n) {
    if (ec) {
      fail(ec, "ws read");
      return close();
    }
    msg_.append(piece_.data(), n);
    if (ws_.is_message_done()) {
      std::string text = std::move(msg_);
      msg_ = std::string();
      handle(text);
    }
    do_read();
  }

  void handle(std::string_view text) {
    WsProtocol::Reply r = protocol_.on_message(text);
    if (r.understood) client_spoke();  // junk does not count as the visitor being here
    deliver(std::move(r.now));
    if (!r.later) return;
    r.later([self = shared()](WsProtocol::Step step) {
      net::post(self->ws_.get_executor(),
                [self, step = std::move(step)] { self->deliver(step(self->protocol_)); });
    });
  }

  void deliver(std::vector<std::string> messages) {
    if (!protocol_.ticket().empty() &&
        !ctx_.hub.watch(room_, protocol_.ticket(), this, ctx_.options.max_streams_per_ticket)) {
      messages.emplace_back(
          R"({"type":"ERROR","message":"this ticket already has its most open streams"})");
    }
    for (std::string& m : messages) send(std::move(m));
  }

  websocket::stream<tcp::socket> ws_;
  http::request<http::string_body> req_;
  WsProtocol protocol_;
  std::array<char, 128> piece_{};
  std::string msg_;  // the message being read
  bool keep_socket_ = false;
};

}  // namespace

void run_ws_session(beast::tcp_stream stream, ServerContext& ctx, ConnectionSlot slot,
                    http::request<http::string_body> upgrade, std::string room) {
  std::make_shared<WsSession>(std::move(stream), ctx, std::move(slot), std::move(room))
      ->start(std::move(upgrade));
}

}  // namespace anteroom
