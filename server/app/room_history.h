// The last 15 minutes of every room, a sample a second, for the operator's dashboard: the
// server keeps it itself, so a dashboard opened in the middle of a
// sale draws the quarter hour before it at once.
//
// Each sample holds the room's waiting and active counts at that second and what happened
// since the sample before (joins, admissions, expiries by reason), from the room's running
// totals. A ring per room: 900 samples of 40 bytes, about 35 KiB a room, for the first
// kMaxRooms rooms seen (a room made once that many are kept has no history; a deleted room's
// place is taken by the next one seen).
//
// Thread safety: every method from any thread (one mutex; record() runs once a second).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/model.h"

namespace anteroom {

struct HistorySample {
  int64_t unix_ms = 0;  // when it was taken
  uint32_t waiting = 0;
  uint32_t active = 0;
  // Since the sample before (over `span_ms`).
  uint32_t span_ms = 0;
  uint32_t joins = 0;
  uint32_t admissions = 0;
  std::array<uint32_t, 3> expiries{};  // allowed_unused, session_idle, abandoned

  // Per second over the span (0 for the first sample of a room).
  double per_second(uint32_t count) const { return span_ms == 0 ? 0.0 : count * 1000.0 / span_ms; }
};

class RoomHistory {
 public:
  static constexpr size_t kSamples = 900;  // 15 minutes, one a second
  static constexpr size_t kMaxRooms = 1000;

  // Takes a sample of every room at `unix_ms` (the caller calls about once a second). Rooms
  // no longer listed are forgotten; a room whose totals went down (deleted and made again)
  // starts over.
  void record(int64_t unix_ms, const std::vector<RoomInfo>& rooms);
  // The room's samples, oldest first; empty if none.
  std::vector<HistorySample> samples(std::string_view room) const;
  // The room's newest sample, if it has one.
  bool latest(std::string_view room, HistorySample* out) const;
  size_t rooms() const;
  // The rooms it keeps, in no order.
  std::vector<std::string> names() const;

 private:
  struct Ring {
    std::array<HistorySample, kSamples> samples{};
    size_t next = 0;   // where the next sample goes
    size_t count = 0;  // samples held, up to kSamples
    RoomCounters last;
    int64_t last_ms = 0;
    uint64_t generation = 0;  // of the record() that last saw the room
  };
  static HistorySample sample_of(const Ring& ring, const RoomCounters& c, int64_t unix_ms);

  mutable std::mutex mu_;
  std::unordered_map<std::string, Ring> rings_;
  uint64_t generation_ = 0;
};

}  // namespace anteroom
