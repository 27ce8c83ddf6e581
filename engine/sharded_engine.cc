// The sharded engine: the Engine interface (see sharded_engine_impl.h for the class).
#include "engine/sharded_engine.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <thread>

#include "engine/epoch.h"
#include "engine/fair_draw.h"
#include "engine/sharded_engine_impl.h"

namespace anteroom::sharded {
namespace {

// A key of its own for `label`, from the engine's secret (or, without one, from the id key:
// then a reader of the log could derive it too; a fresh engine without either: random).
std::array<uint8_t, 32> engine_key(const EngineOptions& o, const char* label) {
  static const Seed kRandom = random_seed();
  std::array<uint8_t, 32> secret = kRandom;
  if (o.secret) {
    secret = *o.secret;
  } else if (o.id_key) {
    std::memcpy(secret.data(), o.id_key->data(), sizeof *o.id_key);
  }
  return hmac_sha256(secret.data(), secret.size(), label);
}

}  // namespace

ShardedEngine::ShardedEngine(EngineOptions o, bool replica)
    : options_(std::move(o)),
      clock_(options_.clock ? options_.clock : std::make_shared<SteadyClock>()),
      codec_(options_.id_key ? IdCodec(*options_.id_key) : IdCodec()),
      env_{codec_,
           *clock_,
           replica ? nullptr : options_.journal,
           clock_->now_ms(),
           totals_,
           replica,
           options_.wall_minus_engine_ms.value_or(WallClock().now_ms() - clock_->now_ms()),
           engine_key(options_, "anteroom draw seeds"),
           engine_key(options_, "anteroom random picks")},
      registry_(options_.max_rooms) {
  unsigned n =
      options_.shards != 0 ? options_.shards : std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 0; i < n; ++i) {
    shards_.push_back(std::make_unique<Shard>(i, options_.max_queued_events, wake_hook_));
  }
}

ShardedEngine::~ShardedEngine() { epoch::drain(); }

Status ShardedEngine::bad_room_name() {
  return {Code::kInvalidArgument, "room names are 1-64 characters of A-Z a-z 0-9 _ -"};
}
Status ShardedEngine::no_room(std::string_view name) {
  return {Code::kRoomNotFound, "no room named '" + std::string(name) + "'"};
}
Status ShardedEngine::replica_refuses() {
  return {Code::kUnavailable, "a replica changes only by records (replica.h)"};
}
Status ShardedEngine::too_many_rooms() const {
  return {Code::kUnavailable,
          "the engine holds its maximum of " + std::to_string(options_.max_rooms) + " rooms"};
}

std::unique_ptr<Room> ShardedEngine::make_room(std::string_view name, const RoomConfig& config,
                                               std::optional<int64_t> epoch_ms) {
  const unsigned shard = shard_of(name);
  auto room = std::make_unique<Room>(std::string(name), config, env_, *shards_[shard], epoch_ms);
  room->set_shard(shard);
  return room;
}

Status ShardedEngine::add_room(std::unique_ptr<Room> room) {
  Shard& shard = *shards_[room->shard()];
  {
    std::lock_guard rooms(shard.rooms_mu);
    registry_.insert(room.get());
    shard.list(room.get());
    shard.rooms.push_back(std::move(room));
  }
  room_set_version_.fetch_add(1, std::memory_order_acq_rel);
  config_version_.fetch_add(1, std::memory_order_acq_rel);
  return Status::ok();
}

void ShardedEngine::remove_room(Room* r) {
  registry_.erase(r);
  Shard& shard = *shards_[r->shard()];
  std::lock_guard rooms(shard.rooms_mu);
  shard.unlist(r);
  auto it = std::find_if(shard.rooms.begin(), shard.rooms.end(),
                         [&](const auto& p) { return p.get() == r; });
  // Visitors may still be inside it: freed once the last of them has left (epoch.h).
  epoch::retire(it->release());
  shard.rooms.erase(it);
  room_set_version_.fetch_add(1, std::memory_order_acq_rel);
  config_version_.fetch_add(1, std::memory_order_acq_rel);
}

