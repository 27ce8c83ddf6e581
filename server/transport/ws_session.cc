// Seed 000's WebSocket protocol for one room, so its Next.js client works unchanged:
//   client: {"type":"ENTER"|"CHECK_QUEUE_STATUS"|"LEAVE","userId":"u"}
//   server: ALLOWED / QUEUE on ENTER, QUEUE_STATUS on CHECK, VISITOR_COUNT to every socket of
//           the room when counts change, ALLOWED pushed the moment a waiting user is admitted,
//           QUEUE_STATUS pushed when the user's position moves (at most once per
//           --push-interval), ERROR on anything malformed (the socket stays open).
// Messages may carry extra fields: position, ticket, token.
#include <array>
#include <boost/json.hpp>
#include <chrono>

#include "server/transport/send_queue.h"
#include "server/transport/sessions.h"

namespace anteroom {
namespace {
namespace json = boost::json;

constexpr const char* kAllowedText = "입장이 허용되었습니다!";
constexpr const char* kQueuedText = "대기열에 추가되었습니다. 순서를 기다려 주세요.";

class WsSession : public Stream, public std::enable_shared_from_this<WsSession> {
 public:
  WsSession(beast::tcp_stream stream, ServerContext& ctx, ConnectionSlot slot, std::string room)
      : ws_(stream.release_socket()),  // the socket alone: Beast's websocket has its own timer
        ctx_(ctx),
        slot_(std::move(slot)),
        timer_(ws_.get_executor()),
        room_(std::move(room)) {}

  // The upgrade request is kept until the handshake completes.
  void start(http::request<http::string_body> req) {
    req_ = std::move(req);
    ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    ws_.set_option(websocket::stream_base::decorator(
        [](websocket::response_type& res) { res.set(http::field::server, "anteroom"); }));
    ws_.read_message_max(ctx_.options.body_limit);
    ws_.text(true);
    ws_.async_accept(req_, beast::bind_front_handler(&WsSession::on_accept, shared_from_this()));
  }

  void notify() override {
    net::post(ws_.get_executor(), [self = shared_from_this()] { self->push_ticket(); });
  }
  void send_shared(std::shared_ptr<const std::string> m) override {
    net::post(ws_.get_executor(),
              [self = shared_from_this(), m = std::move(m)] { self->enqueue(m); });
  }
  void shutdown() override {
    net::post(ws_.get_executor(), [self = shared_from_this()] {
      if (self->closed_) return;
      self->closed_ = true;
      self->timer_.cancel();
      self->ctx_.hub.detach(self->room_, self.get());
      // 1012: service restart; clients reconnect.
      self->ws_.async_close(websocket::close_reason(websocket::close_code::service_restart),
                            [self](beast::error_code) {});
    });
  }

 private:
  void on_accept(beast::error_code ec) {
    req_ = {};  // the upgrade request's headers are not needed once the handshake is done
    if (ec) return;
    ctx_.hub.attach(room_, shared_from_this(), true);
    if (auto info = ctx_.api.engine().room_info(room_); info.is_ok()) {  // counts at once
      enqueue(std::make_shared<const std::string>(PushHub::visitor_count(
          info->counters.active, info->counters.waiting, info->config.capacity)));
    }
    arm_timer();
    do_read();
  }

  void arm_timer() {
    auto info = ctx_.api.engine().room_info(room_);
    unsigned hb = info.is_ok() ? info->config.heartbeat_timeout_seconds : 60;
    timer_.expires_after(
        std::chrono::seconds(std::max(1u, std::min(ctx_.options.stream_keepalive_s, hb / 3))));
    timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (ec || self->closed_) return;
      if (!self->ticket_.empty()) self->ctx_.api.engine().heartbeat(self->room_, self->ticket_);
      self->arm_timer();
    });
  }

  // Reads a message in small pieces into msg_: a waiting visitor sends a message every few
  // seconds at most, and a full-size read buffer per held socket would be most of its memory.
  void do_read() {
    ws_.async_read_some(net::buffer(piece_),
                        beast::bind_front_handler(&WsSession::on_read, shared_from_this()));
  }

  void on_read(beast::error_code ec, std::size_t n) {
    if (ec) return close();
    msg_.append(piece_.data(), n);
    if (ws_.is_message_done()) {
      std::string text = std::move(msg_);
      msg_ = std::string();
      handle(text);
    }
    do_read();
  }

  void error(std::string_view message) {
    json::object o;
    o["type"] = "ERROR";
    o["message"] = message;
    enqueue(std::make_shared<const std::string>(json::serialize(o)));
  }

  void handle(std::string_view text) {
    boost::system::error_code ec;
    json::value v = json::parse(text, ec);
    if (ec || !v.is_object()) return error("messages must be JSON objects");
    const json::object& o = v.as_object();
    const json::value* type = o.if_contains("type");
    const json::value* user = o.if_contains("userId");
    if (type == nullptr || !type->is_string()) return error("type must be a string");
    if (user == nullptr || !user->is_string() || !valid_user(user->as_string())) {
      return error("userId must be a string of 1-128 characters");
    }
    const std::string uid(user->as_string());
    if (*type == "ENTER") return enter(uid);
    if (*type == "CHECK_QUEUE_STATUS") return check(uid);
    if (*type == "LEAVE") return leave(uid);
    error("unknown type; expected ENTER, CHECK_QUEUE_STATUS or LEAVE");
  }

