// Room: admission, on the owner side (room_owner.cc says what that means): how many the
// rules let in now, and letting them in, from the head of the line (first come, first in)
// or by the room's random picks.
#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/fair_draw.h"
#include "engine/room.h"

namespace anteroom {

using owner_counter::owner_add;

uint64_t Room::admission_budget(int64_t now_ms, bool rate_capped) {
  uint64_t budget = std::numeric_limits<uint64_t>::max();
  if (mode() == RoomMode::kPassthrough) return budget;
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
    budget = std::min<uint64_t>(budget, static_cast<uint64_t>(std::floor(tokens_)) + owed_);
  }
  return budget;
}

bool Room::abandoned(const Slot& s, uint32_t now) const {
  const uint32_t seen =
      std::atomic_ref<const uint32_t>(s.last_seen).load(std::memory_order_relaxed);
  // On a replica, `seen` is what the seen-reports applied so far say, `now` the record's time.
  return ticks_since(now, seen) >=
         int64_t{heartbeat_timeout_s_.load(std::memory_order_relaxed)} * 10;
}

bool Room::admit_one(uint64_t seq, Slot& s, uint8_t& packed, uint32_t now) {
  std::atomic_ref<uint32_t>(s.admitted_at).store(now, std::memory_order_relaxed);
  // The CAS (release) publishes admitted_at with the ALLOWED state.
  if (!cas_state(s, packed, pack_state(TicketState::kAllowed, EndReason::kNone))) {
    return false;  // the visitor left first; `packed` now says so
  }
  journal(change(Change::Kind::kAdmit, seq));
  holders_.push_back(seq);
  sweep_due_ms_ =
      std::min(sweep_due_ms_, deadline_of(s, pack_state(TicketState::kAllowed, EndReason::kNone)));
  owner_add(in_use_, 1);
  sink_.emit(ticket_event(Event::Kind::kAdmitted, seq, s, EndReason::kNone));
  return true;
}

// Walks from the cursor: admits WAITING tickets while the budget lasts, expires abandoned
// ones on the way (they are never admitted), and passes tickets that already ended. Stops at
// a WAITING ticket once the budget is spent, or at a claimed but unpublished slot: nothing
// behind an unpublished join may overtake it. A drawn pre-queue is taken in drawn order when
// the walk reaches it, and the walk goes on past it only once it is all admitted or gone.
uint64_t Room::admit_from_cursor(uint64_t budget) {
  const uint32_t now = now_tick();
  DrawLine* draw = draw_.load(std::memory_order_relaxed);
  uint64_t seq = line_.cursor();
  uint64_t admitted = 0;
  for (bool in_draw = false;;) {
    // Stop at the drawn pre-queue while some of it waits.
    const bool to_draw = draw != nullptr && !in_draw && draw->cursor() < draw->size();
    const uint64_t end = to_draw ? std::min(line_.claimed(), draw->first_seq()) : line_.claimed();
    for (; seq < end; ++seq) {
      Slot* s = line_.find(seq);
      if (s == nullptr) break;
      if (Line::is_sentinel(s)) {  // a segment of ended tickets: pass it whole
        seq = line_.skip_ended(seq) - 1;
        continue;
      }
      uint8_t packed = load_state(*s);
      if (packed == 0) break;
      if (state_of(packed) != TicketState::kWaiting) continue;
      if (abandoned(*s, now)) {
        expire(seq, *s, packed, EndReason::kAbandoned);
        continue;  // expired by us, or left by its visitor in the meantime
      }
      if (admitted == budget) break;
      if (admit_one(seq, *s, packed, now)) ++admitted;
    }
    if (!to_draw || seq != draw->first_seq()) break;
    // At the drawn pre-queue with every ticket before it passed.
    admitted += admit_from_draw(budget - admitted);
    if (draw->cursor() < draw->size()) break;
    in_draw = true;  // all of it admitted or gone: walk on through its seqs
  }
  if (seq != line_.cursor()) {
    line_.advance_cursor(seq);
    positions_moved_ = true;
  }
  count_admitted(admitted);
  return admitted;
}

void Room::count_admitted(uint64_t n) {
  if (n == 0) return;
  owner_add(admitted_total_, n);
  take_tokens(n);
  rate_window_.record(now_ms(), n);
  env_.totals.admitted.fetch_add(n, std::memory_order_relaxed);
  positions_moved_ = true;
}

// What is owed is taken first. A replica's decider took both when it proposed the admission
// (decide()); every replica takes what is owed as the record says (apply_admit()).
void Room::take_tokens(uint64_t admitted) {
  if (env_.replica) return;
  const uint64_t from_owed = std::min(owed_, admitted);
  owed_ -= from_owed;
  if (!env_.replica) tokens_ = std::max(0.0, tokens_ - static_cast<double>(admitted - from_owed));
}

uint64_t Room::admit(uint64_t count) {
  return with_owner([&] {
    drain_inbox();
    const int64_t now_ms = this->now_ms();
    if (!env_.replica) advance_event(now_ms);
    const uint64_t n = admit_asked(now_ms, count);
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

// An admission asked for (the operator's, or a decider's record): none while the room is
// paused or its event holds admission back, else up to what capacity allows, by the mode.
uint64_t Room::admit_asked(int64_t now_ms, uint64_t count) {
  if (mode() == RoomMode::kQueueAll || event_holds_admission(now_ms)) return admit_from_cursor(0);
  count = std::min(count, admission_budget(now_ms, false));
  if (mode() == RoomMode::kRandom) {
    const uint64_t n = admit_random(count);
    return n + admit_from_cursor(0);
  }
  if (has_lanes_.load(std::memory_order_relaxed)) {
    const uint64_t n = admit_from_lanes(count);
    return n + admit_from_cursor(0);
  }
  return admit_from_cursor(count);
}

void Room::publish_rate(int64_t now_ms) {
  rate_.store(rate_window_.per_second(now_ms), std::memory_order_relaxed);
  rate_published_s_ = now_ms / 1000;
  publish_pace(now_ms);
}

}  // namespace anteroom
