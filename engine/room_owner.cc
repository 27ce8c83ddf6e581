// Room: the owner side. Runs only under the shard's owner mutex, so nothing here races with
// itself; it races only with visitors, through the slot state CAS (see line.h).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "engine/room.h"

namespace anteroom {
namespace {

// Counters only the owner writes: a relaxed load and store, no read-modify-write needed.
void owner_add(std::atomic<uint64_t>& counter, uint64_t delta) {
  counter.store(counter.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
}
void owner_sub(std::atomic<uint64_t>& counter, uint64_t delta) {
  counter.store(counter.load(std::memory_order_relaxed) - delta, std::memory_order_relaxed);
}

// Ticks from `then` to `now`; negative when a visitor stamped a tick after the owner read
// the clock.
int64_t ticks_since(uint32_t now, uint32_t then) { return int64_t{now} - int64_t{then}; }

}  // namespace

void Room::set_config(const RoomConfig& c) {
  capacity_.store(c.capacity, std::memory_order_relaxed);
  admission_.store(static_cast<uint8_t>(c.admission), std::memory_order_relaxed);
  admit_per_second_.store(c.admit_per_second, std::memory_order_relaxed);
  allowed_ttl_s_.store(c.allowed_ttl_seconds, std::memory_order_relaxed);
  session_ttl_s_.store(c.session_ttl_seconds, std::memory_order_relaxed);
  heartbeat_timeout_s_.store(c.heartbeat_timeout_seconds, std::memory_order_relaxed);
  max_waiting_.store(c.max_waiting, std::memory_order_relaxed);
  tokens_ = std::min<double>(tokens_, c.admit_per_second);
}

Status Room::restore(const std::vector<RestoredTicket>& tickets) {
  if (line_.claimed() != 0) return {Code::kInvalidArgument, "restore needs an empty room"};
  const uint32_t now = now_tick();
  auto publish = [&](uint64_t seq, uint8_t packed, const Tag& tag, const UserNode* user,
                     uint32_t admitted) {
    Slot& s = line_.slot_for_publish(seq);
    std::memcpy(s.tag, tag.data(), sizeof(s.tag));
    s.user = user;
    s.last_seen = now;
    s.admitted_at = admitted;
    std::atomic_ref<uint8_t>(s.state).store(packed, std::memory_order_release);
  };
  uint64_t prev = 0;
  bool first = true;
  for (const RestoredTicket& t : tickets) {
    if (!first && t.seq <= prev)
      return {Code::kInvalidArgument, "restored tickets must be in ascending seq order"};
    first = false;
    prev = t.seq;
    while (line_.claimed() < t.seq) {  // a join that claimed a place but was never recorded
      publish(line_.claim(), pack_state(TicketState::kLeft, EndReason::kNone), random_tag(),
              nullptr, 0);
    }
    const uint64_t seq = line_.claim();
    const UserNode* node = nullptr;
    if (!t.user.empty()) {
      bool inserted = false;
      UserNode* n = users_.find_or_insert(t.user, &inserted);
      n->restore(seq + 1);  // the latest ticket of the user wins
      node = n;
    }
    uint32_t admitted = 0;
    if (holds_slot(t.state)) {
      admitted = static_cast<uint32_t>(std::max<int64_t>(0, (t.admitted_at_ms - epoch_ms_) / 100));
      holders_.push_back(seq);
      owner_add(in_use_, 1);
    }
    publish(seq, pack_state(t.state, t.reason), t.tag, node, admitted);
  }
  // The cursor goes to the first WAITING ticket; everything after it that is not WAITING
  // is a hole.
  const uint64_t end = line_.claimed();
  uint64_t cursor = 0;
  while (cursor < end && state_of(load_state(*line_.find(cursor))) != TicketState::kWaiting)
    ++cursor;
  line_.advance_cursor(cursor);
  for (uint64_t seq = cursor; seq < end; ++seq) {
    Slot* s = line_.find(seq);
    if (state_of(load_state(*s)) != TicketState::kWaiting) line_.add_hole(seq, *s);
  }
  positions_moved_ = true;
  return Status::ok();
}

void Room::on_hole(uint64_t seq) {
  Slot* s = line_.find(seq);
  if (s == nullptr) return;
  line_.add_hole(seq, *s);
  positions_moved_ = true;
}

void Room::on_slot_freed() { owner_sub(in_use_, 1); }

Event Room::room_event(Event::Kind kind) const {
  Event e;
  e.kind = kind;
  e.room = name_;
  e.waiting = line_.waiting();
  e.active = in_use_.load(std::memory_order_relaxed);
  e.capacity = capacity_.load(std::memory_order_relaxed);
  return e;
}

Event Room::ticket_event(Event::Kind kind, uint64_t seq, const Slot& slot, EndReason why) const {
  Event e = room_event(kind);
  e.ticket = codec_.encode(seq, Tag{slot.tag[0], slot.tag[1], slot.tag[2]});
  e.reason = why;
  return e;
}

void Room::expire(uint64_t seq, Slot& slot, uint8_t& packed, EndReason why, EventSink& sink) {
  TicketState was = state_of(packed);
  if (!cas_state(slot, packed, pack_state(TicketState::kExpired, why))) return;  // lost a race
  owner_add(expired_[static_cast<int>(why)], 1);
  if (holds_slot(was)) {
    owner_sub(in_use_, 1);
  } else {
    line_.add_hole(seq, slot);
    positions_moved_ = true;
  }
  sink.emit(ticket_event(Event::Kind::kExpired, seq, slot, why));
}

uint64_t Room::admission_budget(int64_t now_ms, bool rate_capped) {
  uint64_t budget = std::numeric_limits<uint64_t>::max();
  uint32_t cap = capacity_.load(std::memory_order_relaxed);
  if (cap != 0) {
    uint64_t used = in_use_.load(std::memory_order_relaxed);
    budget = used >= cap ? 0 : cap - used;
  }
  uint32_t aps = admit_per_second_.load(std::memory_order_relaxed);
  if (rate_capped && aps != 0) {
    double elapsed_s = static_cast<double>(now_ms - tokens_at_ms_) / 1000.0;
    tokens_ = std::min<double>(aps, tokens_ + elapsed_s * aps);
    tokens_at_ms_ = now_ms;
    budget = std::min<uint64_t>(budget, static_cast<uint64_t>(std::floor(tokens_)));
  }
  return budget;
}

// Walks from the cursor: admits WAITING tickets while the budget lasts, expires abandoned
// ones on the way (they are never admitted), and passes tickets that already ended. Stops at
// a WAITING ticket once the budget is spent, or at a claimed but unpublished slot: nothing
// behind an unpublished join may overtake it.
uint64_t Room::admit_from_cursor(uint64_t budget, EventSink& sink) {
  const uint64_t end = line_.claimed();
  const uint32_t now = now_tick();
  const int64_t abandon_after = int64_t{heartbeat_timeout_s_.load(std::memory_order_relaxed)} * 10;
  uint64_t seq = line_.cursor();
  uint64_t admitted = 0;
  for (; seq < end; ++seq) {
    Slot* s = line_.find(seq);
    if (s == nullptr) break;
    uint8_t packed = load_state(*s);
    if (packed == 0) break;
    if (state_of(packed) != TicketState::kWaiting) continue;
    uint32_t seen = std::atomic_ref<const uint32_t>(s->last_seen).load(std::memory_order_relaxed);
    if (ticks_since(now, seen) >= abandon_after) {
      expire(seq, *s, packed, EndReason::kAbandoned, sink);
      continue;  // expired by us, or left by its visitor in the meantime
    }
    if (admitted == budget) break;
    std::atomic_ref<uint32_t>(s->admitted_at).store(now, std::memory_order_relaxed);
    // The CAS (release) publishes admitted_at with the ALLOWED state.
    if (!cas_state(*s, packed, pack_state(TicketState::kAllowed, EndReason::kNone))) {
      continue;  // the visitor left first; `packed` now says so
    }
    ++admitted;
    holders_.push_back(seq);
    owner_add(in_use_, 1);
    sink.emit(ticket_event(Event::Kind::kAdmitted, seq, *s, EndReason::kNone));
  }
  if (seq != line_.cursor()) {
    line_.advance_cursor(seq);
    positions_moved_ = true;
  }
  if (admitted != 0) {
    owner_add(admitted_total_, admitted);
    tokens_ = std::max(0.0, tokens_ - static_cast<double>(admitted));
    rate_window_.record(clock_.now_ms(), admitted);
  }
  return admitted;
}

void Room::sweep(EventSink& sink) {
  const uint32_t now = now_tick();
  const int64_t abandon_after = int64_t{heartbeat_timeout_s_.load(std::memory_order_relaxed)} * 10;
  const int64_t allowed_ttl = int64_t{allowed_ttl_s_.load(std::memory_order_relaxed)} * 10;
  const int64_t session_ttl = int64_t{session_ttl_s_.load(std::memory_order_relaxed)} * 10;

  const uint64_t end = line_.claimed();
  for (uint64_t seq = line_.cursor(); seq < end; ++seq) {
    Slot* s = line_.find(seq);
    if (s == nullptr) break;
    uint8_t packed = load_state(*s);
    if (state_of(packed) != TicketState::kWaiting) continue;  // includes unpublished (0)
    uint32_t seen = std::atomic_ref<const uint32_t>(s->last_seen).load(std::memory_order_relaxed);
    if (ticks_since(now, seen) >= abandon_after)
      expire(seq, *s, packed, EndReason::kAbandoned, sink);
  }

  auto keep = holders_.begin();
  for (uint64_t seq : holders_) {
    Slot* s = line_.find(seq);
    uint8_t packed = load_state(*s);
    TicketState st = state_of(packed);
    if (st == TicketState::kAllowed) {
      uint32_t at = std::atomic_ref<const uint32_t>(s->admitted_at).load(std::memory_order_relaxed);
      if (ticks_since(now, at) >= allowed_ttl)
        expire(seq, *s, packed, EndReason::kAllowedUnused, sink);
    } else if (st == TicketState::kActive) {
      uint32_t seen = std::atomic_ref<const uint32_t>(s->last_seen).load(std::memory_order_relaxed);
      if (ticks_since(now, seen) >= session_ttl)
        expire(seq, *s, packed, EndReason::kSessionIdle, sink);
    }
    if (holds_slot(state_of(packed))) *keep++ = seq;
  }
  holders_.erase(keep, holders_.end());
}

void Room::emit_changes(EventSink& sink) {
  if (positions_moved_) {
    sink.emit(room_event(Event::Kind::kPositionsMoved));
    positions_moved_ = false;
  }
  Event e = room_event(Event::Kind::kCountsChanged);
  if (e.waiting != published_.waiting || e.active != published_.active ||
      e.capacity != published_.capacity) {
    published_ = {e.waiting, e.active, e.capacity};
    sink.emit(std::move(e));
  }
}

void Room::run(EventSink& sink, int64_t sweep_interval_ms) {
  const int64_t now_ms = clock_.now_ms();
  if (now_ms - last_sweep_ms_ >= sweep_interval_ms) {
    sweep(sink);
    last_sweep_ms_ = now_ms;
  }
  bool is_auto =
      admission_.load(std::memory_order_relaxed) == static_cast<uint8_t>(AdmissionMode::kAuto);
  // Manual rooms still pass ended tickets at the head, so positions stay cheap to read.
  admit_from_cursor(is_auto ? admission_budget(now_ms, true) : 0, sink);
  publish_rate(now_ms);
  emit_changes(sink);
}

uint64_t Room::admit(uint64_t count, EventSink& sink) {
  const int64_t now_ms = clock_.now_ms();
  uint64_t n = admit_from_cursor(std::min(count, admission_budget(now_ms, false)), sink);
  // Republish the rate when it was unknown or a new second began; run() refreshes it on
  // every pass anyway, so an operator admitting one at a time does not pay for it each call.
  if (n != 0 &&
      (rate_published_s_ != now_ms / 1000 || rate_.load(std::memory_order_relaxed) == 0)) {
    publish_rate(now_ms);
  }
  emit_changes(sink);
  return n;
}

void Room::publish_rate(int64_t now_ms) {
  rate_.store(rate_window_.per_second(now_ms), std::memory_order_relaxed);
  rate_published_s_ = now_ms / 1000;
}

uint64_t Room::clear(EventSink& sink) {
  const uint8_t cleared = pack_state(TicketState::kLeft, EndReason::kCleared);
  const uint64_t end = line_.claimed();
  uint64_t n = 0;
  for (uint64_t seq = line_.cursor(); seq < end; ++seq) {
    Slot* s = line_.find(seq);
    if (s == nullptr) break;
    uint8_t packed = load_state(*s);
    if (state_of(packed) != TicketState::kWaiting) continue;
    if (cas_state(*s, packed, cleared)) {
      line_.add_hole(seq, *s);
      ++n;
    }
  }
  owner_add(cleared_total_, n);
  positions_moved_ = positions_moved_ || n != 0;
  admit_from_cursor(0, sink);  // pass the cleared tickets at the head
  emit_changes(sink);
  return n;
}

}  // namespace anteroom
