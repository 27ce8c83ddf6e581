// A replica engine: rooms that change only by records, applied in one order on every copy.
// A cluster (cluster/) keeps one replica per node and feeds it every room's Redis Stream;
// because applying is deterministic (times come from the records, never from a clock), two
// replicas that applied the same records hold the same rooms: the same seq, position and
// counts for every ticket (docs/cluster.md).
//
// What follows from the records alone is decided while applying, the same everywhere: a join
// into a free slot of an auto room is admitted, a leave hands its slot on, an operator's admit
// takes the next in line. What depends on time (expiries, admission held back by
// admit_per_second) is never decided while applying: one node, the room's decider, asks
// decide() and proposes what it returns as records; applying them re-checks each one (the
// ticket's state, its deadline by the record's time, the room's capacity), so a stale or
// repeated decision changes nothing.
//
// Thread safety: reads (the Engine interface's status, peek, describe, room_info, rooms) from
// any thread at any time, lock-free as in the sharded engine. apply(), decide(), image() and
// load_image() of one room from one thread at a time (the cluster's applier); the Engine
// interface's own writes (join, leave, admit, ...) are refused with kUnavailable.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "engine/engine.h"
#include "engine/lane_schedule.h"
#include "engine/ops.h"
#include "engine/ticket_id.h"

namespace anteroom {

// What applying one op did: `status` says why it changed nothing (room_not_found,
// room_full, wrong state); otherwise the field of its kind is set.
struct Applied {
  Status status = Status::ok();
  std::optional<JoinResult> join;      // Join
  std::optional<TicketDetail> ticket;  // Leave, Activate: the ticket afterwards
  uint64_t count = 0;                  // Admit, Clear: how many
};

// A room exactly as applying left it: what a cluster's snapshot stores. Unlike
// export_tickets (which recovery fills with "seen now"), every time is kept.
struct RoomImage {
  RoomConfig config;
  int64_t epoch_ms = 0;                 // the room's time origin (ticks count from it)
  uint64_t next_seq = 0;                // the seq the next join gets
  RoomCounters counters;                // the totals (waiting and active follow from the tickets)
  std::vector<RestoredTicket> tickets;  // live ones and the ended ones held, by seq, times set
  std::optional<DrawInfo> draw;         // the room's last draw, if any
  LaneSchedule::Turn lanes_turn;        // a room with lanes: the last turn taken
};

class ReplicaEngine : public Engine {
 public:
  // Applies `op` to `room` as of `at_ms`. A PutRoom creates the room (its time origin is
  // `at_ms`) or changes its configuration; every other op needs the room.
  virtual Applied apply(std::string_view room, int64_t at_ms, const Op& op) = 0;
  // The decisions due at `now_ms` that depend on time, as ops to propose: expiries, an
  // event's next phase, and admissions that admit_per_second allows; and when the room next
  // has one due if no record comes first (kNoDeadline: none; any applied record may make
  // one due at once). Empty, with no deadline, for a missing room.
  struct Decision {
    std::vector<Op> ops;
    int64_t next_ms = kNoDeadline;
  };
  virtual Decision decide(std::string_view room, int64_t now_ms) = 0;
  virtual Result<RoomImage> image(std::string_view room) const = 0;
  // Replaces `room` (or creates it) with `image`. Readers see the old room or the new one.
  virtual Status load_image(std::string_view room, const RoomImage& image) = 0;
  // Drops a room without a record (a node that lost track of it reloads it).
  virtual void forget(std::string_view room) = 0;
  // Push hints (poll_events) for what the ops applied to `room` so far changed: counts,
  // positions. Once per record, after its ops.
  virtual void publish(std::string_view room) = 0;
};

// `options.clock` is what reads and run_lane use (rates); every change takes its time from
// the op. `options.journal` is ignored: the records are the journal.
std::unique_ptr<ReplicaEngine> make_replica_engine(EngineOptions options);

}  // namespace anteroom
