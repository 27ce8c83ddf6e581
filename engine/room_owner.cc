// Room: the owner side. Runs only under the room's owner lock, so nothing here races with
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

void Room::set_config(const RoomConfig& c, bool journal_it) {
  with_owner([&] {
    capacity_.store(c.capacity, std::memory_order_relaxed);
    admission_.store(static_cast<uint8_t>(c.admission), std::memory_order_relaxed);
    admit_per_second_.store(c.admit_per_second, std::memory_order_relaxed);
    allowed_ttl_s_.store(c.allowed_ttl_seconds, std::memory_order_relaxed);
    session_ttl_s_.store(c.session_ttl_seconds, std::memory_order_relaxed);
    heartbeat_timeout_s_.store(c.heartbeat_timeout_seconds, std::memory_order_relaxed);
    max_waiting_.store(c.max_waiting, std::memory_order_relaxed);
    tokens_ = std::min<double>(tokens_, c.admit_per_second);
    if (journal_it) {
      Change ch = change(Change::Kind::kRoomPut, 0);
      ch.config = &c;
      journal(ch);
    }
    pass();
    return 0;
  });
}

Change Room::change(Change::Kind kind, uint64_t seq) const {
  Change c;
  c.kind = kind;
  c.room = name_;
  c.seq = seq;
  c.at_ms = env_.clock.now_ms();
  return c;
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
      admitted =
          static_cast<uint32_t>(std::max<int64_t>(0, (t.admitted_at_ms - env_.epoch_ms) / 100));
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

void Room::request_pass() {
  wanted_.fetch_or(1, std::memory_order_acq_rel);
  serve();
}

// Runs passes while they are wanted, if the owner lock can be had without waiting. After
// unlocking it looks once more: a request made after the last pass but before the unlock
// found the lock taken, and is served here (or by whoever took the lock next).
//
// Why no request is lost: requests and this last look are read-modify-writes of wanted_, so
// they are ordered. If the look comes after a request, it sees it. If the request comes
// after the look, it read the look's write (acq_rel), so the unlock before the look
// happens-before the requester's try_lock, which then finds the lock free (or held by a
// thread that will look in turn).
void Room::serve() {
  while (owner_.try_lock()) {
    while (wanted_.exchange(0, std::memory_order_acq_rel) != 0) pass();
    owner_.unlock();
    if (wanted_.fetch_or(0, std::memory_order_acq_rel) == 0) return;
  }
}

void Room::drain_inbox() {
  uint64_t freed = 0;
  {
    std::lock_guard lock(inbox_mu_);
    if (inbox_holes_.empty() && inbox_freed_ == 0) return;
    scratch_.swap(inbox_holes_);
    freed = inbox_freed_;
    inbox_freed_ = 0;
  }
  for (uint64_t seq : scratch_) {
    if (Slot* s = line_.find(seq)) {
      line_.add_hole(seq, *s);
      positions_moved_ = true;
    }
  }
  scratch_.clear();
  owner_sub(in_use_, freed);
}

void Room::pass() {
  drain_inbox();
  bool is_auto =
      admission_.load(std::memory_order_relaxed) == static_cast<uint8_t>(AdmissionMode::kAuto);
  // Manual rooms still pass ended tickets at the head, so positions stay cheap to read.
  admit_from_cursor(is_auto ? admission_budget(env_.clock.now_ms(), true) : 0);
  emit_changes();
}

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
  e.ticket = env_.codec.encode(seq, Tag{slot.tag[0], slot.tag[1], slot.tag[2]});
  e.reason = why;
  return e;
}

void Room::expire(uint64_t seq, Slot& slot, uint8_t& packed, EndReason why) {
  TicketState was = state_of(packed);
  if (!cas_state(slot, packed, pack_state(TicketState::kExpired, why))) return;  // lost a race
  Change c = change(Change::Kind::kExpire, seq);
  c.reason = why;
  journal(c);
  owner_add(expired_[static_cast<int>(why)], 1);
  env_.totals.expired[static_cast<int>(why)].fetch_add(1, std::memory_order_relaxed);
  if (holds_slot(was)) {
    owner_sub(in_use_, 1);
  } else {
    line_.add_hole(seq, slot);
    positions_moved_ = true;
  }
  sink_.emit(ticket_event(Event::Kind::kExpired, seq, slot, why));
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
uint64_t Room::admit_from_cursor(uint64_t budget) {
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
      expire(seq, *s, packed, EndReason::kAbandoned);
      continue;  // expired by us, or left by its visitor in the meantime
    }
    if (admitted == budget) break;
    std::atomic_ref<uint32_t>(s->admitted_at).store(now, std::memory_order_relaxed);
    // The CAS (release) publishes admitted_at with the ALLOWED state.
    if (!cas_state(*s, packed, pack_state(TicketState::kAllowed, EndReason::kNone))) {
      continue;  // the visitor left first; `packed` now says so
    }
    journal(change(Change::Kind::kAdmit, seq));
    ++admitted;
    holders_.push_back(seq);
    owner_add(in_use_, 1);
    sink_.emit(ticket_event(Event::Kind::kAdmitted, seq, *s, EndReason::kNone));
  }
  if (seq != line_.cursor()) {
    line_.advance_cursor(seq);
    positions_moved_ = true;
  }
  if (admitted != 0) {
    owner_add(admitted_total_, admitted);
    tokens_ = std::max(0.0, tokens_ - static_cast<double>(admitted));
    rate_window_.record(env_.clock.now_ms(), admitted);
    env_.totals.admitted.fetch_add(admitted, std::memory_order_relaxed);
  }
  return admitted;
}

