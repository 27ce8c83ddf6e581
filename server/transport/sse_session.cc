// Server-Sent Events for one ticket. Writes the response head by hand, then `event: status`
// frames: at once, whenever the hub says the ticket changed (and it did), and at least every
// --stream-keepalive seconds, each time also counting as the ticket's heartbeat. Ends after
// the ticket is admitted (the frame carries the token) or has ended.
#include <chrono>

#include "server/transport/send_queue.h"
#include "server/transport/sessions.h"

namespace anteroom {
namespace {

class SseSession : public Stream, public std::enable_shared_from_this<SseSession> {
 public:
  SseSession(beast::tcp_stream stream, ServerContext& ctx, ConnectionSlot slot, std::string room,
             std::string ticket)
      : stream_(std::move(stream)),
        ctx_(ctx),
        slot_(std::move(slot)),
        timer_(stream_.get_executor()),
        room_(std::move(room)),
        ticket_(std::move(ticket)) {}

  void start() {
    ctx_.hub.attach(room_, shared_from_this(), false);
    ctx_.hub.watch(room_, ticket_, this);
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] {
      self->enqueue(std::make_shared<const std::string>(
          "HTTP/1.1 200 OK\r\nServer: anteroom\r\nContent-Type: text/event-stream\r\n"
          "Cache-Control: no-store\r\nConnection: keep-alive\r\nX-Accel-Buffering: no\r\n\r\n"
          "retry: 2000\n\n"));
      self->send_status(true);
      self->do_wait_for_close();
      self->arm_timer();
    });
  }

  void notify() override {
    net::post(stream_.get_executor(), [self = shared_from_this()] { self->send_status(false); });
  }
  void send_shared(std::shared_ptr<const std::string>) override {}  // SSE: own ticket only
  void shutdown() override {
    net::post(stream_.get_executor(), [self = shared_from_this()] {
      // EventSource reconnects by itself after `retry` ms.
      self->enqueue(std::make_shared<const std::string>("retry: 1000\n\n"));
      self->finishing_ = true;
    });
  }

 private:
  unsigned keepalive_s() const {
    auto info = ctx_.api.engine().room_info(room_);
    unsigned hb = info.is_ok() ? info->config.heartbeat_timeout_seconds : 60;
    return std::max(1u, std::min(ctx_.options.stream_keepalive_s, hb / 3));
  }

  void arm_timer() {
    timer_.expires_after(std::chrono::seconds(keepalive_s()));
    timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (ec || self->closed_) return;
      self->ctx_.api.engine().heartbeat(self->room_, self->ticket_);  // an open stream is "seen"
      self->send_status(true);
      self->arm_timer();
    });
  }

  // Reads nothing useful; its only job is to notice the client going away.
  void do_wait_for_close() {
    stream_.async_read_some(net::buffer(sink_),
                            [self = shared_from_this()](beast::error_code ec, std::size_t) {
                              if (ec) return self->close();
                              self->do_wait_for_close();
                            });
  }

  void send_status(bool always) {
    if (closed_ || finishing_) return;
    auto v = ctx_.api.engine().peek(room_, ticket_);
    if (!v.is_ok()) {  // the room was deleted
      finishing_ = true;
      return enqueue(std::make_shared<const std::string>("event: gone\ndata: {}\n\n"));
    }
    if (!always && v->state == last_state_ && v->position == last_position_) return;
    last_state_ = v->state;
    last_position_ = v->position;
    auto frame = std::make_shared<std::string>("event: status\ndata: ");
    *frame += ctx_.api.status_json(room_, v.value());
    *frame += "\n\n";
    if (v->state != TicketState::kWaiting) finishing_ = true;  // admitted or ended: last frame
    enqueue(std::move(frame));
  }

  void enqueue(std::shared_ptr<const std::string> msg) {
    if (closed_) return;
    if (queue_.size() >= ctx_.options.stream_queue_limit) {
      ctx_.metrics.slow_consumer_dropped();
      return close();
    }
    queue_.push_back(std::move(msg));
    if (queue_.size() == 1) do_write();
  }

  void do_write() {
    net::async_write(stream_, net::buffer(*queue_.front()),
                     beast::bind_front_handler(&SseSession::on_write, shared_from_this()));
  }

  void on_write(beast::error_code ec, std::size_t) {
    if (ec) return close();
    queue_.pop_front();
    if (!queue_.empty()) return do_write();
    if (finishing_) close();
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    timer_.cancel();
    ctx_.hub.detach(room_, this);
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
  }

  beast::tcp_stream stream_;
  ServerContext& ctx_;
  ConnectionSlot slot_;
  net::steady_timer timer_;
  const std::string room_, ticket_;
  SendQueue queue_;
  std::array<char, 256> sink_{};
  TicketState last_state_ = TicketState::kWaiting;
  uint64_t last_position_ = 0;
  bool finishing_ = false;  // the last frame is queued; close once it is written
  bool closed_ = false;
};

}  // namespace

void run_sse_session(beast::tcp_stream stream, ServerContext& ctx, ConnectionSlot slot,
                     std::string room, std::string ticket) {
  std::make_shared<SseSession>(std::move(stream), ctx, std::move(slot), std::move(room),
                               std::move(ticket))
      ->start();
}

}  // namespace anteroom