Status ShardedEngine::create_room(std::string_view name, const RoomConfig& config,
                                  std::optional<int64_t> epoch_ms) {
  if (!valid_room_name(name)) return bad_room_name();
  if (Status st = config.validate(); !st.is_ok()) return st;
  epoch::Guard pinned;
  std::lock_guard admin(admin_);
  if (Room* r = registry_.find(name)) {
    if (epoch_ms) {
      r->apply_config(*epoch_ms, config);
    } else {
      r->set_config(config, true);
    }
    config_version_.fetch_add(1, std::memory_order_acq_rel);
    shards_[r->shard()]->wake(*r);
    return Status::ok();
  }
  if (registry_.size() >= options_.max_rooms) return too_many_rooms();
  // A new room is the defaults with what the put sets: the journal is told it whole.
  const RoomConfig whole = RoomConfig{}.with_parts_of(config);
  if (env_.journal != nullptr) {  // before any join can be
    Change c;
    c.kind = Change::Kind::kRoomPut;
    c.room = name;
    c.config = &whole;
    c.at_ms = clock_->now_ms();
    env_.journal->record(c);
  }
  return add_room(make_room(name, config, epoch_ms));
}

Status ShardedEngine::drop_room(std::string_view name) {
  epoch::Guard pinned;
  std::lock_guard admin(admin_);
  Room* r = registry_.find(name);
  if (r == nullptr) return no_room(name);
  if (env_.journal != nullptr) {
    Change c;
    c.kind = Change::Kind::kRoomDelete;
    c.room = name;
    c.at_ms = clock_->now_ms();
    env_.journal->record(c);
  }
  remove_room(r);
  return Status::ok();
}

Status ShardedEngine::put_room(std::string_view name, const RoomConfig& config) {
  if (env_.replica) return replica_refuses();
  return create_room(name, config, std::nullopt);
}

Status ShardedEngine::delete_room(std::string_view name) {
  if (env_.replica) return replica_refuses();
  return drop_room(name);
}

