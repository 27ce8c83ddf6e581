// The sharded engine's class, shared by sharded_engine.cc (the Engine interface) and
// replica_engine.cc (the replica side, replica.h). Only those two files include it.
//
// Each room has one owner at a time (the holder of its owner lock, see room.h) that alone
// admits, expires and journals those changes. Visitors (join, status, heartbeat, leave) never
// wait for that lock: they work on the room's line with atomics (see line.h), and a join or
// leave that needs owner work asks for it without waiting. Each shard keeps its rooms' next
// deadlines, so run_lane() passes only the rooms something is due in, and a bounded queue
// of push hints.
#pragma once

#include <concurrentqueue/concurrentqueue.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "engine/epoch.h"
#include "engine/replica.h"
#include "engine/room.h"
#include "engine/room_registry.h"
#include "engine/spend_ledger.h"

namespace anteroom::sharded {

struct Shard final : EventSink {
  Shard(size_t i, size_t limit, const std::function<void(size_t)>& hook)
      : index(i), max_events(limit), wake_hook(hook) {}

  // Any thread (rooms of one shard are worked on by different threads at once), so no
  // producer token: the hints of one shard are unordered, which hints may be.
  void emit(Event&& e) override {
    if (events.size_approx() >= max_events) {
      dropped.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    events.enqueue(std::move(e));
  }

  std::mutex rooms_mu;                       // guards rooms, the heap and rooms' `timed`
  std::vector<std::unique_ptr<Room>> rooms;  // every room of the shard

  // Which rooms run_lane passes: those woken since the last run (a write came: `woken`),
  // and those whose time came (`heap`, a min-heap of (due, room) by Room::run's answer). A
  // room has at most one valid heap entry, the one whose time equals its `timed`; an entry
  // left behind when the room's time moved is dropped when it comes up (lazily), and a time
  // that moved later keeps the earlier entry, which then runs a pass that finds nothing and
  // answers the later time.
  //
  // A room is in `woken` at most once: while its `scheduled` flag is set. Why no wake is
  // lost: the writer changes the room, then (after a full fence) reads the flag; run_lane
  // clears the flag, then (after a full fence) passes the room, so either the pass sees the
  // write or the writer sees the flag clear and wakes the room again.
  struct Timed {
    int64_t due;
    Room* room;
    bool operator>(const Timed& o) const { return due > o.due; }
  };
  std::vector<Timed> heap;          // std::push_heap with std::greater: the earliest on top
  std::atomic<uint64_t> passes{0};  // statistics: relaxed
  std::mutex wake_mu;               // guards woken and each room's `unlisted`
  std::vector<Room*> woken;
  std::vector<Room*> running;  // run_lane's (under rooms_mu): the rooms of this pass

  // After a write to `r` (any thread, pinned so that `r` is alive): runs it at the next pass.
  void wake(Room& r) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (r.scheduled.load(std::memory_order_relaxed) ||
        r.scheduled.exchange(true, std::memory_order_acq_rel)) {
      return;
    }
    {
      std::lock_guard lock(wake_mu);
      if (r.unlisted) return;
      woken.push_back(&r);
    }
    if (wake_hook) wake_hook(index);
  }
  // When the shard next has work (caller holds rooms_mu): a woken room now (INT64_MIN),
  // else the heap's earliest entry (perhaps one left behind: a pass that finds nothing).
  int64_t next_due() {
    {
      std::lock_guard lock(wake_mu);
      if (!woken.empty()) return INT64_MIN;
    }
    return heap.empty() ? kNoDeadline : heap.front().due;
  }
  // `r` is due at `due` (caller holds rooms_mu), from its last pass.
  void schedule(Room* r, int64_t due) {
    if (due >= r->timed) return;  // the entry it has comes first
    r->timed = due;
    heap.push_back({due, r});
    std::push_heap(heap.begin(), heap.end(), std::greater<>{});
  }
  // Moves into `out` the rooms woken or due at `now` (caller holds rooms_mu); each once.
  void take_due(int64_t now, std::vector<Room*>& out) {
    {
      std::lock_guard lock(wake_mu);
      out.swap(woken);
    }
    while (!heap.empty() && heap.front().due <= now) {
      const Timed t = heap.front();
      std::pop_heap(heap.begin(), heap.end(), std::greater<>{});
      heap.pop_back();
      if (t.due != t.room->timed) continue;  // left behind
      t.room->timed = kNoDeadline;
      if (!t.room->scheduled.load(std::memory_order_relaxed)) out.push_back(t.room);
    }
  }
  // `r` joins the shard (caller holds rooms_mu): passed at the next run.
  void list(Room* r) {
    r->scheduled.store(true, std::memory_order_relaxed);
    {
      std::lock_guard lock(wake_mu);
      woken.push_back(r);
    }
    if (wake_hook) wake_hook(index);
  }
  // `r` leaves the shard (caller holds rooms_mu): no pass or wake will reach it.
  void unlist(Room* r) {
    std::erase_if(heap, [r](const Timed& t) { return t.room == r; });
    std::make_heap(heap.begin(), heap.end(), std::greater<>{});
    std::lock_guard lock(wake_mu);
    r->unlisted = true;
    std::erase(woken, r);
  }
  const size_t index;  // the shard's lane (Engine::lanes)
  const size_t max_events;
  const std::function<void(size_t)>& wake_hook;  // the engine's (Engine::set_wake_hook)
  moodycamel::ConcurrentQueue<Event> events;
  std::atomic<uint64_t> dropped{0};  // statistics: relaxed
};

class ShardedEngine final : public ReplicaEngine {
 public:
  // `replica`: rooms change only through apply() (replica.h).
  ShardedEngine(EngineOptions o, bool replica);
  // Deleted rooms and given-back segments wait in the epoch's list; free them with us.
  ~ShardedEngine() override;

