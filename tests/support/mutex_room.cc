#include "tests/support/mutex_room.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace anteroom {

MutexRoom::MutexRoom(std::string name, const RoomConfig& c, MutexEnv& env)
    : config(c), name_(std::move(name)), env_(env) {
  tokens_ = c.admit_per_second;
  tokens_at_ms_ = env.clock.now_ms();
}

uint64_t MutexRoom::waiting_before(uint64_t seq) const {
  if (seq <= cursor_) return 0;
  auto h = std::lower_bound(holes_.begin(), holes_.end(), seq) - holes_.begin();
  return (seq - cursor_) - static_cast<uint64_t>(h);
}

void MutexRoom::add_hole(uint64_t seq) {
  if (seq < cursor_) return;
  holes_.insert(std::lower_bound(holes_.begin(), holes_.end(), seq), seq);
  positions_moved_ = true;
}

void MutexRoom::rebuild_line() {
  while (cursor_ < tickets.size() && tickets[cursor_].state != TicketState::kWaiting) cursor_++;
  for (uint64_t seq = cursor_; seq < tickets.size(); ++seq) {
    if (tickets[seq].state != TicketState::kWaiting) holes_.push_back(seq);
  }
}

void MutexRoom::set_config(const RoomConfig& c) {
  if (c.lanes != config.lanes) last_turn_ = {};  // new lanes or weights: the turns start again
  config = c;
  tokens_ = std::min<double>(tokens_, c.admit_per_second);
}

TicketView MutexRoom::view(uint64_t seq) const {
  const MutexTicket& t = tickets[seq];
  TicketView v;
  v.id = t.id;
  v.seq = seq;
  v.state = t.state;
  v.reason = t.reason;
  v.waiting = waiting();
  v.active = in_use;
  v.capacity = config.capacity;
  if (!config.lanes.empty()) {
    v.lane = static_cast<uint8_t>(lane_of(t));
    v.lanes = static_cast<uint8_t>(config.lanes.size());
  }
  if (t.state == TicketState::kWaiting) {
    v.position = config.lanes.empty() ? waiting_before(seq) + 1 : lane_position(seq);
    double rate = rate_.per_second(env_.clock.now_ms());
    if (rate > 0) v.eta_seconds = static_cast<double>(v.position) / rate;
  } else if (holds_slot(t.state)) {
    v.eta_seconds = 0.0;
    v.admitted_at_ms = t.admitted_at_ms;
    v.valid_until_ms = t.state == TicketState::kAllowed
                           ? t.admitted_at_ms + static_cast<int64_t>(allowed_ms(t))
                           : t.last_seen_ms + int64_t{config.session_ttl_seconds} * 1000;
  }
  return v;
}

RoomInfo MutexRoom::info() const {
  RoomInfo i{name_, config, totals};
  i.counters.waiting = waiting();
  i.counters.active = in_use;
  double rate = rate_.per_second(env_.clock.now_ms());
  if (rate > 0) i.counters.admit_rate_per_second = rate;
  return i;
}

void MutexRoom::journal(Change::Kind kind, uint64_t seq, EndReason why) const {
  if (env_.journal == nullptr) return;
  Change c;
  c.kind = kind;
  c.room = name_;
  c.seq = seq;
  c.reason = why;
  c.at_ms = env_.clock.now_ms();
  if (kind == Change::Kind::kJoin) {
    c.lane = tickets[seq].lane;
    c.probation_s = tickets[seq].probation_s;
    c.tag = tickets[seq].tag;
    c.user = tickets[seq].user;
    if (tickets[seq].key_hash) c.key_hash = &*tickets[seq].key_hash;
  }
  env_.journal->record(c);
}

Event MutexRoom::room_event(Event::Kind kind) const {
  Event e;
  e.kind = kind;
  e.room = name_;
  e.waiting = waiting();
  e.active = in_use;
  e.capacity = config.capacity;
  return e;
}

void MutexRoom::ticket_event(uint64_t seq, Event::Kind kind) {
  Event e = room_event(kind);
  e.ticket = tickets[seq].id;
  e.reason = tickets[seq].reason;
  env_.emit(std::move(e));
}