Status ShardedEngine::restore_room(std::string_view name, const RoomConfig& config,
                                   const std::vector<RestoredTicket>& tickets) {
  if (env_.replica) return replica_refuses();
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

Result<JoinRules> ShardedEngine::join_rules(std::string_view name) const {
  return in_room(name, [&](Room& r) { return r.join_rules(); });
}

Result<DrawInfo> ShardedEngine::draw(std::string_view name) const {
  return in_room(name, [&](Room& r) -> Result<DrawInfo> {
    auto d = r.draw_info();
    if (!d) return Status(Code::kWrongState, "the room has not drawn yet");
    return std::move(*d);
  });
}

LaneSchedule::Turn ShardedEngine::lanes_turn(std::string_view name) const {
  auto turn = in_room(name, [](Room& r) { return r.lanes_turn(); });
  return turn.is_ok() ? turn.value() : LaneSchedule::Turn{};
}

Status ShardedEngine::restore_lanes_turn(std::string_view name, const LaneSchedule::Turn& turn) {
  epoch::Guard pinned;
  Room* r = registry_.find(name);
  if (r == nullptr) return no_room(name);
  r->restore_lanes_turn(turn);
  return Status::ok();
}

Status ShardedEngine::restore_draw(std::string_view name, const DrawInfo& draw) {
  if (env_.replica) return replica_refuses();
  epoch::Guard pinned;
  Room* r = registry_.find(name);
  if (r == nullptr) return no_room(name);
  r->restore_draw(draw);
  shards_[r->shard()]->wake(*r);
  return Status::ok();
}

Result<std::vector<RestoredTicket>> ShardedEngine::export_tickets(std::string_view name) const {
  return in_room(name, [&](Room& r) { return r.export_live(); });
}

Result<RoomInfo> ShardedEngine::room_info(std::string_view name) const {
  return in_room(name, [&](Room& r) { return RoomInfo{r.name(), r.config(), r.counters()}; });
}

std::vector<RoomInfo> ShardedEngine::rooms() const {
  epoch::Guard pinned;
  std::vector<RoomInfo> out;
  registry_.for_each([&](const Room* r) {
    out.push_back(RoomInfo{r->name(), r->config(), r->counters()});
  });
  std::sort(out.begin(), out.end(),
            [](const RoomInfo& a, const RoomInfo& b) { return a.name < b.name; });
  return out;
}

Result<uint64_t> ShardedEngine::admit(std::string_view name, uint64_t count) {
  if (env_.replica) return replica_refuses();
  return writing_room(name, [&](Room& r) { return r.admit(count); });
}

Result<uint64_t> ShardedEngine::clear(std::string_view name) {
  if (env_.replica) return replica_refuses();
  return writing_room(name, [&](Room& r) { return r.clear(); });
}

Result<JoinResult> ShardedEngine::join(std::string_view name, const JoinRequest& request) {
  if (env_.replica) return replica_refuses();
  if (!request.user.empty() && !valid_user(request.user)) {
    return Status(Code::kInvalidArgument, kUserRule);
  }
  return writing_room(name, [&](Room& r) { return r.join(request); });
}

Result<TicketView> ShardedEngine::status(std::string_view name, std::string_view ticket) {
  return in_room(name, [&](Room& r) { return r.status(ticket, true); });
}

Result<TicketView> ShardedEngine::peek(std::string_view name, std::string_view ticket) const {
  return in_room(name, [&](Room& r) { return r.status(ticket, false); });
}

Result<TicketDetail> ShardedEngine::describe(std::string_view name, std::string_view ticket) const {
  return in_room(name, [&](Room& r) { return r.describe(ticket); });
}

Status ShardedEngine::heartbeat(std::string_view name, std::string_view ticket) {
  return status(name, ticket).status();
}

Result<TicketView> ShardedEngine::leave(std::string_view name, std::string_view ticket) {
  if (env_.replica) return replica_refuses();
  return writing_room(name, [&](Room& r) { return r.leave(ticket); });
}

Result<TicketDetail> ShardedEngine::activate(std::string_view name, std::string_view ticket) {
  if (env_.replica) return replica_refuses();
  epoch::Guard pinned;
  Room* r = registry_.find(name);
  if (r == nullptr) return no_room(name);
  auto out = r->activate(ticket);
  // A session in use only moves its last_seen, which the owner reads when the idle deadline
  // it has comes (and then sets the next): nothing for a pass to do now. Waking the room on
  // every use of a session cost the gate a thread switch per request.
  if (out.is_ok() && out->first_use) shards_[r->shard()]->wake(*r);
  return out;
}

unsigned ShardedEngine::shard_of(std::string_view name) const {
  return static_cast<unsigned>(std::hash<std::string_view>{}(name) % shards_.size());
}

// A lane is a shard: its rooms, its heap of deadlines and its wakes are its own.
void ShardedEngine::run_lane(size_t lane) {
  Shard& shard = *shards_.at(lane);
  {
    epoch::Guard pinned;
    std::lock_guard rooms(shard.rooms_mu);
    shard.take_due(clock_->now_ms(), shard.running);
    shard.passes.fetch_add(shard.running.size(), std::memory_order_relaxed);
    for (Room* room : shard.running) {
      // Cleared before the pass looks (Shard::wake says why).
      room->scheduled.store(false, std::memory_order_seq_cst);
      std::atomic_thread_fence(std::memory_order_seq_cst);
      shard.schedule(room, room->run());
    }
    shard.running.clear();
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

// Memory waiting to be freed counts as work of lane 0: a pass of any lane frees it, within
// reclaim_interval_ms, and lane 0 runs for it when no other pass came.
int64_t ShardedEngine::lane_due_ms(size_t lane) const {
  int64_t due = kNoDeadline;
  if (lane == 0 && epoch::pending() != 0) {
    due = last_reclaim_ms_.load(std::memory_order_relaxed) + options_.reclaim_interval_ms;
  }
  Shard& shard = *shards_.at(lane);
  std::lock_guard rooms(shard.rooms_mu);
  return std::min(due, shard.next_due());
}

size_t ShardedEngine::poll_events(std::vector<Event>& out, size_t max) {
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

EngineStats ShardedEngine::stats() const {
  epoch::Guard pinned;
  EngineStats s;
  for (const auto& shard : shards_) {
    s.events_dropped += shard->dropped.load(std::memory_order_relaxed);
    s.room_passes += shard->passes.load(std::memory_order_relaxed);
  }
  registry_.for_each([&](const Room* r) { s.bytes_allocated += r->bytes_allocated(); });
  s.admitted = totals_.admitted.load(std::memory_order_relaxed);
  for (size_t i = 0; i < s.expired.size(); ++i)
    s.expired[i] = totals_.expired[i].load(std::memory_order_relaxed);
  return s;
}

}  // namespace anteroom::sharded

namespace anteroom {

std::unique_ptr<Engine> make_sharded_engine(EngineOptions options) {
  return std::make_unique<sharded::ShardedEngine>(std::move(options), false);
}

}  // namespace anteroom
