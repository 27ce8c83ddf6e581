#include "server/transport/stream_session.h"

#include <chrono>

#include "server/transport/fail.h"
#include "server/transport/response_head.h"

namespace anteroom {

StreamSession::StreamSession(ServerContext& ctx, ConnectionSlot slot, std::string room,
                             const net::any_io_executor& executor)
    : ctx_(ctx),
      room_(std::move(room)),
      slot_(std::move(slot)),
      timer_(executor),
      alive_since_ms_(ctx.api.engine().clock().now_ms()) {}

bool StreamSession::heartbeat_allowed() const {
  return ctx_.api.engine().clock().now_ms() - alive_since_ms_ <
         int64_t{ctx_.options.stream_heartbeat_limit_s} * 1000;
}

void StreamSession::client_spoke() { alive_since_ms_ = ctx_.api.engine().clock().now_ms(); }

void StreamSession::notify() {
  net::post(timer_.get_executor(), [self = shared_from_this()] {
    if (!self->closed_ && !self->finishing_) self->on_change();
  });
}

void StreamSession::send_shared(std::shared_ptr<const std::string> m) {
  net::post(timer_.get_executor(),
            [self = shared_from_this(), m = std::move(m)] { self->enqueue(m); });
}

void StreamSession::shutdown() {
  net::post(timer_.get_executor(), [self = shared_from_this()] {
    if (!self->closed_) self->on_shutdown();
  });
}

void StreamSession::begin() {
  ctx_.hub.attach(room_, shared_from_this(), wants_counts());
  arm_timer();
}

unsigned StreamSession::keepalive_s() const {
  auto info = ctx_.api.engine().room_info(room_);
  unsigned hb = info.is_ok() ? info->config.heartbeat_timeout_seconds : 60;
  return std::max(1u, std::min(ctx_.options.stream_keepalive_s, hb / 3));
}

void StreamSession::arm_timer() {
  timer_.expires_after(std::chrono::seconds(keepalive_s()));
  timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (ec || self->closed_) return;
    self->on_tick();
    self->arm_timer();
  });
}

void StreamSession::enqueue(std::shared_ptr<const std::string> m) {
  if (closed_) return;
  if (queue_.size() >= queue_limit()) {
    ctx_.metrics.slow_consumer_dropped();
    return close();
  }
  queue_.push_back(std::move(m));
  if (queue_.size() == 1) write(*queue_.front());
}

void StreamSession::written(const beast::error_code& ec, const char* what) {
  if (ec) {
    fail(ec, what);
    return close();
  }
  queue_.pop_front();
  if (!queue_.empty()) return write(*queue_.front());
  if (finishing_) close();
}

void StreamSession::close() {
  if (closed_) return;
  closed_ = true;
  timer_.cancel();
  ctx_.hub.detach(room_, this);
  close_socket();
}

std::shared_ptr<const std::string> SseStream::head() {
  static PerSecondAnswer kHead([] {
    const std::vector<std::pair<std::string, std::string>> fields = {{"Cache-Control", "no-store"},
                                                                     {"X-Accel-Buffering", "no"}};
    HeadOptions h;
    h.content_type = "text/event-stream";
    h.headers = &fields;
    auto out = std::make_shared<std::string>();
    append_response_head(h, out.get());
    *out += "retry: 2000\n\n";
    return std::shared_ptr<const std::string>(std::move(out));
  });
  return kHead.get();
}

void SseStream::write(const std::string& m) {
  net::async_write(stream_, net::buffer(m), [self = self()](beast::error_code ec, size_t) {
    self->written(ec, "sse write");
  });
}

void SseStream::close_socket() {
  beast::error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
  stream_.close();
}

void SseStream::wait_for_close() {
  stream_.async_read_some(net::buffer(sink_), [self = self()](beast::error_code ec, size_t) {
    if (ec) {
      fail(ec, "sse read");
      return self->close();
    }
    self->wait_for_close();
  });
}

}  // namespace anteroom