  void enter(const std::string& uid) {
    auto r = ctx_.api.join(room_, uid);
    if (!r.is_ok()) return error(r.status().message());
    user_ = uid;
    ticket_ = std::string(id_view(r->ticket.id));
    ctx_.hub.watch(room_, ticket_, this);
    if (r->durable_at == 0) return send_ticket(r->ticket, true);
    // Under `appendfsync always` the answer waits until the join is on disk.
    ctx_.api.engine().when_durable(
        r->durable_at, [self = shared_from_this(), v = r->ticket](const Status& st) {
          net::post(self->ws_.get_executor(), [self, v, st] {
            if (!st.is_ok()) return self->error("the join could not be stored: " + st.message());
            self->send_ticket(v, true);
          });
        });
  }

  void check(const std::string& uid) {
    json::object o;
    o["type"] = "QUEUE_STATUS";
    o["inReplyTo"] = "CHECK_QUEUE_STATUS";  // tells the answer from a push of the same type
    auto info = ctx_.api.engine().room_info(room_);
    if (!info.is_ok()) return error(info.status().message());
    if (uid != user_ || ticket_.empty()) {
      o["allowed"] = false;
      o["message"] = "대기열에서 찾을 수 없습니다.";
    } else {
      auto v = ctx_.api.engine().status(room_, ticket_);
      if (!v.is_ok()) return error(v.status().message());
      last_state_ = v->state;
      last_position_ = v->position;
      bool allowed = holds_slot(v->state);
      o["allowed"] = allowed;
      o["message"] = allowed ? std::string("입장이 허용되었습니다.")
                             : "현재 대기 순번: " + std::to_string(v->position);
      o["position"] = v->position;
      o["ticket"] = ticket_;
      o["seq"] = v->seq;
      o["status"] = state_name(v->state);
      if (allowed) o["token"] = ctx_.api.token_for(room_, v.value());
    }
    o["visitorCount"] = info->counters.active;
    o["queueCount"] = info->counters.waiting;
    o["maxCount"] = info->config.capacity;
    enqueue(std::make_shared<const std::string>(json::serialize(o)));
  }

  void leave(const std::string& uid) {
    if (uid != user_ || ticket_.empty()) return error("this user has not entered on this socket");
    auto v = ctx_.api.engine().leave(room_, ticket_);
    if (!v.is_ok()) return error(v.status().message());
    last_state_ = v->state;
  }

  // ENTER's answer, or a push after a change: ALLOWED once admitted, else QUEUE (on ENTER)
  // or QUEUE_STATUS (a push when the position moved).
  void send_ticket(const TicketView& v, bool entering) {
    last_state_ = v.state;
    last_position_ = v.position;
    json::object o;
    if (holds_slot(v.state)) {
      o["type"] = "ALLOWED";
      o["message"] = kAllowedText;
      o["token"] = ctx_.api.token_for(room_, v);
    } else if (v.state == TicketState::kWaiting) {
      o["type"] = entering ? "QUEUE" : "QUEUE_STATUS";
      o["message"] =
          entering ? std::string(kQueuedText) : "현재 대기 순번: " + std::to_string(v.position);
      if (!entering) o["allowed"] = false;
      o["position"] = v.position;
      o["visitorCount"] = v.active;
      o["queueCount"] = v.waiting;
      o["maxCount"] = v.capacity;
    } else {
      o["type"] = "QUEUE_STATUS";
      o["allowed"] = false;
      o["message"] = std::string("대기 순번이 만료되었습니다 (") + state_name(v.state) + ")";
    }
    o["status"] = state_name(v.state);
    o["ticket"] = std::string(id_view(v.id));
    o["seq"] = v.seq;
    enqueue(std::make_shared<const std::string>(json::serialize(o)));
  }

  void push_ticket() {
    if (closed_ || ticket_.empty()) return;
    auto v = ctx_.api.engine().peek(room_, ticket_);
    if (!v.is_ok() || (v->state == last_state_ && v->position == last_position_)) return;
    send_ticket(v.value(), false);
  }

  void enqueue(std::shared_ptr<const std::string> m) {
    if (closed_) return;
    if (queue_.size() >= ctx_.options.stream_queue_limit) {
      ctx_.metrics.slow_consumer_dropped();
      return close();
    }
    queue_.push_back(std::move(m));
    if (queue_.size() == 1) do_write();
  }

  void do_write() {
    ws_.async_write(net::buffer(*queue_.front()),
                    beast::bind_front_handler(&WsSession::on_write, shared_from_this()));
  }

  void on_write(beast::error_code ec, std::size_t) {
    if (ec) return close();
    queue_.pop_front();
    if (!queue_.empty()) do_write();
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    timer_.cancel();
    ctx_.hub.detach(room_, this);
    beast::error_code ec;
    ws_.next_layer().shutdown(tcp::socket::shutdown_both, ec);
    ws_.next_layer().close(ec);
  }

  websocket::stream<tcp::socket> ws_;
  http::request<http::string_body> req_;
  ServerContext& ctx_;
  ConnectionSlot slot_;
  net::steady_timer timer_;
  const std::string room_;
  std::string user_, ticket_;
  std::array<char, 128> piece_{};
  std::string msg_;  // the message being read
  SendQueue queue_;
  TicketState last_state_ = TicketState::kWaiting;
  uint64_t last_position_ = 0;
  bool closed_ = false;
};

}  // namespace

void run_ws_session(beast::tcp_stream stream, ServerContext& ctx, ConnectionSlot slot,
                    http::request<http::string_body> upgrade, std::string room) {
  std::make_shared<WsSession>(std::move(stream), ctx, std::move(slot), std::move(room))
      ->start(std::move(upgrade));
}

}  // namespace anteroom