  Status put_room(std::string_view name, const RoomConfig& config) override;
  Status restore_room(std::string_view name, const RoomConfig& config,
                      const std::vector<RestoredTicket>& tickets) override;
  Result<std::vector<RestoredTicket>> export_tickets(std::string_view name) const override;
  Result<DrawInfo> draw(std::string_view name) const override;
  Result<JoinRules> join_rules(std::string_view name) const override;
  Status restore_draw(std::string_view name, const DrawInfo& draw) override;
  LaneSchedule::Turn lanes_turn(std::string_view name) const override;
  Status restore_lanes_turn(std::string_view name, const LaneSchedule::Turn& turn) override;
  Result<RoomInfo> room_info(std::string_view name) const override;
  std::vector<RoomInfo> rooms() const override;
  Status delete_room(std::string_view name) override;
  Result<uint64_t> admit(std::string_view name, uint64_t count) override;
  Result<uint64_t> clear(std::string_view name) override;
  using Engine::join;
  Result<JoinResult> join(std::string_view name, const JoinRequest& request) override;
  Result<TicketView> status(std::string_view name, std::string_view ticket) override;
  Result<TicketView> peek(std::string_view name, std::string_view ticket) const override;
  Result<TicketDetail> describe(std::string_view name, std::string_view ticket) const override;
  Status heartbeat(std::string_view name, std::string_view ticket) override;
  Result<TicketView> leave(std::string_view name, std::string_view ticket) override;
  Result<TicketDetail> activate(std::string_view name, std::string_view ticket) override;
  size_t lanes() const override { return shards_.size(); }
  void run_lane(size_t lane) override;
  int64_t lane_due_ms(size_t lane) const override;
  void set_wake_hook(std::function<void(size_t)> wake) override { wake_hook_ = std::move(wake); }
  uint64_t config_version() const override {
    return config_version_.load(std::memory_order_acquire);
  }
  void spend(std::string_view key, uint32_t limit, int64_t ttl_ms,
             std::function<void(bool)> then) override {
    then(spent_.spend(key, limit, ttl_ms, clock_->now_ms()));
  }
  uint64_t room_set_version() const override {
    return room_set_version_.load(std::memory_order_acquire);
  }
  size_t poll_events(std::vector<Event>& out, size_t max) override;
  EngineStats stats() const override;
  const Clock& clock() const override { return *clock_; }

  // replica.h
  Applied apply(std::string_view room, int64_t at_ms, const Op& op) override;
  Decision decide(std::string_view room, int64_t now_ms) override;
  Result<RoomImage> image(std::string_view room) const override;
  Status load_image(std::string_view room, const RoomImage& image) override;
  void forget(std::string_view room) override;
  void publish(std::string_view room) override;

 private:
  static Status bad_room_name();
  static Status no_room(std::string_view name);
  static Status replica_refuses();
  Status too_many_rooms() const;
  std::unique_ptr<Room> make_room(std::string_view name, const RoomConfig& config,
                                  std::optional<int64_t> epoch_ms = std::nullopt);
  // Caller holds admin_ and checked the room limit.
  Status add_room(std::unique_ptr<Room> room);
  // Caller holds admin_: unlists `r` and frees it once no reader is inside.
  void remove_room(Room* r);
  Status create_room(std::string_view name, const RoomConfig& config,
                     std::optional<int64_t> epoch_ms);
  Status drop_room(std::string_view name);
  unsigned shard_of(std::string_view name) const;

  // f(room) for the room named `name`, or room_not_found.
  template <typename T>
  struct AsResult {
    using type = Result<T>;
  };
  template <typename T>
  struct AsResult<Result<T>> {
    using type = Result<T>;
  };
  template <typename F>
  auto in_room(std::string_view name, F&& f) const ->
      typename AsResult<decltype(f(std::declval<Room&>()))>::type {
    epoch::Guard pinned;  // the room, and its memory, stay while we are inside
    Room* r = registry_.find(name);
    if (r == nullptr) return no_room(name);
    return f(*r);
  }
  // in_room for a write: the room is woken after it (Shard::wake).
  template <typename F>
  auto writing_room(std::string_view name, F&& f) ->
      typename AsResult<decltype(f(std::declval<Room&>()))>::type {
    epoch::Guard pinned;
    Room* r = registry_.find(name);
    if (r == nullptr) return no_room(name);
    auto out = f(*r);
    shards_[r->shard()]->wake(*r);
    return out;
  }

  const EngineOptions options_;
  const std::shared_ptr<const Clock> clock_;
  const IdCodec codec_;
  EngineTotals totals_;
  const RoomEnv env_;
  std::mutex admin_;  // serialises room creation and deletion (the registry's one writer)
  RoomRegistry registry_;
  std::function<void(size_t)> wake_hook_;  // before shards_, which refer to it
  std::vector<std::unique_ptr<Shard>> shards_;
  std::atomic<uint64_t> room_set_version_{1};  // moved by add_room and remove_room
  std::atomic<uint64_t> config_version_{1};    // and by a room's configuration put
  SpendLedger spent_;
  std::atomic<int64_t> last_reclaim_ms_{0};  // a lone timestamp: relaxed
};

}  // namespace anteroom::sharded
