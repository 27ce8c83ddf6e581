// What visitors and operators ask of the rooms: reads, and writes answered when they are
// done. It is all the server's routes see of an engine (server/app/api.h), so a route cannot
// block an I/O thread on a write: there is no blocking write here. engine.h's Engine is this
// plus what the process that embeds it needs (blocking writes, recovery, lanes, pushes).
//
// Thread safety: every method may be called from any thread at any time.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "engine/clock.h"
#include "engine/model.h"
#include "engine/status.h"

namespace anteroom {

class ClusterView;
class ClusterControl;

class RoomService {
 public:
  virtual ~RoomService() = default;

  // Reads.
  virtual Result<RoomInfo> room_info(std::string_view room) const = 0;
  virtual std::vector<RoomInfo> rooms() const = 0;
  // Status, counting as a heartbeat.
  virtual Result<TicketView> status(std::string_view room, std::string_view ticket) = 0;
  // Status without a heartbeat (for pushes the visitor did not ask for).
  virtual Result<TicketView> peek(std::string_view room, std::string_view ticket) const = 0;
  // Marks the ticket seen. Never waits: a cluster node batches what it saw.
  virtual Status heartbeat(std::string_view room, std::string_view ticket) = 0;
  // peek() plus the ticket's user (for signing tokens). No heartbeat.
  virtual Result<TicketDetail> describe(std::string_view room, std::string_view ticket) const = 0;
  // What the server checks before a join (model.h's JoinRules), read without copying the
  // room's configuration: a join's hot path.
  virtual Result<JoinRules> join_rules(std::string_view room) const {
    auto info = room_info(room);
    if (!info.is_ok()) return info.status();
    const RoomConfig& c = info->config;
    const RoomCounters& n = info->counters;
    const bool admits = c.mode == RoomMode::kPassthrough ||
                        (c.admission == AdmissionMode::kAuto && c.mode != RoomMode::kQueueAll &&
                         c.mode != RoomMode::kReject && (c.capacity == 0 || n.active < c.capacity));
    const bool prequeue = c.event.exists() && c.event.phase == RoomEvent::Phase::kPrequeue;
    return JoinRules{c.ip_joins_per_minute, c.pow_difficulty, c.trust_user,
                     admits && n.waiting == 0 && !prequeue, c.session_ttl_seconds};
  }
  // The room's last draw (model.h's DrawInfo), once one happened; kWrongState before.
  // Engines without events say kInvalidArgument.
  virtual Result<DrawInfo> draw(std::string_view room) const {
    (void)room;
    return Status(Code::kInvalidArgument, "this engine has no events");
  }
  // The clock every timer of the engine reads; whoever embeds the engine uses it too.
  virtual const Clock& clock() const = 0;
  // Whether the engine can still take writes; an engine that stores nothing always can.
  virtual Status health() const { return Status::ok(); }
  // A cluster node's view of its cluster (cluster_view.h); null for a lone engine.
  virtual const ClusterView* cluster_view() const { return nullptr; }
  virtual ClusterControl* cluster_control() { return nullptr; }
  // Moves whenever a room is made, changed or removed, here or (a cluster node) anywhere:
  // what the server keeps of the rooms' configurations is good while it stays.
  virtual uint64_t config_version() const = 0;
  // One use of the one-time thing `key` (spend_ledger.h): `then` (any thread, perhaps at
  // once) gets true if it is within `limit` uses in the `ttl_ms` since its first. Counted
  // by this engine, or by a cluster node once for the whole cluster.
  virtual void spend(std::string_view key, uint32_t limit, int64_t ttl_ms,
                     std::function<void(bool)> then) = 0;

  // Writes, answered when done: `then` runs exactly once, on any thread, perhaps before the
  // call returns. An engine whose writes take a round trip (a cluster node waits for its
  // record to come back from Redis) answers later without holding the caller's thread; the
  // others answer at once, a join only once it is durable.
  template <typename T>
  using Then = std::function<void(Result<T>)>;
  // A join naming a user who holds a live ticket returns that ticket (created false) and
  // changes nothing; whether to hand it out is the caller's decision.
  virtual void join_async(std::string_view room, const JoinRequest& request,
                          Then<JoinResult> then) = 0;
  // Leaving an ended ticket is not an error: it returns the ticket as it is.
  virtual void leave_async(std::string_view room, std::string_view ticket,
                           Then<TicketView> then) = 0;
  // Protected-service side: ALLOWED -> ACTIVE on first use; ACTIVE refreshes its session.
  // kWrongState for a ticket that is WAITING or has ended.
  virtual void activate_async(std::string_view room, std::string_view ticket,
                              Then<TicketDetail> then) = 0;
  // Operator side. Admits up to `count` of the next WAITING tickets (within capacity),
  // answering how many; clear makes every WAITING ticket LEFT (reason cleared).
  virtual void admit_async(std::string_view room, uint64_t count, Then<uint64_t> then) = 0;
  virtual void clear_async(std::string_view room, Then<uint64_t> then) = 0;
  virtual void put_room_async(std::string_view room, const RoomConfig& config,
                              std::function<void(Status)> then) = 0;
  virtual void delete_room_async(std::string_view room, std::function<void(Status)> then) = 0;
  // Compacts what the engine stores (a snapshot replacing its log); an engine that stores
  // nothing answers kUnavailable.
  struct SnapshotInfo {
    uint64_t bytes_before = 0, bytes_after = 0, tickets = 0;
  };
  virtual void snapshot_async(Then<SnapshotInfo> then) = 0;

  // A ticket this copy of the room may not have seen yet (a cluster node behind the node
  // that answered the ticket's join): returns true and calls `done` (any thread) once this
  // copy has caught up with the room as it stands now, or gave up; then look again. Returns
  // false, never calling `done`, when there is nothing to wait for.
  virtual bool when_caught_up(std::string_view room, std::string_view ticket,
                              std::function<void()> done);
};

}  // namespace anteroom
