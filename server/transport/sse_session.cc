// Server-Sent Events for one ticket. Writes the response head (SseStream::head), then `event:
// status` frames: at once, whenever the hub says the ticket changed (and it did), and at least
// every keep-alive, each time also counting as the ticket's heartbeat. Ends after the ticket is
// admitted (the frame carries the token) or has ended.
#include "server/transport/response_head.h"
#include "server/transport/sessions.h"
#include "server/transport/stream_session.h"

namespace anteroom {
namespace {

class SseSession final : public SseStream {
 public:
  SseSession(beast::tcp_stream stream, ServerContext& ctx, ConnectionSlot slot, std::string room,
             std::string ticket)
      : SseStream(std::move(stream), ctx, std::move(slot), std::move(room)),
        ticket_(std::move(ticket)) {}

  void start() {
    begin();
    if (!ctx_.hub.watch(room_, ticket_, this, ctx_.options.max_streams_per_ticket)) {
      return net::dispatch(stream_.get_executor(), [self = shared()] {
        self->enqueue(too_many_streams_answer());
        self->finish();
      });
    }
    net::dispatch(stream_.get_executor(), [self = shared()] {
      self->enqueue(head());
      self->send_status(true);
      self->wait_for_close();
    });
  }

 private:
  std::shared_ptr<SseSession> shared() {
    return std::static_pointer_cast<SseSession>(shared_from_this());
  }

  bool wants_counts() const override { return false; }  // SSE: its own ticket only
  void on_change() override { send_status(false); }
  void on_tick() override {
    // An open stream is "seen", up to --stream-heartbeat-limit: the waiting page reopens
    // its stream well within that, a tab left behind (or a half-open connection) does not.
    if (heartbeat_allowed()) ctx_.api.engine().heartbeat(room_, ticket_);
    send_status(true);
  }
  void on_shutdown() override {
    // EventSource reconnects by itself after `retry` ms.
    enqueue(std::make_shared<const std::string>("retry: 1000\n\n"));
    finish();
  }

  void send_status(bool always) {
    if (closed() || finishing()) return;
    auto v = ctx_.api.engine().peek(room_, ticket_);
    if (!v.is_ok()) {  // the room was deleted
      finish();
      return enqueue(std::make_shared<const std::string>("event: gone\ndata: {}\n\n"));
    }
    if (!always && v->state == last_state_ && v->position == last_position_) return;
    last_state_ = v->state;
    last_position_ = v->position;
    auto frame = std::make_shared<std::string>("event: status\ndata: ");
    *frame += ctx_.api.status_json(room_, v.value());
    *frame += "\n\n";
    if (v->state != TicketState::kWaiting) finish();  // admitted or ended: the last frame
    enqueue(std::move(frame));
  }

  const std::string ticket_;
  TicketState last_state_ = TicketState::kWaiting;
  uint64_t last_position_ = 0;
};

}  // namespace

std::shared_ptr<const std::string> too_many_streams_answer() {
  static PerSecondAnswer kAnswer([] {
    const ApiResponse r =
        error_response(429, "too_many_streams", "this ticket already has its most open streams");
    return closing_answer(429, r.content_type, r.body, r.headers);
  });
  return kAnswer.get();
}

void run_sse_session(beast::tcp_stream stream, ServerContext& ctx, ConnectionSlot slot,
                     std::string room, std::string ticket) {
  std::make_shared<SseSession>(std::move(stream), ctx, std::move(slot), std::move(room),
                               std::move(ticket))
      ->start();
}

}  // namespace anteroom