void MutexRoom::expire(uint64_t seq, EndReason why) {
  MutexTicket& t = tickets[seq];
  TicketState was = t.state;
  t.state = TicketState::kExpired;
  t.reason = why;
  journal(Change::Kind::kExpire, seq, why);
  if (why == EndReason::kAllowedUnused) totals.expired_allowed_unused++;
  if (why == EndReason::kSessionIdle) totals.expired_session_idle++;
  if (why == EndReason::kAbandoned) totals.expired_abandoned++;
  env_.expired_total[static_cast<size_t>(why)]++;
  if (holds_slot(was)) {
    in_use--;
  } else {
    add_hole(seq);
  }
  ticket_event(seq, Event::Kind::kExpired);
}

uint64_t MutexRoom::budget(bool rate_capped) {
  uint64_t b = std::numeric_limits<uint64_t>::max();
  if (config.capacity != 0) b = in_use >= config.capacity ? 0 : config.capacity - in_use;
  uint32_t aps = config.admit_per_second;
  if (rate_capped && aps != 0) {
    int64_t now = env_.clock.now_ms();
    tokens_ =
        std::min<double>(aps, tokens_ + static_cast<double>(now - tokens_at_ms_) / 1000.0 * aps);
    tokens_at_ms_ = now;
    b = std::min<uint64_t>(b, static_cast<uint64_t>(std::floor(tokens_)));
  }
  return b;
}

uint64_t MutexRoom::admit_from_cursor(uint64_t budget) {
  const int64_t now = env_.clock.now_ms();
  const int64_t abandon_ms = int64_t{config.heartbeat_timeout_seconds} * 1000;
  uint64_t admitted = 0;
  uint64_t seq = cursor_;
  for (; seq < tickets.size(); ++seq) {
    MutexTicket& t = tickets[seq];
    if (t.state != TicketState::kWaiting) continue;
    if (now - t.last_seen_ms >= abandon_ms) {
      expire(seq, EndReason::kAbandoned);
      continue;
    }
    if (admitted == budget) break;
    t.state = TicketState::kAllowed;
    t.admitted_at_ms = now;
    journal(Change::Kind::kAdmit, seq);
    in_use++;
    holders.push_back(seq);
    ++admitted;
    ticket_event(seq, Event::Kind::kAdmitted);
  }
  if (seq != cursor_) {
    cursor_ = seq;
    holes_.erase(holes_.begin(), std::lower_bound(holes_.begin(), holes_.end(), seq));
    positions_moved_ = true;
  }
  if (admitted != 0) {
    totals.admitted_total += admitted;
    env_.admitted_total += admitted;
    tokens_ = std::max(0.0, tokens_ - static_cast<double>(admitted));
    rate_.record(now, admitted);
  }
  return admitted;
}

uint64_t MutexRoom::clear() {
  Change c;
  std::vector<uint64_t> seqs;
  for (uint64_t seq = cursor_; seq < tickets.size(); ++seq) {
    MutexTicket& t = tickets[seq];
    if (t.state != TicketState::kWaiting) continue;
    t.state = TicketState::kLeft;
    t.reason = EndReason::kCleared;
    add_hole(seq);
    seqs.push_back(seq);
  }
  if (env_.journal != nullptr && !seqs.empty()) {
    c.kind = Change::Kind::kClear;
    c.room = name_;
    c.at_ms = env_.clock.now_ms();
    c.seqs = seqs;
    env_.journal->record(c);
  }
  totals.cleared_total += seqs.size();
  admit_from_cursor(0);
  emit_changes();
  return seqs.size();
}

