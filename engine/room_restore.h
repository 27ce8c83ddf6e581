// Recovery's side of an engine: rooms rebuilt from what storage kept (a log, a snapshot),
// and the live tickets a snapshot stores. Only whoever recovers or compacts calls it
// (storage/), before the server takes visitors or beside them.
//
// Thread safety: every method may be called from any thread at any time.
#pragma once

#include <string_view>
#include <vector>

#include "engine/lane_schedule.h"
#include "engine/model.h"
#include "engine/status.h"

namespace anteroom {

class RoomRestore {
 public:
  virtual ~RoomRestore() = default;

  // Creates `room` holding exactly these tickets. The room must not exist yet. `tickets`
  // are in ascending seq order; a sequence number missing from it (a join that claimed its
  // place but was never recorded) becomes an ended ticket that admission passes. WAITING
  // and ACTIVE tickets count as seen now (the server was down: nobody could heartbeat). Ids
  // stay valid only if the engine has the same id_key as before.
  virtual Status restore_room(std::string_view room, const RoomConfig& config,
                              const std::vector<RestoredTicket>& tickets) = 0;
  // After restore_room: the draw the room kept, as RoomService::draw() told it. Engines
  // without events say kInvalidArgument.
  virtual Status restore_draw(std::string_view room, const DrawInfo& draw) {
    (void)room;
    (void)draw;
    return Status(Code::kInvalidArgument, "this engine has no events");
  }
  // A room with lanes (RoomConfig::lanes): the last turn its schedule took, and after
  // restore_room the same put back, so positions go on as they were. Engines without lanes
  // answer no turn and ignore one.
  virtual LaneSchedule::Turn lanes_turn(std::string_view room) const {
    (void)room;
    return {};
  }
  virtual Status restore_lanes_turn(std::string_view room, const LaneSchedule::Turn& turn) {
    (void)room;
    (void)turn;
    return Status::ok();
  }
  // The room's live tickets (WAITING, ALLOWED, ACTIVE) in seq order, as restore_room takes
  // them: what a snapshot stores. Ended tickets are left out (a snapshot forgets them).
  virtual Result<std::vector<RestoredTicket>> export_tickets(std::string_view room) const = 0;
};

}  // namespace anteroom
