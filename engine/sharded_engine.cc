#include "engine/sharded_engine.h"

#include <concurrentqueue/concurrentqueue.h>

#include <algorithm>
#include <functional>
#include <mutex>
#include <thread>

#include "engine/epoch.h"
#include "engine/room.h"
#include "engine/room_registry.h"

namespace anteroom {
namespace {

struct Shard final : EventSink {
  explicit Shard(size_t limit) : max_events(limit) {}

  // Any thread (rooms of one shard are worked on by different threads at once), so no
  // producer token: the hints of one shard are unordered, which hints may be.
  void emit(Event&& e) override {
    if (events.size_approx() >= max_events) {
      dropped.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    events.enqueue(std::move(e));
  }

  std::mutex rooms_mu;                       // guards rooms
  std::vector<std::unique_ptr<Room>> rooms;  // run_shard's list
  const size_t max_events;
  moodycamel::ConcurrentQueue<Event> events;
  std::atomic<uint64_t> dropped{0};  // statistics: relaxed
};

class ShardedEngine final : public Engine {
 public:
  explicit ShardedEngine(EngineOptions o)
      : options_(std::move(o)),
        clock_(options_.clock ? options_.clock : std::make_shared<SteadyClock>()),
        codec_(options_.id_key ? IdCodec(*options_.id_key) : IdCodec()),
        env_{codec_, *clock_, options_.journal, clock_->now_ms(), totals_},
        registry_(options_.max_rooms) {
    unsigned n =
        options_.shards != 0 ? options_.shards : std::max(1u, std::thread::hardware_concurrency());
    for (unsigned i = 0; i < n; ++i) {
      shards_.push_back(std::make_unique<Shard>(options_.max_queued_events));
    }
  }
  // Deleted rooms and given-back segments wait in the epoch's list; free them with us.
  ~ShardedEngine() override { epoch::drain(); }

  Status put_room(std::string_view name, const RoomConfig& config) override {
    if (!valid_room_name(name)) return bad_room_name();
    if (Status st = config.validate(); !st.is_ok()) return st;
    epoch::Guard pinned;
    std::lock_guard admin(admin_);
    if (Room* r = registry_.find(name)) {
      r->set_config(config, true);
      return Status::ok();
    }
    if (registry_.size() >= options_.max_rooms) return too_many_rooms();
    Change c;
    c.kind = Change::Kind::kRoomPut;
    c.room = name;
    c.config = &config;
    c.at_ms = clock_->now_ms();
    if (options_.journal != nullptr) options_.journal->record(c);  // before any join can be
    return add_room(make_room(name, config));
  }

  Status restore_room(std::string_view name, const RoomConfig& config,
                      const std::vector<RestoredTicket>& tickets) override {
    if (!valid_room_name(name)) return bad_room_name();
    if (Status st = config.validate(); !st.is_ok()) return st;
    std::lock_guard admin(admin_);
    if (registry_.find(name) != nullptr) {
      return {Code::kInvalidArgument, "room '" + std::string(name) + "' exists already"};
    }
    if (registry_.size() >= options_.max_rooms) return too_many_rooms();
    auto room = make_room(name, config);
    if (Status st = room->restore(tickets); !st.is_ok()) return st;
    return add_room(std::move(room));
  }

  Result<std::vector<RestoredTicket>> export_tickets(std::string_view name) const override {
    return in_room(name, [&](Room& r) { return r.export_live(); });
  }

  Result<RoomInfo> room_info(std::string_view name) const override {
    return in_room(name, [&](Room& r) { return RoomInfo{r.name(), r.config(), r.counters()}; });
  }

  std::vector<RoomInfo> rooms() const override {
    epoch::Guard pinned;
    std::vector<RoomInfo> out;
    registry_.for_each([&](const Room* r) {
      out.push_back(RoomInfo{r->name(), r->config(), r->counters()});
    });
    std::sort(out.begin(), out.end(),
              [](const RoomInfo& a, const RoomInfo& b) { return a.name < b.name; });
    return out;
  }

  Status delete_room(std::string_view name) override {
    epoch::Guard pinned;
    std::lock_guard admin(admin_);
    Room* r = registry_.find(name);
    if (r == nullptr) return no_room(name);
    registry_.erase(r);
    if (options_.journal != nullptr) {
      Change c;
      c.kind = Change::Kind::kRoomDelete;
      c.room = name;
      c.at_ms = clock_->now_ms();
      options_.journal->record(c);
    }
    Shard& shard = *shards_[r->shard()];
    std::lock_guard rooms(shard.rooms_mu);
    auto it = std::find_if(shard.rooms.begin(), shard.rooms.end(),
                           [&](const auto& p) { return p.get() == r; });
    // Visitors may still be inside it: freed once the last of them has left (epoch.h).
    epoch::retire(it->release());
    shard.rooms.erase(it);
    return Status::ok();
  }

  Result<uint64_t> admit(std::string_view name, uint64_t count) override {
    return in_room(name, [&](Room& r) { return r.admit(count); });
  }