void MutexRoom::sweep() {
  const int64_t now = env_.clock.now_ms();
  for (uint64_t seq = cursor_; seq < tickets.size(); ++seq) {
    const MutexTicket& t = tickets[seq];
    if (t.state == TicketState::kWaiting &&
        now - t.last_seen_ms >= int64_t{config.heartbeat_timeout_seconds} * 1000) {
      expire(seq, EndReason::kAbandoned);
    }
  }
  std::vector<uint64_t> keep;
  for (uint64_t seq : holders) {
    const MutexTicket& t = tickets[seq];
    if (t.state == TicketState::kAllowed &&
        now - t.admitted_at_ms >= static_cast<int64_t>(allowed_ms(t))) {
      expire(seq, EndReason::kAllowedUnused);
    } else if (t.state == TicketState::kActive &&
               now - t.last_seen_ms >= int64_t{config.session_ttl_seconds} * 1000) {
      expire(seq, EndReason::kSessionIdle);
    }
    if (holds_slot(t.state)) keep.push_back(seq);
  }
  holders = std::move(keep);
}

void MutexRoom::emit_changes() {
  if (positions_moved_) {
    env_.emit(room_event(Event::Kind::kPositionsMoved));
    positions_moved_ = false;
  }
  Event e = room_event(Event::Kind::kCountsChanged);
  if (e.waiting != pub_waiting_ || e.active != pub_active_ || e.capacity != pub_capacity_) {
    pub_waiting_ = e.waiting;
    pub_active_ = e.active;
    pub_capacity_ = e.capacity;
    env_.emit(std::move(e));
  }
}

// The yardstick sweeps on every run: every expiry happens at the first run past its deadline,
// which is what the real engine's deadlines promise.
void MutexRoom::run() {
  sweep();
  bool is_auto = config.admission == AdmissionMode::kAuto;
  admit(is_auto ? budget(true) : 0);
  emit_changes();
}

uint64_t MutexRoom::lane_head(uint32_t lane) const {
  for (uint64_t seq = cursor_; seq < tickets.size(); ++seq) {
    if (tickets[seq].state == TicketState::kWaiting && lane_of(tickets[seq]) == lane) return seq;
  }
  return tickets.size();
}

uint64_t MutexRoom::admit(uint64_t budget) {
  if (config.lanes.empty()) return admit_from_cursor(budget);
  const LaneSchedule schedule(config.lanes);
  const int64_t now = env_.clock.now_ms();
  const int64_t abandon_ms = int64_t{config.heartbeat_timeout_seconds} * 1000;
  uint64_t admitted = 0;
  while (admitted < budget) {
    uint32_t mask = 0;
    for (uint32_t j = 0; j < config.lanes.size(); ++j) {
      for (uint64_t head = lane_head(j); head < tickets.size(); head = lane_head(j)) {
        if (now - tickets[head].last_seen_ms < abandon_ms) {
          mask |= 1u << j;
          break;
        }
        expire(head, EndReason::kAbandoned);
      }
    }
    if (mask == 0) break;
    last_turn_ = schedule.next(last_turn_, mask);
    const uint64_t seq = lane_head(last_turn_.lane);
    MutexTicket& t = tickets[seq];
    t.state = TicketState::kAllowed;
    t.admitted_at_ms = now;
    journal(Change::Kind::kAdmit, seq);
    in_use++;
    holders.push_back(seq);
    add_hole(seq);
    ++admitted;
    ticket_event(seq, Event::Kind::kAdmitted);
  }
  if (admitted != 0) {
    totals.admitted_total += admitted;
    env_.admitted_total += admitted;
    tokens_ = std::max(0.0, tokens_ - static_cast<double>(admitted));
    rate_.record(now, admitted);
  }
  return admitted + admit_from_cursor(0);
}

uint64_t MutexRoom::lane_position(uint64_t seq) const {
  const LaneSchedule schedule(config.lanes);
  std::vector<std::deque<uint64_t>> lanes(config.lanes.size());
  for (uint64_t s = cursor_; s < tickets.size(); ++s) {
    if (tickets[s].state == TicketState::kWaiting) lanes[lane_of(tickets[s])].push_back(s);
  }
  LaneSchedule::Turn turn = last_turn_;
  for (uint64_t n = 1;; ++n) {
    uint32_t mask = 0;
    for (uint32_t j = 0; j < lanes.size(); ++j) mask |= lanes[j].empty() ? 0 : 1u << j;
    if (mask == 0) return 0;
    turn = schedule.next(turn, mask);
    if (lanes[turn.lane].front() == seq) return n;
    lanes[turn.lane].pop_front();
  }
}

}  // namespace anteroom
