// The operator dashboard's stream (GET /v1/admin/stream): Server-Sent Events carrying the
// frame of every room the server builds once a second (DashboardFeed), the same bytes for
// every dashboard. It registers with the push hub under a name no room can have, so the
// hub's broadcast reaches it; a dashboard too slow to keep up is dropped like any stream.
#include "server/app/dashboard_feed.h"
#include "server/transport/sessions.h"
#include "server/transport/stream_session.h"

namespace anteroom {
namespace {

class DashboardSession final : public SseStream {
 public:
  DashboardSession(beast::tcp_stream stream, ServerContext& ctx, ConnectionSlot slot,
                   std::shared_ptr<const std::string> first)
      : SseStream(std::move(stream), ctx, std::move(slot), std::string(kDashboardStreams)),
        first_(std::move(first)) {}

  void start() {
    begin();
    net::dispatch(stream_.get_executor(), [self = shared()] {
      self->enqueue(head());
      if (self->first_) self->enqueue(std::move(self->first_));  // the newest frame, at once
      self->wait_for_close();
    });
  }

 private:
  std::shared_ptr<DashboardSession> shared() {
    return std::static_pointer_cast<DashboardSession>(shared_from_this());
  }
  bool wants_counts() const override { return true; }  // the broadcast frames
  // A frame of many rooms is large and the next one replaces it: a dashboard more than two
  // frames behind is dropped (its page reconnects by itself) rather than held in memory.
  size_t queue_limit() const override { return 3; }  // the head, the first frame, one more
  void on_change() override {}
  void on_tick() override {}  // a frame comes every second anyway
  void on_shutdown() override {
    enqueue(std::make_shared<const std::string>("retry: 1000\n\n"));
    finish();
  }

  std::shared_ptr<const std::string> first_;
};

}  // namespace

void run_dashboard_session(beast::tcp_stream stream, ServerContext& ctx, ConnectionSlot slot,
                           std::shared_ptr<const std::string> first) {
  std::make_shared<DashboardSession>(std::move(stream), ctx, std::move(slot), std::move(first))
      ->start();
}

}  // namespace anteroom