  Result<uint64_t> clear(std::string_view name) override {
    return in_room(name, [&](Room& r) { return r.clear(); });
  }

  using Engine::join;
  Result<JoinResult> join(std::string_view name, const JoinRequest& request) override {
    if (!request.user.empty() && !valid_user(request.user)) {
      return Status(Code::kInvalidArgument, kUserRule);
    }
    return in_room(name, [&](Room& r) { return r.join(request); });
  }

  Result<TicketView> status(std::string_view name, std::string_view ticket) override {
    return in_room(name, [&](Room& r) { return r.status(ticket, true); });
  }

  Result<TicketView> peek(std::string_view name, std::string_view ticket) const override {
    return in_room(name, [&](Room& r) { return r.status(ticket, false); });
  }

  Result<TicketDetail> describe(std::string_view name, std::string_view ticket) const override {
    return in_room(name, [&](Room& r) { return r.describe(ticket); });
  }

  Status heartbeat(std::string_view name, std::string_view ticket) override {
    return status(name, ticket).status();
  }

  Result<TicketView> leave(std::string_view name, std::string_view ticket) override {
    return in_room(name, [&](Room& r) { return r.leave(ticket); });
  }

  Result<TicketDetail> activate(std::string_view name, std::string_view ticket) override {
    return in_room(name, [&](Room& r) { return r.activate(ticket); });
  }

  unsigned shard_count() const override { return static_cast<unsigned>(shards_.size()); }

  unsigned shard_of(std::string_view name) const override {
    return static_cast<unsigned>(std::hash<std::string_view>{}(name) % shards_.size());
  }

  void run_shard(unsigned index) override {
    Shard& shard = *shards_.at(index);
    {
      epoch::Guard pinned;
      std::lock_guard rooms(shard.rooms_mu);
      for (auto& room : shard.rooms) room->run(options_.sweep_interval_ms);
    }
    // Memory given back (ended segments, deleted rooms) is freed once no reader can see it;
    // a reclaim costs membarrier calls, so at most one per reclaim_interval_ms unless a lot
    // is waiting.
    const int64_t now = clock_->now_ms();
    if (now - last_reclaim_ms_.load(std::memory_order_relaxed) >= options_.reclaim_interval_ms ||
        epoch::pending() >= 64) {
      last_reclaim_ms_.store(now, std::memory_order_relaxed);
      epoch::reclaim();
    }
  }

  size_t poll_events(std::vector<Event>& out, size_t max) override {
    size_t got = 0;
    for (auto& shard : shards_) {
      while (got < max) {
        Event e;
        if (!shard->events.try_dequeue(e)) break;
        out.push_back(std::move(e));
        ++got;
      }
    }
    return got;
  }

  EngineStats stats() const override {
    epoch::Guard pinned;
    EngineStats s;
    for (const auto& shard : shards_)
      s.events_dropped += shard->dropped.load(std::memory_order_relaxed);
    registry_.for_each([&](const Room* r) { s.bytes_allocated += r->bytes_allocated(); });
    s.admitted = totals_.admitted.load(std::memory_order_relaxed);
    for (size_t i = 0; i < s.expired.size(); ++i)
      s.expired[i] = totals_.expired[i].load(std::memory_order_relaxed);
    return s;
  }

  const Clock& clock() const override { return *clock_; }

 private:
  static Status bad_room_name() {
    return {Code::kInvalidArgument, "room names are 1-64 characters of A-Z a-z 0-9 _ -"};
  }
  static Status no_room(std::string_view name) {
    return {Code::kRoomNotFound, "no room named '" + std::string(name) + "'"};
  }
  Status too_many_rooms() const {
    return {Code::kUnavailable,
            "the engine holds its maximum of " + std::to_string(options_.max_rooms) + " rooms"};
  }

  std::unique_ptr<Room> make_room(std::string_view name, const RoomConfig& config) {
    const unsigned shard = shard_of(name);
    auto room = std::make_unique<Room>(std::string(name), config, env_, *shards_[shard]);
    room->set_shard(shard);
    return room;
  }

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

  // Caller holds admin_ and checked the room limit.
  Status add_room(std::unique_ptr<Room> room) {
    Shard& shard = *shards_[room->shard()];
    std::lock_guard rooms(shard.rooms_mu);
    registry_.insert(room.get());
    shard.rooms.push_back(std::move(room));
    return Status::ok();
  }

  const EngineOptions options_;
  const std::shared_ptr<const Clock> clock_;
  const IdCodec codec_;
  EngineTotals totals_;
  const RoomEnv env_;
  std::mutex admin_;  // serialises room creation and deletion (the registry's one writer)
  RoomRegistry registry_;
  std::vector<std::unique_ptr<Shard>> shards_;
  std::atomic<int64_t> last_reclaim_ms_{0};  // a lone timestamp: relaxed
};

}  // namespace

std::unique_ptr<Engine> make_sharded_engine(EngineOptions options) {
  return std::make_unique<ShardedEngine>(std::move(options));
}

}  // namespace anteroom
