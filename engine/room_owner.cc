// Room: the owner side. Runs only under the room's owner lock, so nothing here races with
// itself; it races only with visitors, through the slot state CAS (see line.h). Admission
// itself is room_admission.cc.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "engine/fair_draw.h"
#include "engine/room.h"

namespace anteroom {
using owner_counter::owner_add;
using owner_counter::owner_sub;

void Room::set_config(const RoomConfig& given, bool journal_it) {
  with_owner([&] {
    RoomConfig c = base_.with_parts_of(given);  // base_: only the owner writes it
    if (c.event.exists()) {
      const auto seed = seed_of(c.event);
      c.event.seed_sha256 = sha256(seed.data(), seed.size());
    }
    {
      std::lock_guard lock(config_mu_);
      // The same event (same nonce) keeps how far it got: a configuration written before a
      // phase change (an operator's PUT racing the start) must not take the event back.
      const RoomEvent& was = base_.event;
      if (c.event.exists() && was.exists() && c.event.nonce == was.nonce &&
          was.phase > c.event.phase) {
        c.event.phase = was.phase;
        c.event.prequeue_seq = was.prequeue_seq;
        c.event.start_seq = was.start_seq;
      }
      base_ = c;
    }
    allowed_ttl_s_.store(c.allowed_ttl_seconds, std::memory_order_relaxed);
    session_ttl_s_.store(c.session_ttl_seconds, std::memory_order_relaxed);
    heartbeat_timeout_s_.store(c.heartbeat_timeout_seconds, std::memory_order_relaxed);
    max_waiting_.store(c.max_waiting, std::memory_order_relaxed);
    trust_user_.store(c.trust_user, std::memory_order_relaxed);
    ip_joins_per_minute_.store(c.ip_joins_per_minute, std::memory_order_relaxed);
    pow_difficulty_.store(c.pow_difficulty, std::memory_order_relaxed);
    prequeue_seq_.store(c.event.prequeue_seq, std::memory_order_relaxed);
    start_seq_.store(c.event.start_seq, std::memory_order_relaxed);
    opens_at_ms_.store(c.event.start_at_ms, std::memory_order_relaxed);
    event_phase_.store(static_cast<uint8_t>(c.event.phase), std::memory_order_release);
    set_lanes(c.lanes);
    apply_settings();
    sweep_due_ms_ = kSweepNow;  // timeouts may have shortened
    if (journal_it) {
      Change ch = change(Change::Kind::kRoomPut, 0);
      ch.config = &c;
      journal(ch);
      // An event set with its pre-queue time past opens it now, not at the next tick. (Not
      // for a new room's first configuration or a replica's: restore and records decide.)
      if (!env_.replica) advance_event(now_ms());
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
  c.at_ms = now_ms();
  return c;
}

Status Room::restore(const std::vector<RestoredTicket>& tickets, uint64_t next_seq) {
  if (line_.claimed() != 0) return {Code::kInvalidArgument, "restore needs an empty room"};
  sweep_due_ms_ = kSweepNow;  // (under no owner lock: nobody else sees the room yet)
  for (size_t i = 0; i < tickets.size(); ++i) {
    if (tickets[i].seq >= Line::kMaxTickets)
      return {Code::kInvalidArgument, "a restored ticket's seq is beyond the room's range"};
    if (i != 0 && tickets[i].seq <= tickets[i - 1].seq)
      return {Code::kInvalidArgument, "restored tickets must be in ascending seq order"};
  }
  const uint64_t tail = std::max(next_seq, tickets.empty() ? 0 : tickets.back().seq + 1);
  uint64_t cursor = tail;
  for (const RestoredTicket& t : tickets) {
    if (t.state == TicketState::kWaiting) {
      cursor = t.seq;
      break;
    }
  }
  line_.restore_begin(tail, cursor);
  const uint32_t now = now_tick();
  for (const RestoredTicket& t : tickets) {
    Slot& s = line_.restore_slot(t.seq);
    std::memcpy(s.tag, t.tag.data(), sizeof(s.tag));
    const TicketExtra* extra = make_extra(t.user, t.key_hash);
    s.extra = extra;
    s.last_seen = t.seen_at_ms != 0 ? tick(t.seen_at_ms) : now;
    s.terms = slot_terms(t.lane, t.probation_s);
    if (holds_slot(t.state)) {
      s.admitted_at = tick(t.admitted_at_ms);
      holders_.push_back(t.seq);
      owner_add(in_use_, 1);
    }
    if (is_live(t.state) && !t.user.empty()) users_.lock(t.user).set(t.seq);
    std::atomic_ref<uint8_t>(s.state).store(pack_state(t.state, t.reason),
                                            std::memory_order_release);
  }
  // Every number without a recovered ticket becomes an ended one; holes are counted and
  // the memory of whatever is wholly ended below the cursor goes back.
  line_.restore_end();
  if (has_lanes_.load(std::memory_order_relaxed)) fill_lanes(line_.claimed());
  positions_moved_ = true;
  return Status::ok();
}

const Room*& Room::owning() {
  thread_local const Room* room = nullptr;
  return room;
}

void Room::request_pass() {
  wanted_.fetch_or(1, std::memory_order_acq_rel);
  // A thread that holds the owner lock already (a replica applying a join, inside
  // with_owner) runs the pass when it lets go; trying the lock it holds would be undefined.
  if (owning() == this) return;
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
    const Room* outer = std::exchange(owning(), this);
    while (wanted_.exchange(0, std::memory_order_acq_rel) != 0) pass();
    owning() = outer;
    owner_.unlock();
    if (wanted_.fetch_or(0, std::memory_order_acq_rel) == 0) return;
  }
}

void Room::drain_inbox() {
  {
    std::lock_guard lock(inbox_mu_);
    if (inbox_holes_.empty() && inbox_freed_.empty()) return;
    scratch_holes_.swap(inbox_holes_);
    scratch_freed_.swap(inbox_freed_);
  }
  for (uint64_t seq : scratch_holes_) {
    Slot* s = line_.find(seq);
    count_hole(seq, *s);
    positions_moved_ = true;
    on_ended(seq, *s);
  }
  owner_sub(in_use_, scratch_freed_.size());
  for (uint64_t seq : scratch_freed_) {
    Slot* s = line_.find(seq);
    note_freed(*s);
    on_ended(seq, *s);
  }
  scratch_holes_.clear();
  scratch_freed_.clear();
}

void Room::on_ended(uint64_t seq, Slot& slot) {
  if (slot.extra != nullptr && slot.extra->user_len != 0) users_.erase_if(slot.extra->user(), seq);
  line_.ended(seq, slot);
}

void Room::pass() {
  drain_inbox();
  const int64_t now = now_ms();
  const bool is_auto =
      admission_.load(std::memory_order_relaxed) == static_cast<uint8_t>(AdmissionMode::kAuto);
  const RoomMode m = mode();
  // Manual rooms still pass ended tickets at the head, so positions stay cheap to read. A
  // replica admits by itself only what capacity alone decides: admissions an admission rate
  // holds back come as records from the room's decider.
  uint64_t budget = 0;
  if ((is_auto || m == RoomMode::kPassthrough) && m != RoomMode::kQueueAll &&
      !event_holds_admission(now)) {
    const bool rate_capped =
        m != RoomMode::kPassthrough && admit_per_second_.load(std::memory_order_relaxed) != 0;
    budget = env_.replica && rate_capped ? 0 : admission_budget(now, true);
  }
  if (m == RoomMode::kRandom && budget != 0) {
    admit_random(budget);
    budget = 0;
  }
  if (has_lanes_.load(std::memory_order_relaxed) && budget != 0) {
    admit_from_lanes(budget);
    budget = 0;
  }
  admit_from_cursor(budget);
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
    note_freed(slot);
    // No-show compensation: an admission nobody used is given back to the rate.
    if (why == EndReason::kAllowedUnused &&
        admit_per_second_.load(std::memory_order_relaxed) != 0) {
      ++owed_;
    }
  } else {
    count_hole(seq, slot);
    positions_moved_ = true;
  }
  sink_.emit(ticket_event(Event::Kind::kExpired, seq, slot, why));
  on_ended(seq, slot);
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

uint64_t Room::clear() {
  return with_owner([&] {
    drain_inbox();
    const uint8_t cleared = pack_state(TicketState::kLeft, EndReason::kCleared);
    std::vector<uint64_t> seqs;
    for_each_waiting([&](uint64_t seq, Slot& s, uint8_t packed) {
      if (!cas_state(s, packed, cleared)) return;  // the visitor left first
      count_hole(seq, s);
      seqs.push_back(seq);
      on_ended(seq, s);
    });
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
