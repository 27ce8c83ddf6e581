// The waiting-room engine as whoever embeds anteroom holds it. Its parts say one thing each:
// what visitors and operators ask (room_service.h, async writes only: all the server's routes
// see), recovery (room_restore.h), the optional cluster view (cluster_view.h), and below, what
// the embedding process runs. ShardedEngine (sharded_engine.h) is the real one, lock-free on
// its hot paths; storage/ wraps it to make it durable; tests/support/ has a one-mutex yardstick.
//
// Thread safety: every method may be called from any thread at any time.
//
// Two channels leave the engine. The journal (journal.h, EngineOptions::journal) is told
// every state change as it happens and never loses one: storage writes it to disk. Events
// (poll_events) are push hints for the server: "this ticket changed", "positions moved in
// this room"; they are coalesced, bounded and may be dropped, so whoever reads them re-reads
// the current state rather than trusting them.
//
// Hot paths (join, status, peek, heartbeat) never wait for a lock. A join into an auto room
// with a free slot is admitted before join() returns, by the joining thread, unless another
// thread is working on that room at that moment, in which case that thread admits it before
// it lets go. Leaves hand a freed slot on the same way. What depends on time (expiries,
// admissions held back by admit_per_second, an event's phases) happens when someone runs
// the engine's lanes (run_lane, or run_all for all of them); lane_due_ms() says when each
// is next needed, and each of the server's lane pumps sleeps until then. Operator calls (admit,
// clear, put/delete room) do their work before they return.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/clock.h"
#include "engine/journal.h"
#include "engine/latency_histogram.h"
#include "engine/model.h"
#include "engine/room_restore.h"
#include "engine/room_service.h"
#include "engine/status.h"

namespace anteroom {

struct EngineOptions {
  unsigned shards = 0;                 // rooms are spread over shards; 0 = hardware threads
  size_t max_rooms = 10'000;           // put_room beyond this is refused
  size_t max_queued_events = 1 << 20;  // push hints past this many unread are dropped, counted
  int64_t reclaim_interval_ms = 100;   // how often run_lane frees memory no reader sees
  std::shared_ptr<const Clock> clock;  // null = SteadyClock
  std::optional<std::array<uint64_t, 2>> id_key;  // secret for ticket ids; null = random
  // Told every change (journal.h); null = nobody. Not owned: it must outlive the engine.
  Journal* journal = nullptr;
  // Unix ms minus the clock's ms, for event times (Unix ms); null = measured at start.
  std::optional<int64_t> wall_minus_engine_ms;
  // The engine's secret, of which it derives the keys of events' draw seeds and of random
  // mode's picks (keys of their own, apart from the id key visitors see the workings of).
  // Give every node of a cluster the same (the server derives it from the token secret);
  // null: derived from id_key, which the log stores, so a reader of the log could then
  // compute a draw before its start.
  std::optional<std::array<uint8_t, 32>> secret;
};

struct EngineStats {
  uint64_t events_dropped = 0;  // push hints dropped past max_queued_events
  size_t bytes_allocated = 0;   // ticket storage of all rooms (not the allocator's overhead)
  // Since start, over every room (deleted ones too): counters that only grow.
  uint64_t admitted = 0;
  std::array<uint64_t, 6> expired{};  // indexed by EndReason
  // Rooms' passes run_lane made: a room is passed when something in it is due or a write
  // woke it, and costs nothing otherwise.
  uint64_t room_passes = 0;
  // An engine that stores: how long its log's syncs (fdatasync) took. None for the others.
  std::optional<LatencyHistogram> log_syncs;
};

// The engine as the process that embeds it holds it: what visitors and operators ask
// (room_service.h: the server's routes see only that), recovery (room_restore.h), and what
// only one process needs: blocking writes, the lanes that run time-driven work, the push
// hints, stats, durability. A cluster node adds its view of the cluster (cluster_view.h).
class Engine : public RoomService, public RoomRestore {
 public:
  // Blocking writes, for a caller that may wait (start-up, tools, tests, benchmarks): each
  // is the async write of room_service.h answered on the caller's thread. A cluster node's
  // wait for Redis while blocking; the server's routes use the async forms.
  virtual Status put_room(std::string_view room, const RoomConfig& config) = 0;
  virtual Status delete_room(std::string_view room) = 0;
  virtual Result<uint64_t> admit(std::string_view room, uint64_t count) = 0;
  virtual Result<uint64_t> clear(std::string_view room) = 0;
  virtual Result<JoinResult> join(std::string_view room, const JoinRequest& request) = 0;
  Result<JoinResult> join(std::string_view room, std::string_view user) {
    return join(room, JoinRequest{user, std::nullopt});
  }
  virtual Result<TicketView> leave(std::string_view room, std::string_view ticket) = 0;
  virtual Result<TicketDetail> activate(std::string_view room, std::string_view ticket) = 0;
  virtual Result<SnapshotInfo> snapshot() {
    return Status(Code::kUnavailable, "persistence is off");
  }

