// The sharded engine as a replica (replica.h): applying records, the decider's questions,
// and whole-room images for snapshots.
#include <type_traits>

#include "engine/sharded_engine_impl.h"

namespace anteroom::sharded {
namespace {

template <typename... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <typename... F>
Overloaded(F...) -> Overloaded<F...>;

Applied failed(Status st) {
  Applied a;
  a.status = std::move(st);
  return a;
}

Applied with_ticket(Result<TicketDetail> r) {
  if (!r.is_ok()) return failed(r.status());
  Applied a;
  a.ticket = std::move(r).value();
  return a;
}

// An op on an existing room.
Applied apply_to(Room& r, int64_t at, const Op& op) {
  return std::visit(
      Overloaded{
          [&](const op::Join& j) {
            auto res =
                r.apply_join(at, j.tag, JoinRequest{j.user, j.key_hash, j.lane, j.probation_s});
            if (!res.is_ok()) return failed(res.status());
            Applied a;
            a.join = std::move(res).value();
            return a;
          },
          [&](const op::Leave& l) { return with_ticket(r.apply_leave(at, l.seq)); },
          [&](const op::Activate& x) { return with_ticket(r.apply_activate(at, x.seq)); },
          [&](const op::Admit& x) {
            Applied a;
            a.count = r.apply_admit(at, x.count, x.owed);
            return a;
          },
          [&](const op::Expire& e) {
            r.apply_expire(at, e.seq, e.reason);
            return Applied{};
          },
          [&](const op::Seen& s) {
            r.apply_seen(at, s.seqs);
            return Applied{};
          },
          [&](const op::Clear&) {
            Applied a;
            a.count = r.apply_clear(at);
            return a;
          },
          [&](const op::EventPhase& p) {
            r.apply_event_phase(at, p.phase);
            return Applied{};
          },
          [&](const op::PutRoom&) { return failed(Status(Code::kInvalidArgument, "put_room")); },
          [&](const op::DeleteRoom&) {
            return failed(Status(Code::kInvalidArgument, "delete_room"));
          },
          [&](const op::Draw&) { return failed(Status(Code::kInvalidArgument, "draw")); },
          [&](const op::LaneTurn&) { return failed(Status(Code::kInvalidArgument, "lane_turn")); },
      },
      op);
}

}  // namespace

Applied ShardedEngine::apply(std::string_view room, int64_t at_ms, const Op& op) {
  if (names_tickets(op)) {  // what a log holds: a replica decides these itself
    return failed(Status(Code::kInvalidArgument,
                         std::string("a replica does not apply a log's ") + op_name(op)));
  }
  if (const auto* put = std::get_if<op::PutRoom>(&op)) {
    return failed(create_room(room, put->config, at_ms));
  }
  if (std::holds_alternative<op::DeleteRoom>(op)) return failed(drop_room(room));
  if (const auto* j = std::get_if<op::Join>(&op)) {
    if (!j->user.empty() && !valid_user(j->user)) {
      return failed(Status(Code::kInvalidArgument, kUserRule));
    }
  }
  epoch::Guard pinned;
  Room* r = registry_.find(room);
  if (r == nullptr) return failed(no_room(room));
  Applied out = apply_to(*r, at_ms, op);
  shards_[r->shard()]->wake(*r);
  return out;
}

ReplicaEngine::Decision ShardedEngine::decide(std::string_view room, int64_t now_ms) {
  Decision out;
  epoch::Guard pinned;
  Room* r = registry_.find(room);
  if (r == nullptr) return out;
  Room::Due due = r->decide(now_ms);
  for (const auto& [seq, why] : due.expire) out.ops.emplace_back(op::Expire{seq, why});
  if (due.phase) out.ops.emplace_back(op::EventPhase{*due.phase});
  if (due.admit != 0) out.ops.emplace_back(op::Admit{due.admit, due.owed, {}});
  out.next_ms = due.next_ms;
  return out;
}

Result<RoomImage> ShardedEngine::image(std::string_view room) const {
  return in_room(room, [&](Room& r) {
    RoomImage img;
    img.config = r.config();
    img.epoch_ms = r.epoch_ms();
    img.next_seq = r.next_seq();
    img.counters = r.counters();
    img.tickets = r.export_exact();
    img.draw = r.draw_info();
    img.lanes_turn = r.lanes_turn();
    return img;
  });
}

Status ShardedEngine::load_image(std::string_view room, const RoomImage& image) {
  if (!valid_room_name(room)) return bad_room_name();
  if (Status st = image.config.validate(); !st.is_ok()) return st;
  auto fresh = make_room(room, image.config, image.epoch_ms);
  if (Status st = fresh->restore_exact(image.next_seq, image.counters, image.tickets);
      !st.is_ok()) {
    return st;
  }
  if (image.draw) fresh->restore_draw(*image.draw);
  fresh->restore_lanes_turn(image.lanes_turn);
  epoch::Guard pinned;
  std::lock_guard admin(admin_);
  Room* old = registry_.find(room);
  if (old == nullptr) {
    if (registry_.size() >= options_.max_rooms) return too_many_rooms();
    return add_room(std::move(fresh));
  }
  Shard& shard = *shards_[old->shard()];
  std::lock_guard rooms(shard.rooms_mu);
  for (auto& p : shard.rooms) {
    if (p.get() != old) continue;
    registry_.replace(old, fresh.get());
    shard.unlist(old);
    shard.list(fresh.get());
    epoch::retire(p.release());  // readers inside the old room finish there
    p = std::move(fresh);
    break;
  }
  config_version_.fetch_add(1, std::memory_order_acq_rel);
  return Status::ok();
}

void ShardedEngine::forget(std::string_view room) {
  epoch::Guard pinned;
  std::lock_guard admin(admin_);
  if (Room* r = registry_.find(room)) remove_room(r);
}

void ShardedEngine::publish(std::string_view room) {
  epoch::Guard pinned;
  if (Room* r = registry_.find(room)) r->apply_publish();
}

}  // namespace anteroom::sharded

namespace anteroom {

std::unique_ptr<ReplicaEngine> make_replica_engine(EngineOptions options) {
  return std::make_unique<sharded::ShardedEngine>(std::move(options), true);
}

}  // namespace anteroom
