// What the SSE and WebSocket sessions share: a bounded queue of outgoing messages (a
// consumer too slow to keep it short is dropped), the keep-alive timer, registration with
// the push hub, and closing once. Derived sessions say how to write a message and what to
// do on a push, a tick and shutdown.
//
// Thread safety: every method runs on the connection's io_context (its strand); notify(),
// send_shared() and shutdown() come from any thread and post themselves there.
#pragma once

#include <array>
#include <memory>
#include <string>

#include "server/app/push_hub.h"
#include "server/transport/beast.h"
#include "server/transport/context.h"
#include "server/transport/send_queue.h"

namespace anteroom {

class StreamSession : public Stream, public std::enable_shared_from_this<StreamSession> {
 public:
  void notify() final;
  void send_shared(std::shared_ptr<const std::string> message) final;
  void shutdown() final;

 protected:
  StreamSession(ServerContext& ctx, ConnectionSlot slot, std::string room,
                const net::any_io_executor& executor);

  // Starts writing `message`; calls written() when done.
  virtual void write(const std::string& message) = 0;
  virtual void close_socket() = 0;
  virtual void on_change() = 0;    // the watched ticket may have changed
  virtual void on_tick() = 0;      // every keepalive_s(): heartbeat, keep-alive frame
  virtual void on_shutdown() = 0;  // the server is stopping: say goodbye
  virtual bool wants_counts() const = 0;
  // Messages queued before the stream counts as too slow and is dropped.
  virtual size_t queue_limit() const { return ctx_.options.stream_queue_limit; }

  // Queues a message; drops the stream if --stream-queue messages are already waiting.
  void enqueue(std::shared_ptr<const std::string> message);
  void written(const beast::error_code& ec, const char* what);
  // Close once the queue has been written.
  void finish() { finishing_ = true; }
  bool finishing() const { return finishing_; }
  void close();
  bool closed() const { return closed_; }
  // Registers with the hub and starts the timer.
  void begin();
  // How often on_tick() runs: --stream-keepalive, or a third of the room's heartbeat
  // timeout if that is shorter.
  unsigned keepalive_s() const;
  // Whether the open stream alone still counts as the visitor's heartbeat: for
  // --stream-heartbeat-limit after it opened, or after the client last spoke on it.
  bool heartbeat_allowed() const;
  void client_spoke();

  ServerContext& ctx_;
  const std::string room_;

 private:
  void arm_timer();

  ConnectionSlot slot_;
  net::steady_timer timer_;
  int64_t alive_since_ms_;  // engine clock: opened, or the client's last message
  SendQueue queue_;
  bool finishing_ = false;  // the last message is queued; close once it is written
  bool closed_ = false;
};

// What both Server-Sent Events streams share (a ticket's, sse_session.cc, and the
// dashboards', dashboard_session.cc): the socket, writing, closing, the response head, and
// reading only to notice the client leaving.
class SseStream : public StreamSession {
 protected:
  SseStream(beast::tcp_stream stream, ServerContext& ctx, ConnectionSlot slot, std::string room)
      : StreamSession(ctx, std::move(slot), std::move(room), stream.get_executor()),
        stream_(std::move(stream)) {}
  // 200 text/event-stream, and "retry: 2000" for EventSource.
  static std::shared_ptr<const std::string> head();
  void write(const std::string& message) override;
  void close_socket() override;
  // Reads (and drops) whatever the client sends, until it goes away: then closes.
  void wait_for_close();

  beast::tcp_stream stream_;

 private:
  std::shared_ptr<SseStream> self() {
    return std::static_pointer_cast<SseStream>(shared_from_this());
  }
  std::array<char, 256> sink_{};
};

}  // namespace anteroom
