// Room: when work is due. run() does what the clock calls for and says when it next will;
// the shard (sharded_engine_impl.h) keeps that time in its deadline heap, so a room with
// nothing due costs nothing. Expiry sweeps run when the earliest deadline of a live ticket
// comes, not on a fixed interval: heartbeats only move deadlines later, so a sweep that
// finds nothing due just learns the next one.
#include <algorithm>
#include <cmath>

#include "engine/room.h"

namespace anteroom {

uint32_t Room::allowed_seconds(const Slot& s) const {
  const uint32_t ttl = allowed_ttl_s_.load(std::memory_order_relaxed);
  const uint16_t probation = terms_probation(s.terms);
  return probation != 0 && probation < ttl ? probation : ttl;
}

int64_t Room::deadline_of(const Slot& s, uint8_t packed) const {
  uint32_t from = 0;
  uint32_t seconds = 0;
  switch (state_of(packed)) {
    case TicketState::kWaiting:
      from = std::atomic_ref<const uint32_t>(s.last_seen).load(std::memory_order_relaxed);
      seconds = heartbeat_timeout_s_.load(std::memory_order_relaxed);
      break;
    case TicketState::kAllowed:
      from = std::atomic_ref<const uint32_t>(s.admitted_at).load(std::memory_order_relaxed);
      seconds = allowed_seconds(s);
      break;
    case TicketState::kActive:
      from = std::atomic_ref<const uint32_t>(s.last_seen).load(std::memory_order_relaxed);
      seconds = session_ttl_s_.load(std::memory_order_relaxed);
      break;
    default:
      return kNoDeadline;
  }
  // due() expires at the first tick with ticks_since(now, from) >= seconds * 10.
  return tick_to_ms(from) + int64_t{seconds} * 1000;
}

// Any thread. Most joins find a deadline as soon or sooner there already: a load, no write.
void Room::note_deadline(int64_t ms) {
  int64_t was = hinted_due_ms_.load(std::memory_order_relaxed);
  while (ms < was && !hinted_due_ms_.compare_exchange_weak(was, ms, std::memory_order_release,
                                                           std::memory_order_relaxed)) {
  }
}

// Every live ticket at tick `now`: `on_due(seq, slot, packed, why)` for each expiry due,
// true if the ticket still counts (a decider's listing) and false if it ended (an expiry);
// holders found not holding a slot are dropped. Returns the earliest deadline of the tickets
// that count, which for one listed but not ended is now or past.
template <typename F>
int64_t Room::scan_deadlines(uint32_t now, int64_t now_ms, F&& on_due) {
  int64_t next = kNoDeadline;
  uint64_t read = holders_.size();
  for_each_waiting([&](uint64_t seq, Slot& s, uint8_t packed) {
    ++read;
    if (!due(s, packed, EndReason::kAbandoned, now) ||
        on_due(seq, s, packed, EndReason::kAbandoned)) {
      next = std::min(next, deadline_of(s, packed));
    }
  });
  auto keep = holders_.begin();
  for (uint64_t seq : holders_) {
    Slot* s = line_.find(seq);
    uint8_t packed = load_state(*s);
    for (EndReason why : {EndReason::kAllowedUnused, EndReason::kSessionIdle}) {
      if (due(*s, packed, why, now)) on_due(seq, *s, packed, why);
    }
    if (holds_slot(state_of(packed))) {
      *keep++ = seq;
      next = std::min(next, deadline_of(*s, packed));
    }
  }
  holders_.erase(keep, holders_.end());
  // A sweep reads every live ticket (about 8 ns each here): the next waits at least 1 ms per
  // 2,000 it read, so sweeps take about 2% of a core however large the room. Below 200,000
  // tickets that is under the 100 ms of a slot tick, and costs no deadline anything.
  const int64_t spacing = static_cast<int64_t>(read / 2'000);
  return next == kNoDeadline ? next : std::max(next, now_ms + spacing);
}

int64_t Room::sweep() {
  return scan_deadlines(now_tick(), now_ms(),
                        [&](uint64_t seq, Slot& s, uint8_t& packed, EndReason why) {
                          expire(seq, s, packed, why);
                          return false;
                        });
}

int64_t Room::run() {
  return with_owner([&] {
    const int64_t now_ms = env_.clock.now_ms();
    if (env_.replica) {  // nothing decided by the clock: tidy up and refresh the rate
      prune_holders();
      publish_rate(now_ms);
      return rate_.load(std::memory_order_relaxed) != 0 ? (now_ms / 1000 + 1) * 1000 : kNoDeadline;
    }
    advance_event(now_ms);
    // acquire: the slot a hint is about was published before it (publish_new).
    sweep_due_ms_ =
        std::min(sweep_due_ms_, hinted_due_ms_.exchange(kNoDeadline, std::memory_order_acquire));
    if (now_ms >= sweep_due_ms_) {
      drain_inbox();  // a ticket that left is not expired as well
      sweep_due_ms_ = sweep();
    }
    pass();
    publish_rate(now_ms);
    return next_due(now_ms);
  });
}

// The decider's turn (replica rooms): run() decides nothing there, so the sweep's schedule
// is kept here. Tickets listed stay due until their expiries come back as records; the
// node asks again only then (a record makes the room due at once), and that sweep learns
// the next deadline.
Room::Due Room::decide(int64_t now_ms) {
  return with_owner([&] {
    Due d;
    const uint32_t now = tick(now_ms);
    sweep_due_ms_ =
        std::min(sweep_due_ms_, hinted_due_ms_.exchange(kNoDeadline, std::memory_order_acquire));
    if (now_ms >= sweep_due_ms_) {  // listed tickets keep the next sweep due (spaced)
      prune_holders();
      sweep_due_ms_ =
          scan_deadlines(now, now_ms, [&](uint64_t seq, Slot&, uint8_t&, EndReason why) {
            d.expire.emplace_back(seq, why);
            return true;  // still live until its expiry comes back as a record
          });
    }
    if (base_.event.exists()) {
      if (const RoomEvent::Phase p = due_phase(now_ms); p > base_.event.phase) d.phase = p;
    }
    const bool is_auto =
        admission_.load(std::memory_order_relaxed) == static_cast<uint8_t>(AdmissionMode::kAuto);
    const RoomMode m = mode();
    if (is_auto && admit_per_second_.load(std::memory_order_relaxed) != 0 &&
        m != RoomMode::kPassthrough && m != RoomMode::kQueueAll && !event_holds_admission(now_ms)) {
      // What capacity and the token bucket allow, for as many as wait; the tokens are taken
      // now, as the admission is proposed (applying it does not take them again).
      uint64_t n = std::min(admission_budget(now_ms, true), line_.waiting());
      d.owed = std::min(n, owed_);
      tokens_ = std::max(0.0, tokens_ - static_cast<double>(n - d.owed));
      d.admit = n;
    }
    d.next_ms =
        std::max(now_ms + 1, std::min({sweep_due_ms_, admission_due(now_ms), event_due(now_ms)}));
    return d;
  });
}

int64_t Room::next_due(int64_t now_ms) const {
  int64_t due = std::min({sweep_due_ms_, admission_due(now_ms), event_due(now_ms)});
  // The rate decays over its window and the wait estimate follows the holders' ages: both
  // are published once a second while they move (rooms_test reads them).
  const bool moving = rate_.load(std::memory_order_relaxed) != 0 ||
                      (in_use_.load(std::memory_order_relaxed) != 0 && line_.waiting() != 0);
  if (moving) due = std::min(due, (now_ms / 1000 + 1) * 1000);
  return std::max(due, now_ms + 1);  // a pass is over: what is due again is due later
}

// Rate-capped auto admission waits for its next token while someone waits and a slot is
// free; anything else that admits (a leave, an expiry, a join, the operator) wakes the room.
int64_t Room::admission_due(int64_t now_ms) const {
  const uint32_t aps = admit_per_second_.load(std::memory_order_relaxed);
  const RoomMode m = mode();
  if (aps == 0 || m == RoomMode::kPassthrough || m == RoomMode::kQueueAll) return kNoDeadline;
  if (admission_.load(std::memory_order_relaxed) != static_cast<uint8_t>(AdmissionMode::kAuto) ||
      line_.waiting() == 0) {
    return kNoDeadline;
  }
  const uint32_t cap = capacity_.load(std::memory_order_relaxed);
  if (cap != 0 && in_use_.load(std::memory_order_relaxed) >= cap) return kNoDeadline;
  if (event_holds_admission(now_ms)) return kNoDeadline;  // event_due says when that ends
  // The first ms at which admission_budget's own sum reaches the next whole token.
  const double next = std::floor(tokens_) + 1;
  auto ms = static_cast<int64_t>(std::ceil((next - tokens_) * 1000.0 / aps));
  while (tokens_ + static_cast<double>(ms) / 1000.0 * aps < next) ++ms;
  while (ms > 1 && tokens_ + static_cast<double>(ms - 1) / 1000.0 * aps >= next) --ms;
  return tokens_at_ms_ + std::max<int64_t>(ms, 1);
}

int64_t Room::event_due(int64_t now_ms) const {
  const RoomEvent& e = base_.event;
  if (!e.exists() || e.phase == RoomEvent::Phase::kEnded) return kNoDeadline;
  const int64_t wall = wall_ms(now_ms);
  int64_t next = kNoDeadline;
  for (int64_t at : {e.prequeue_at_ms, e.start_at_ms, e.end_at_ms}) {
    if (at > wall) next = std::min(next, at);
  }
  return next == kNoDeadline ? kNoDeadline : next - env_.wall_minus_engine_ms;
}

}  // namespace anteroom
