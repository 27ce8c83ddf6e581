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

#include "engine/model.h"
#include "server/app/room_history.h"

namespace anteroom {

class DashboardFeed {
 public:
  // Samples every room into its history and, if `build_frame` (a dashboard is open: with
  // thousands of rooms a frame is megabytes), builds the frame of `rooms` at `unix_ms`.
  void tick(int64_t unix_ms, const std::vector<RoomInfo>& rooms, bool build_frame = true);
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
  mutable std::mutex mu_;
  std::shared_ptr<const std::string> frame_;
};

// Seconds until the last in line is admitted at the room's observed pace: 0 with nobody
// waiting, nullopt while the pace is unknown or nothing is being admitted.
std::optional<double> last_in_line_eta(const RoomCounters& c);

}  // namespace anteroom
