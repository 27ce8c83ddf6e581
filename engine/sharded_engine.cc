#include "engine/sharded_engine.h"

#include <concurrentqueue/concurrentqueue.h>

#include <algorithm>
#include <functional>
#include <mutex>
#include <thread>

#include "engine/room.h"
#include "engine/room_registry.h"

namespace anteroom {
namespace {

// What visitors tell the owner. Commands commute, so FIFO per producer is enough.
struct Command {
  Room* room = nullptr;
  uint64_t seq = 0;  // a WAITING ticket that left: a hole at seq
};

struct Shard final : EventSink {
  explicit Shard(size_t limit) : max_events(limit), producer(events) {}

  void emit(Event&& e) override {
    if (events.size_approx() >= max_events) {
      dropped.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    events.enqueue(producer, std::move(e));
  }

  std::mutex owner;                          // whoever holds it owns this shard's rooms
  std::vector<std::unique_ptr<Room>> rooms;  // guarded by owner
  // Deleted rooms, kept until their grace time so visitors still inside them finish.
  std::vector<std::pair<int64_t, std::unique_ptr<Room>>> graveyard;  // guarded by owner
  moodycamel::ConcurrentQueue<Command> commands;
  const size_t max_events;
  moodycamel::ConcurrentQueue<Event> events;
  moodycamel::ProducerToken producer;  // used only under owner
  std::atomic<uint64_t> dropped{0};    // statistics: relaxed
};

class ShardedEngine final : public Engine {
 public:
  explicit ShardedEngine(EngineOptions o)
      : options_(std::move(o)),
        clock_(options_.clock ? options_.clock : std::make_shared<SteadyClock>()),
        codec_(options_.id_key ? IdCodec(*options_.id_key) : IdCodec()),
        epoch_ms_(clock_->now_ms()),
        registry_(options_.max_rooms) {
    unsigned n =
        options_.shards != 0 ? options_.shards : std::max(1u, std::thread::hardware_concurrency());
    for (unsigned i = 0; i < n; ++i) {
      shards_.push_back(std::make_unique<Shard>(options_.max_queued_events));
    }
  }

  Status put_room(std::string_view name, const RoomConfig& config) override {
    if (!valid_room_name(name)) return bad_room_name();
    if (Status st = config.validate(); !st.is_ok()) return st;
    std::lock_guard admin(admin_);
    Shard& shard = *shards_[shard_of(name)];
    std::lock_guard own(shard.owner);
    if (Room* r = registry_.find(name)) {
      r->set_config(config);
      r->run(shard, options_.sweep_interval_ms);
      return Status::ok();
    }
    auto room = std::make_unique<Room>(std::string(name), config, codec_, *clock_, epoch_ms_);
    room->set_shard(shard_of(name));
    if (!registry_.insert(room.get())) {
      return {Code::kUnavailable,
              "the engine holds its maximum of " + std::to_string(options_.max_rooms) + " rooms"};
    }
    shard.rooms.push_back(std::move(room));
    shard.rooms.back()->run(shard, options_.sweep_interval_ms);
    return Status::ok();
  }

  Status restore_room(std::string_view name, const RoomConfig& config,
                      const std::vector<RestoredTicket>& tickets) override {
    if (!valid_room_name(name)) return bad_room_name();
    if (Status st = config.validate(); !st.is_ok()) return st;
    std::lock_guard admin(admin_);
    if (registry_.find(name) != nullptr) {
      return {Code::kInvalidArgument, "room '" + std::string(name) + "' exists already"};
    }
    Shard& shard = *shards_[shard_of(name)];
    std::lock_guard own(shard.owner);
    auto room = std::make_unique<Room>(std::string(name), config, codec_, *clock_, epoch_ms_);
    room->set_shard(shard_of(name));
    if (Status st = room->restore(tickets); !st.is_ok()) return st;
    if (!registry_.insert(room.get())) {
      return {Code::kUnavailable,
              "the engine holds its maximum of " + std::to_string(options_.max_rooms) + " rooms"};
    }
    shard.rooms.push_back(std::move(room));
    return Status::ok();
  }

  Result<std::vector<RestoredTicket>> export_tickets(std::string_view name) const override {
    const Room* r = registry_.find(name);
    if (r == nullptr) return no_room(name);
    return r->export_live();
  }

  Result<RoomInfo> room_info(std::string_view name) const override {
    const Room* r = registry_.find(name);
    if (r == nullptr) return no_room(name);
    return RoomInfo{r->name(), r->config(), r->counters()};
  }

  std::vector<RoomInfo> rooms() const override {
    std::vector<RoomInfo> out;
    registry_.for_each([&](const Room* r) {
      out.push_back(RoomInfo{r->name(), r->config(), r->counters()});
    });
    std::sort(out.begin(), out.end(),
              [](const RoomInfo& a, const RoomInfo& b) { return a.name < b.name; });
    return out;
  }

  Status delete_room(std::string_view name) override {
    std::lock_guard admin(admin_);
    Room* r = registry_.find(name);
    if (r == nullptr) return no_room(name);
    Shard& shard = *shards_[r->shard()];
    std::lock_guard own(shard.owner);
    drain_commands(shard);  // none may point at the room once it is gone
    registry_.erase(r);
    auto it = std::find_if(shard.rooms.begin(), shard.rooms.end(),
                           [&](const auto& p) { return p.get() == r; });
    shard.graveyard.emplace_back(clock_->now_ms() + options_.retire_grace_ms, std::move(*it));
    shard.rooms.erase(it);
    return Status::ok();
  }

