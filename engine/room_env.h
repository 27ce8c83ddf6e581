// What a room of the sharded engine needs from its engine (room.h): its environment, where
// its push hints go, the engine's totals, and the owner's counters.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "engine/clock.h"
#include "engine/journal.h"
#include "engine/model.h"
#include "engine/ticket_id.h"

namespace anteroom {

// Counters only a room's owner writes (room_owner.cc, room_admission.cc): a relaxed load and
// store, no read-modify-write needed.
namespace owner_counter {
inline void owner_add(std::atomic<uint64_t>& counter, uint64_t delta) {
  counter.store(counter.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
}
inline void owner_sub(std::atomic<uint64_t>& counter, uint64_t delta) {
  counter.store(counter.load(std::memory_order_relaxed) - delta, std::memory_order_relaxed);
}
}  // namespace owner_counter

// Where push hints go (the room's shard). Any thread.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void emit(Event&& e) = 0;
};

// Counters of the whole engine that only grow. Relaxed: independent numbers.
struct EngineTotals {
  std::atomic<uint64_t> admitted{0};
  std::atomic<uint64_t> expired[6] = {};  // indexed by EndReason
};

// What a room needs from its engine. Outlives every room.
struct RoomEnv {
  const IdCodec& codec;
  const Clock& clock;
  Journal* journal;  // may be null
  int64_t epoch_ms;  // the engine's clock at start: a room's default time origin
  EngineTotals& totals;
  // A replica's rooms (replica.h): every change comes from apply_*, timed by the record, and
  // nothing is decided by the clock (no expiry, no rate-capped admission) except by decide().
  bool replica = false;
  // Event times are Unix ms; the engine's clock plus this is Unix ms.
  int64_t wall_minus_engine_ms = 0;
  // Derived from EngineOptions::secret: the key of events' draw seeds, and random mode's.
  std::array<uint8_t, 32> draw_key{};
  std::array<uint8_t, 32> pick_key{};
};

}  // namespace anteroom
