// Who is listening for what. SSE and WebSocket sessions register here; the engine pump
// hands over the engine's events, and the hub tells the affected streams, so the server
// never asks the engine once per client on a timer.
//
// - A ticket admitted or expired: its streams are told at once.
// - Positions moved or counts changed in a room: noted, and told to the room's streams at
//   the next flush() (the server calls it every --push-interval), so a stream hears at most
//   one position update per interval however fast the line moves. The room's VISITOR_COUNT
//   message is built once per flush and shared, immutable, by every WebSocket of the room.
//
// Thread safety: all methods from any thread. One mutex guards the tables; streams are
// called after it is released.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/engine.h"

namespace anteroom {

class Stream {
 public:
  virtual ~Stream() = default;
  // The watched ticket may have changed: re-read it and send what changed. Any thread.
  virtual void notify() = 0;
  // A message for every stream of the room that asked for room counts. Any thread.
  virtual void send_shared(std::shared_ptr<const std::string> message) = 0;
  // The server is stopping: tell the client to reconnect, then close. Any thread.
  virtual void shutdown() = 0;
};

class PushHub {
 public:
  void attach(const std::string& room, const std::shared_ptr<Stream>& s, bool wants_counts);
  // `s` (attached) now watches `ticket`; false, watching nothing, if `limit` other streams
  // watch it already.
  bool watch(const std::string& room, const std::string& ticket, const Stream* s,
             size_t limit = SIZE_MAX);
  void detach(const std::string& room, const Stream* s);

  void on_events(const std::vector<Event>& events);
  // Tells the streams of rooms whose positions or counts changed; counts are read from
  // `engine` now (hints may be stale or out of order).
  void flush(const Engine& engine);
  void shutdown_all();
  // Streams attached to `room` now.
  size_t streams_in(const std::string& room) const;
  // `message` to every stream of `room` that asked for counts (the dashboards' frame).
  void broadcast(const std::string& room, const std::shared_ptr<const std::string>& message);
  size_t size() const;
  // Streams watching this ticket now.
  size_t streams_for(const std::string& room, const std::string& ticket) const;

  // The VISITOR_COUNT message of seed 000 for these counts.
  static std::string visitor_count(uint64_t active, uint64_t waiting, uint32_t capacity);

 private:
  struct Entry {
    std::weak_ptr<Stream> stream;
    std::string ticket;
    bool counts = false;
  };
  struct RoomState {
    std::unordered_map<const Stream*, Entry> streams;
    std::unordered_multimap<std::string, const Stream*> by_ticket;
    bool moved = false;
    bool counts_dirty = false;
  };

  mutable std::mutex mu_;
  std::unordered_map<std::string, RoomState> rooms_;
};

}  // namespace anteroom