  // The async writes of room_service.h, by default the blocking ones answered at once (a
  // join once its record is durable: when_durable). An engine whose writes take a round
  // trip overrides them; a decorator forwards them as themselves (forwarding_engine.h).
  void join_async(std::string_view room, const JoinRequest& request,
                  Then<JoinResult> then) override;
  void leave_async(std::string_view room, std::string_view ticket, Then<TicketView> then) override;
  void activate_async(std::string_view room, std::string_view ticket,
                      Then<TicketDetail> then) override;
  void admit_async(std::string_view room, uint64_t count, Then<uint64_t> then) override;
  void clear_async(std::string_view room, Then<uint64_t> then) override;
  void put_room_async(std::string_view room, const RoomConfig& config,
                      std::function<void(Status)> then) override;
  void delete_room_async(std::string_view room, std::function<void(Status)> then) override;
  void snapshot_async(Then<SnapshotInfo> then) override;

  // Owner work that is due now: admission, expiry, events' phases, in every room something
  // is due in or a write woke. It comes in lanes() lanes (the sharded engine's shards), each
  // with rooms of its own: different lanes may run at once on different threads, one lane on
  // one thread at a time. run_lane(lane) does that lane's work.
  virtual size_t lanes() const { return 1; }
  virtual void run_lane(size_t lane) = 0;
  // When run_lane(lane) next has work, in the clock's ms: at or before now when it has work
  // now (as early as INT64_MIN: compare with now before subtracting), kNoDeadline (clock.h)
  // when none until a write wakes one of its rooms, which calls the wake hook with the lane.
  // An engine that cannot tell says 0 (always due: its lanes must keep running on a tick).
  virtual int64_t lane_due_ms(size_t lane) const {
    (void)lane;
    return 0;
  }
  // `wake(lane)` (any thread, cheap, must not call back into the engine) is called when a
  // write gives an idle lane work. Set once, before the engine is shared between threads.
  virtual void set_wake_hook(std::function<void(size_t lane)> wake) { wake = nullptr; }
  // For a caller with one thread: every lane in turn, and the earliest of their deadlines.
  void run_all() {
    for (size_t lane = 0, n = lanes(); lane < n; ++lane) run_lane(lane);
  }
  int64_t next_due_ms() const {
    int64_t due = kNoDeadline;
    for (size_t lane = 0, n = lanes(); lane < n; ++lane) due = std::min(due, lane_due_ms(lane));
    return due;
  }
  bool idle() const { return next_due_ms() == kNoDeadline; }
  // A number that moves whenever a room is made or deleted, so that a reader of rooms() can
  // tell it has the whole list already. 0: this engine cannot tell (read rooms() again).
  virtual uint64_t room_set_version() const { return 0; }

  // Moves up to `max` pending push hints into `out`; returns how many. Hints of different
  // rooms, and of one room changed by different threads, may come in any order.
  virtual size_t poll_events(std::vector<Event>& out, size_t max) = 0;
  virtual EngineStats stats() const = 0;
  // Calls `done` once what a join reported in JoinResult::durable_at is stored (with an
  // error if it cannot be). Never blocks; `done` may run on another thread, or at once.
  virtual void when_durable(uint64_t position, std::function<void(Status)> done) {
    static_cast<void>(position);
    auto call = std::move(done);  // nothing is stored: done at once
    call(Status::ok());
  }

 protected:
  // Answers a join once this engine's when_durable says its record is stored: at once for a
  // failed join or one with nothing to store; kStorageFailed if storing it failed.
  void answer_when_durable(Result<JoinResult> r, Then<JoinResult> then);
};

std::unique_ptr<Engine> make_sharded_engine(EngineOptions options = {});

}  // namespace anteroom