void Room::sweep() {
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
    if (ticks_since(now, seen) >= abandon_after) expire(seq, *s, packed, EndReason::kAbandoned);
  }

  auto keep = holders_.begin();
  for (uint64_t seq : holders_) {
    Slot* s = line_.find(seq);
    uint8_t packed = load_state(*s);
    TicketState st = state_of(packed);
    if (st == TicketState::kAllowed) {
      uint32_t at = std::atomic_ref<const uint32_t>(s->admitted_at).load(std::memory_order_relaxed);
      if (ticks_since(now, at) >= allowed_ttl) expire(seq, *s, packed, EndReason::kAllowedUnused);
    } else if (st == TicketState::kActive) {
      uint32_t seen = std::atomic_ref<const uint32_t>(s->last_seen).load(std::memory_order_relaxed);
      if (ticks_since(now, seen) >= session_ttl) expire(seq, *s, packed, EndReason::kSessionIdle);
    }
    if (holds_slot(state_of(packed))) *keep++ = seq;
  }
  holders_.erase(keep, holders_.end());
}

void Room::emit_changes() {
  if (positions_moved_) {
    sink_.emit(room_event(Event::Kind::kPositionsMoved));
    positions_moved_ = false;
  }
  Event e = room_event(Event::Kind::kCountsChanged);
  if (e.waiting != published_.waiting || e.active != published_.active ||
      e.capacity != published_.capacity) {
    published_ = {e.waiting, e.active, e.capacity};
    sink_.emit(std::move(e));
  }
}

void Room::run(int64_t sweep_interval_ms) {
  with_owner([&] {
    const int64_t now_ms = env_.clock.now_ms();
    if (now_ms - last_sweep_ms_ >= sweep_interval_ms) {
      drain_inbox();  // a ticket that left is not expired as well
      sweep();
      last_sweep_ms_ = now_ms;
    }
    pass();
    publish_rate(now_ms);
    return 0;
  });
}

uint64_t Room::admit(uint64_t count) {
  return with_owner([&] {
    drain_inbox();
    const int64_t now_ms = env_.clock.now_ms();
    uint64_t n = admit_from_cursor(std::min(count, admission_budget(now_ms, false)));
    // Republish the rate when it was unknown or a new second began; run() refreshes it on
    // every pass anyway, so an operator admitting one at a time does not pay for it each call.
    if (n != 0 &&
        (rate_published_s_ != now_ms / 1000 || rate_.load(std::memory_order_relaxed) == 0)) {
      publish_rate(now_ms);
    }
    emit_changes();
    return n;
  });
}

void Room::publish_rate(int64_t now_ms) {
  rate_.store(rate_window_.per_second(now_ms), std::memory_order_relaxed);
  rate_published_s_ = now_ms / 1000;
}

uint64_t Room::clear() {
  return with_owner([&] {
    drain_inbox();
    const uint8_t cleared = pack_state(TicketState::kLeft, EndReason::kCleared);
    const uint64_t end = line_.claimed();
    std::vector<uint64_t> seqs;
    for (uint64_t seq = line_.cursor(); seq < end; ++seq) {
      Slot* s = line_.find(seq);
      if (s == nullptr) break;
      uint8_t packed = load_state(*s);
      if (state_of(packed) != TicketState::kWaiting) continue;
      if (cas_state(*s, packed, cleared)) {
        line_.add_hole(seq, *s);
        seqs.push_back(seq);
      }
    }
    if (!seqs.empty()) {
      Change c = change(Change::Kind::kClear, 0);
      c.seqs = seqs;
      journal(c);
    }
    owner_add(cleared_total_, seqs.size());
    positions_moved_ = positions_moved_ || !seqs.empty();
    pass();  // pass the cleared tickets at the head
    return static_cast<uint64_t>(seqs.size());
  });
}

}  // namespace anteroom
