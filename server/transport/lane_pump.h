// One lane of the engine's timed work (Engine::lanes: a shard of the sharded engine) on one
// io_context: it runs the lane (Engine::run_lane) when the lane's next deadline comes
// (Engine::lane_due_ms) or a write wakes it, hands the push hints it then finds to
// `on_events`, and sleeps otherwise. A pass a wake asks for waits until --owner-tick after
// the last one, so that a busy room's writes are served together.
//
// Thread safety: wake() from any thread, also after this is gone (the engine's wake hook may
// outlive the server: a cluster node's thread), as long as close() came first; start() once
// and close() once, from any thread; the passes run on the io_context.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "engine/engine.h"

namespace boost::asio {
class io_context;
}

namespace anteroom {

class LanePump {
 public:
  // `on_events` (on the io_context) is given the hints a pass found, at most 4,096 at a time.
  LanePump(boost::asio::io_context& ioc, Engine& engine, size_t lane, int owner_tick_ms,
           std::function<void(const std::vector<Event>&)> on_events);
  ~LanePump();
  LanePump(const LanePump&) = delete;
  LanePump& operator=(const LanePump&) = delete;

  void start();  // the first pass, on the io_context
  // What the engine's wake hook calls for this lane: ends the sleep early. Cheap when the
  // pump is awake already (one load).
  class Wake {
   public:
    virtual ~Wake() = default;
    virtual void ring() = 0;
  };
  std::shared_ptr<Wake> waker() const;
  void close();  // no wake reaches the io_context after this; no pass is scheduled again

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace anteroom