  Result<uint64_t> admit(std::string_view name, uint64_t count) override {
    return with_owner(name, [&](Room& r, Shard& s) { return r.admit(count, s); });
  }

  Result<uint64_t> clear(std::string_view name) override {
    return with_owner(name, [&](Room& r, Shard& s) { return r.clear(s); });
  }

  Result<JoinResult> join(std::string_view name, std::string_view user) override {
    if (!user.empty() && !valid_user(user)) {
      return Status(Code::kInvalidArgument, "user must be 1-128 bytes with no control characters");
    }
    Room* r = registry_.find(name);
    if (r == nullptr) return no_room(name);
    return r->join(user);
  }

  Result<TicketView> status(std::string_view name, std::string_view ticket) override {
    Room* r = registry_.find(name);
    if (r == nullptr) return no_room(name);
    return r->status(ticket, true);
  }

  Result<TicketView> peek(std::string_view name, std::string_view ticket) const override {
    Room* r = registry_.find(name);
    if (r == nullptr) return no_room(name);
    return r->status(ticket, false);
  }

  Result<TicketDetail> describe(std::string_view name, std::string_view ticket) const override {
    const Room* r = registry_.find(name);
    if (r == nullptr) return no_room(name);
    return r->describe(ticket);
  }

  Status heartbeat(std::string_view name, std::string_view ticket) override {
    return status(name, ticket).status();
  }

  Result<TicketView> leave(std::string_view name, std::string_view ticket) override {
    Room* r = registry_.find(name);
    if (r == nullptr) return no_room(name);
    Result<LeaveOutcome> out = r->leave(ticket);
    if (!out.is_ok()) return out.status();
    Shard& shard = *shards_[r->shard()];
    if (out->kind == LeaveOutcome::Kind::kHole) {
      shard.commands.enqueue(Command{r, out->seq});
    } else if (out->kind == LeaveOutcome::Kind::kSlotFreed) {
      // The freed slot goes to the next in line before this call returns.
      std::lock_guard own(shard.owner);
      drain_commands(shard);
      r->on_slot_freed();
      r->run(shard, options_.sweep_interval_ms);
      return r->status(ticket, false);
    }
    return out->view;
  }

  Result<TicketDetail> activate(std::string_view name, std::string_view ticket) override {
    Room* r = registry_.find(name);
    if (r == nullptr) return no_room(name);
    return r->activate(ticket);
  }

  unsigned shard_count() const override { return static_cast<unsigned>(shards_.size()); }

  unsigned shard_of(std::string_view name) const override {
    return static_cast<unsigned>(std::hash<std::string_view>{}(name) % shards_.size());
  }

  void run_shard(unsigned index) override {
    Shard& shard = *shards_.at(index);
    std::lock_guard own(shard.owner);
    drain_commands(shard);
    for (auto& room : shard.rooms) room->run(shard, options_.sweep_interval_ms);
    int64_t now = clock_->now_ms();
    std::erase_if(shard.graveyard, [&](const auto& g) { return g.first <= now; });
  }

  size_t poll_events(std::vector<Event>& out, size_t max) override {
    size_t got = 0;
    for (auto& shard : shards_) {
      while (got < max) {
        Event e;
        if (!shard->events.try_dequeue_from_producer(shard->producer, e)) break;
        out.push_back(std::move(e));
        ++got;
      }
    }
    return got;
  }

  EngineStats stats() const override {
    EngineStats s;
    for (const auto& shard : shards_)
      s.events_dropped += shard->dropped.load(std::memory_order_relaxed);
    registry_.for_each([&](const Room* r) { s.bytes_allocated += r->bytes_allocated(); });
    return s;
  }

 private:
  static Status bad_room_name() {
    return {Code::kInvalidArgument, "room names are 1-64 characters of A-Z a-z 0-9 _ -"};
  }
  static Status no_room(std::string_view name) {
    return {Code::kRoomNotFound, "no room named '" + std::string(name) + "'"};
  }

  // Caller holds shard.owner.
  static void drain_commands(Shard& shard) {
    Command c;
    while (shard.commands.try_dequeue(c)) c.room->on_hole(c.seq);
  }

  template <typename F>
  Result<uint64_t> with_owner(std::string_view name, F&& f) {
    Room* r = registry_.find(name);
    if (r == nullptr) return no_room(name);
    Shard& shard = *shards_[r->shard()];
    std::lock_guard own(shard.owner);
    if (registry_.find(name) != r) return no_room(name);  // deleted meanwhile
    drain_commands(shard);
    return f(*r, shard);
  }

  const EngineOptions options_;
  const std::shared_ptr<const Clock> clock_;
  const IdCodec codec_;
  const int64_t epoch_ms_;
  std::mutex admin_;  // serialises room creation and deletion (the registry's one writer)
  RoomRegistry registry_;
  std::vector<std::unique_ptr<Shard>> shards_;
};

}  // namespace

std::unique_ptr<Engine> make_sharded_engine(EngineOptions options) {
  return std::make_unique<ShardedEngine>(std::move(options));
}

}  // namespace anteroom
