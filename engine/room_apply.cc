// Room: the replica side (replica.h). One thread applies a room's records in order; each op
// runs under the owner lock as of its record's time, so every replica makes the same
// decisions and reaches the same state.
#include <cmath>
#include <cstring>
#include <limits>

#include "engine/room.h"

namespace anteroom {
namespace {

Status no_ticket() { return {Code::kTicketNotFound, "no such ticket in this room"}; }

}  // namespace

Slot* Room::published(uint64_t seq) const {
  if (seq >= line_.claimed()) return nullptr;
  Slot* s = line_.find(seq);
  if (s == nullptr || Line::is_sentinel(s) || load_state(*s) == 0) return nullptr;
  return s;
}

bool Room::due(const Slot& s, uint8_t packed, EndReason why, uint32_t now) const {
  const TicketState st = state_of(packed);
  const uint32_t seen =
      std::atomic_ref<const uint32_t>(s.last_seen).load(std::memory_order_relaxed);
  switch (why) {
    case EndReason::kAbandoned:
      return st == TicketState::kWaiting &&
             ticks_since(now, seen) >=
                 int64_t{heartbeat_timeout_s_.load(std::memory_order_relaxed)} * 10;
    case EndReason::kAllowedUnused: {
      const uint32_t at =
          std::atomic_ref<const uint32_t>(s.admitted_at).load(std::memory_order_relaxed);
      return st == TicketState::kAllowed &&
             ticks_since(now, at) >= int64_t{allowed_seconds(s)} * 10;
    }
    case EndReason::kSessionIdle:
      return st == TicketState::kActive &&
             ticks_since(now, seen) >= int64_t{session_ttl_s_.load(std::memory_order_relaxed)} * 10;
    default:
      return false;
  }
}

void Room::prune_holders() {
  auto keep = holders_.begin();
  for (uint64_t seq : holders_) {
    const Slot* s = line_.find(seq);
    if (s != nullptr && !Line::is_sentinel(s) && holds_slot(state_of(load_state(*s)))) {
      *keep++ = seq;
    }
  }
  holders_.erase(keep, holders_.end());
}

Result<JoinResult> Room::apply_join(int64_t at_ms, const Tag& tag, const JoinRequest& request) {
  Result<JoinResult> r = applying(at_ms, [&] { return join_as(request, &tag); });
  // The pass the join asked for ran as the owner lock was let go: look at the ticket again.
  if (r.is_ok()) {
    TicketView& v = r.value().ticket;
    const Slot* s = line_.find(v.seq);
    v = view_of(v.seq, *s, load_state(*s), id_view(v.id));
  }
  return r;
}

Result<TicketDetail> Room::apply_leave(int64_t at_ms, uint64_t seq) {
  return applying(at_ms, [&]() -> Result<TicketDetail> {
    Slot* s = published(seq);
    if (s == nullptr) return no_ticket();
    TicketDetail d;
    d.ticket = leave_slot(seq, *s, {});
    fill_extra(*s, &d);
    return d;
  });
}

Result<TicketDetail> Room::apply_activate(int64_t at_ms, uint64_t seq) {
  return applying(at_ms, [&]() -> Result<TicketDetail> {
    Slot* s = published(seq);
    if (s == nullptr) return no_ticket();
    return activate_slot(seq, *s, {});
  });
}

uint64_t Room::apply_admit(int64_t at_ms, uint64_t count, uint64_t owed) {
  return applying(at_ms, [&] {
    owed_ -= std::min(owed_, owed);  // every replica alike: the decider said how many
    drain_inbox();
    const uint64_t n = admit_asked(at_ms, count);
    if (n != 0) publish_rate(at_ms);  // as admit() does: the rate is known at once
    emit_changes();
    return n;
  });
}

void Room::apply_expire(int64_t at_ms, uint64_t seq, EndReason why) {
  applying(at_ms, [&] {
    drain_inbox();
    Slot* s = published(seq);
    if (s == nullptr) return 0;
    uint8_t packed = load_state(*s);
    // Re-checked by the record's time and what was applied before it: a visitor seen since
    // the decision, or a ticket that moved on, stays as it is.
    if (!due(*s, packed, why, tick(at_ms))) return 0;
    expire(seq, *s, packed, why);
    pass();  // a freed slot goes to the next in line; an expired head is passed
    return 0;
  });
}

void Room::apply_seen(int64_t at_ms, const std::vector<uint64_t>& seqs) {
  applying(at_ms, [&] {
    const uint32_t now = tick(at_ms);
    for (uint64_t seq : seqs) {
      Slot* s = published(seq);
      if (s == nullptr) continue;
      const TicketState st = state_of(load_state(*s));
      if (st != TicketState::kWaiting && st != TicketState::kActive) continue;
      std::atomic_ref<uint32_t> seen(s->last_seen);
      if (ticks_since(now, seen.load(std::memory_order_relaxed)) > 0) {
        seen.store(now, std::memory_order_relaxed);
      }
    }
    return 0;
  });
}

void Room::apply_publish() {
  with_owner([&] {
    emit_changes();
    return 0;
  });
}

uint64_t Room::apply_clear(int64_t at_ms) {
  applying_at_ms_.store(at_ms, std::memory_order_relaxed);  // clear() takes the lock itself
  return clear();
}

void Room::apply_config(int64_t at_ms, const RoomConfig& config) {
  applying_at_ms_.store(at_ms, std::memory_order_relaxed);
  set_config(config, false);
}

std::vector<RestoredTicket> Room::export_exact() const {
  std::vector<RestoredTicket> out = export_live(true);
  for (RestoredTicket& t : out) {
    const Slot* s = line_.find(t.seq);
    t.seen_at_ms =
        tick_to_ms(std::atomic_ref<const uint32_t>(s->last_seen).load(std::memory_order_relaxed));
  }
  return out;
}

Status Room::restore_exact(uint64_t next_seq, const RoomCounters& totals,
                           const std::vector<RestoredTicket>& tickets) {
  if (!tickets.empty() && tickets.back().seq >= next_seq) {
    return {Code::kInvalidArgument, "a restored ticket's seq is at or past the next seq"};
  }
  if (next_seq > Line::kMaxTickets) {
    return {Code::kInvalidArgument, "the next seq is beyond the room's range"};
  }
  if (Status st = restore(tickets, next_seq); !st.is_ok()) return st;
  return with_owner([&] {
    admitted_total_.store(totals.admitted_total, std::memory_order_relaxed);
    left_total_.store(totals.left_total, std::memory_order_relaxed);
    expired_[1].store(totals.expired_allowed_unused, std::memory_order_relaxed);
    expired_[2].store(totals.expired_session_idle, std::memory_order_relaxed);
    expired_[3].store(totals.expired_abandoned, std::memory_order_relaxed);
    cleared_total_.store(totals.cleared_total, std::memory_order_relaxed);
    return Status::ok();
  });
}

}  // namespace anteroom
