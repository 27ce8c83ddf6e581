// What the operator's dashboard (GET /admin) is fed: once a second, every room live in one
// frame that every open dashboard stream shares (GET /v1/admin/stream), and a room's last
// 15 minutes on demand (GET /v1/admin/rooms/{room}/history). docs/dashboard.md.
//
// Thread safety: every method from any thread; tick() from one at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/engine.h"
#include "engine/model.h"
#include "server/app/room_history.h"

namespace anteroom {

class DashboardFeed {
 public:
  // Samples every room into its history and, if `build_frame` (a dashboard is open: with
  // thousands of rooms a frame is megabytes), builds the frame of `rooms` at `unix_ms`.
  void tick(int64_t unix_ms, const std::vector<RoomInfo>& rooms, bool build_frame = true);
  // tick() with the rooms read from `engine`: the whole list only when a frame is built or
  // the engine's room set moved since the last whole read (Engine::room_set_version); else
  // only the rooms the history keeps, so that 100,000 idle rooms cost 1,000 lookups a second.
  void sample(int64_t unix_ms, const Engine& engine, bool build_frame);
  // The newest frame as SSE bytes ("event: rooms\ndata: {...}\n\n"); null before the first
  // tick that built one.
  std::shared_ptr<const std::string> frame() const;
  // The room's samples as JSON columns; nullopt if the room has none.
  std::optional<std::string> history_json(std::string_view room) const;
  const RoomHistory& history() const { return history_; }

  // The frame's JSON for these rooms (without the SSE framing).
  static std::string frame_json(int64_t unix_ms, const std::vector<RoomInfo>& rooms,
                                const RoomHistory& history);

 private:
  RoomHistory history_;
  uint64_t room_set_version_ = 0;  // sample()'s (one caller at a time): of its last whole read
  mutable std::mutex mu_;
  std::shared_ptr<const std::string> frame_;
};

// Seconds until the last in line is admitted at the room's observed pace: 0 with nobody
// waiting, nullopt while the pace is unknown or nothing is being admitted.
std::optional<double> last_in_line_eta(const RoomCounters& c);

}  // namespace anteroom
