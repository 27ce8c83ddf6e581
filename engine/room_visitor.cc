// Room: the visitor side. Lock-free; see room.h and line.h for the rules these rely on.
#include <algorithm>
#include <cstring>
#include <thread>
#include <tuple>

#include "engine/room.h"

namespace anteroom {

Room::Room(std::string name, const RoomConfig& config, const RoomEnv& env, EventSink& sink,
           std::optional<int64_t> epoch_ms)
    : name_(std::move(name)),
      env_(env),
      epoch_ms_(epoch_ms.value_or(env.epoch_ms)),
      sink_(sink),
      users_(&Room::user_of, this) {
  tokens_ = config.admit_per_second;
  tokens_at_ms_ = env.clock.now_ms();
  set_config(config, false);
}

RoomConfig Room::config() const {
  std::lock_guard lock(config_mu_);
  return base_;
}

RoomCounters Room::counters() const {
  RoomCounters c;
  c.waiting = line_.waiting();
  c.active = in_use_.load(std::memory_order_relaxed);
  c.joined_total = line_.claimed();
  c.admitted_total = admitted_total_.load(std::memory_order_relaxed);
  c.left_total = left_total_.load(std::memory_order_relaxed);
  c.expired_allowed_unused = expired_[1].load(std::memory_order_relaxed);
  c.expired_session_idle = expired_[2].load(std::memory_order_relaxed);
  c.expired_abandoned = expired_[3].load(std::memory_order_relaxed);
  c.cleared_total = cleared_total_.load(std::memory_order_relaxed);
  double r = rate_.load(std::memory_order_relaxed);
  if (r > 0) c.admit_rate_per_second = r;
  return c;
}

Result<std::pair<uint64_t, uint64_t>> Room::publish_new(const TicketExtra* extra, uint16_t terms,
                                                        const Tag* given) {
  uint64_t seq = 0;
  if (!claim_in_lanes(&seq, terms)) {
    free_extra(extra);
    return Status(Code::kRoomFull, "room '" + name_ + "' has handed out all its tickets");
  }
  Slot& s = line_.slot_for_publish(seq);
  const Tag tag = given != nullptr ? *given : random_tag();
  std::memcpy(s.tag, tag.data(), sizeof(s.tag));
  s.extra = extra;
  s.last_seen = visitor_tick();
  // Told before it is published, so the join precedes every later change of this ticket
  // in the journal: nobody can change a ticket they cannot see.
  uint64_t durable_at = 0;
  if (env_.journal != nullptr) {  // the hot path without a journal builds no change
    Change c = change(Change::Kind::kJoin, seq);
    c.tag = tag;
    c.lane = terms_lane(terms);
    c.probation_s = terms_probation(terms);
    if (extra != nullptr) {
      c.user = extra->user();
      c.key_hash = extra->key();
    }
    durable_at = env_.journal->record(c);
  }
  // release: the tag, extra and last_seen above are visible to whoever sees WAITING.
  std::atomic_ref<uint8_t>(s.state).store(pack_state(TicketState::kWaiting, EndReason::kNone),
                                          std::memory_order_release);
  note_deadline(deadline_of(s, pack_state(TicketState::kWaiting, EndReason::kNone)));
  return std::pair{seq, durable_at};
}

std::string_view Room::user_of(const void* room, uint64_t seq) {
  const Slot* s = static_cast<const Room*>(room)->line_.find(seq);
  return s != nullptr && s->extra != nullptr ? s->extra->user() : std::string_view{};
}

JoinRules Room::join_rules() const {
  const bool prequeue = event_phase_.load(std::memory_order_relaxed) ==
                        static_cast<uint8_t>(RoomEvent::Phase::kPrequeue);
  return JoinRules{
      ip_joins_per_minute_.load(std::memory_order_relaxed),
      pow_difficulty_.load(std::memory_order_relaxed), trust_user_.load(std::memory_order_relaxed),
      mode() != RoomMode::kReject && might_admit() && line_.waiting() == 0 && !prequeue,
      session_ttl_s_.load(std::memory_order_relaxed)};
}

bool Room::might_admit() const {
  const RoomMode m = mode();
  if (m == RoomMode::kPassthrough) return true;
  if (m == RoomMode::kQueueAll) return false;
  if (admission_.load(std::memory_order_relaxed) != static_cast<uint8_t>(AdmissionMode::kAuto))
    return false;
  uint32_t cap = capacity_.load(std::memory_order_relaxed);
  return cap == 0 || in_use_.load(std::memory_order_relaxed) < cap;
}

Status Room::refuse_if_full() const {
  uint64_t max = max_waiting_.load(std::memory_order_relaxed);
  if (line_.waiting() >= (max == 0 ? RoomConfig::kMaxWaitingCap : max)) {
    return {Code::kRoomFull, "the waiting line of room '" + name_ + "' is full"};
  }
  return Status::ok();
}

Result<JoinResult> Room::join(const JoinRequest& req) { return join_as(req, nullptr); }

Result<JoinResult> Room::join_as(const JoinRequest& req, const Tag* tag) {
  if (mode() == RoomMode::kReject) {
    return Status(Code::kRoomClosed, "room '" + name_ + "' is closed: it takes no one now");
  }
  JoinResult r;
  uint64_t seq = 0;
  const uint16_t terms =
      slot_terms(req.lane, std::min(req.probation_s, JoinRequest::kMaxProbation));
  if (req.user.empty()) {
    if (Status st = refuse_if_full(); !st.is_ok()) return st;
    auto p = publish_new(make_extra({}, req.key_hash), terms, tag);
    if (!p.is_ok()) return p.status();
    std::tie(seq, r.durable_at) = p.value();
    r.created = true;
  } else {
    // The user's stripe stays locked until the ticket is decided: racing joins for one
    // user take turns, so they agree on one ticket.
    UserIndex::Lock user = users_.lock(req.user);
    bool live = false;
    if (user.seq() != UserIndex::kNone) {
      const Slot* s = line_.find(user.seq());
      live = s != nullptr && is_live(state_of(load_state(*s)));
    }
    if (live) {
      seq = user.seq();
    } else {
      if (Status st = refuse_if_full(); !st.is_ok()) return st;
      const TicketExtra* extra = make_extra(req.user, req.key_hash);
      auto p = publish_new(extra, terms, tag);
      if (!p.is_ok()) return p.status();
      std::tie(seq, r.durable_at) = p.value();
      user.set(seq);
      r.created = true;
    }
  }
  // An auto room with a free slot admits the new ticket now: by this thread, or by the one
  // working on the room, before it lets go.
  if (r.created && might_admit()) request_pass();
  const Slot* s = line_.find(seq);
  r.ticket = view_of(seq, *s, load_state(*s));
  if (s->extra != nullptr) r.key_hash = s->extra->key_hash();
  return r;
}

Slot* Room::find_ticket(std::string_view id, uint64_t* seq) const {
  Tag tag{};
  if (!env_.codec.decode(id, seq, &tag)) return nullptr;
  if (*seq >= line_.claimed()) return nullptr;
  Slot* s = line_.find(*seq);
  if (s == nullptr || load_state(*s) == 0) return nullptr;
  // Not constant-time: the tag is 96 random bits, and timing can reveal at most how many
  // leading bytes matched of one slot whose sequence number the attacker chose.
  if (std::memcmp(s->tag, tag.data(), sizeof(s->tag)) != 0) return nullptr;
  return s;
}

TicketView Room::view_of(uint64_t seq, const Slot& slot, uint8_t packed,
                         std::string_view id) const {
  TicketView v;
  if (id.size() == v.id.size()) {
    std::copy(id.begin(), id.end(), v.id.begin());
  } else {
    v.id = env_.codec.encode(seq, Tag{slot.tag[0], slot.tag[1], slot.tag[2]});
  }
  v.seq = seq;
  if (const uint8_t lanes = lane_count_.load(std::memory_order_relaxed); lanes != 0) {
    v.lane = std::min<uint8_t>(terms_lane(slot.terms), lanes - 1);
    v.lanes = lanes;
  }
  v.state = state_of(packed);
  v.reason = reason_of(packed);
  v.waiting = line_.waiting();
  v.active = in_use_.load(std::memory_order_relaxed);
  v.capacity = capacity_.load(std::memory_order_relaxed);
  v.mode = mode();
  if (v.state == TicketState::kWaiting) {
    v.position = position_of(seq, &v.position_hidden);
    if (v.position_hidden) {
      if (seq >= prequeue_seq_.load(std::memory_order_relaxed) &&
          event_phase_.load(std::memory_order_acquire) ==
              static_cast<uint8_t>(RoomEvent::Phase::kPrequeue)) {
        v.opens_at_ms = opens_at_ms_.load(std::memory_order_relaxed);
      }
    } else if (auto w = wait_for(v.position, pace_.load(std::memory_order_relaxed))) {
      v.eta_seconds = w->low;
      v.eta_high_seconds = w->high;
    }
  } else if (holds_slot(v.state)) {
    v.eta_seconds = 0.0;
    v.admitted_at_ms = tick_to_ms(
        std::atomic_ref<const uint32_t>(slot.admitted_at).load(std::memory_order_relaxed));
    if (v.state == TicketState::kAllowed) {
      v.valid_until_ms = v.admitted_at_ms + int64_t{allowed_seconds(slot)} * 1000;
    } else {
      const uint32_t seen =
          std::atomic_ref<const uint32_t>(slot.last_seen).load(std::memory_order_relaxed);
      v.valid_until_ms =
          tick_to_ms(seen) + int64_t{session_ttl_s_.load(std::memory_order_relaxed)} * 1000;
    }
  }
  return v;
}

Result<TicketView> Room::status(std::string_view id, bool heartbeat) {
  uint64_t seq = 0;
  Slot* s = find_ticket(id, &seq);
  if (s == nullptr) return Status(Code::kTicketNotFound, "no such ticket in this room");
  uint8_t packed = load_state(*s);
  // A replica's times come only from records (apply_seen).
  if (heartbeat && !env_.replica && state_of(packed) == TicketState::kWaiting) {
    // Relaxed: last_seen is a lone timestamp; the owner tolerates reading it late. Skip the
    // store when unchanged so polling does not keep dirtying the slot's cache line.
    std::atomic_ref<uint32_t> seen(s->last_seen);
    uint32_t t = visitor_tick();
    if (seen.load(std::memory_order_relaxed) != t) seen.store(t, std::memory_order_relaxed);
  }
  return view_of(seq, *s, packed, id);
}

Result<TicketView> Room::leave(std::string_view id) {
  uint64_t seq = 0;
  Slot* s = find_ticket(id, &seq);
  if (s == nullptr) return Status(Code::kTicketNotFound, "no such ticket in this room");
  return leave_slot(seq, *s, id);
}

TicketView Room::leave_slot(uint64_t seq, Slot& s, std::string_view id) {
  uint8_t packed = load_state(s);
  const uint8_t left = pack_state(TicketState::kLeft, EndReason::kLeft);
  while (is_live(state_of(packed))) {
    TicketState was = state_of(packed);
    if (!cas_state(s, packed, left)) continue;  // `packed` now holds what won; look again
    journal(change(Change::Kind::kLeave, seq));
    left_total_.fetch_add(1, std::memory_order_relaxed);
    {
      std::lock_guard lock(inbox_mu_);
      (was == TicketState::kWaiting ? inbox_holes_ : inbox_freed_).push_back(seq);
    }
    // The owner counts the hole, or hands the freed slot to the next in line, now.
    request_pass();
    packed = load_state(s);
    break;
  }
  return view_of(seq, s, packed, id);
}

std::vector<RestoredTicket> Room::export_live(bool with_ended) const {
  std::vector<RestoredTicket> out;
  const uint64_t end = line_.claimed();
  // Tickets below the cursor that still hold a slot come from the holders' side of the
  // line; scanning from 0 keeps this simple and runs only for snapshots.
  for (uint64_t seq = line_.skip_ended(0); seq < end; seq = line_.skip_ended(seq + 1)) {
    // A join claims its place, is journaled, then published: wait out that moment, so a
    // snapshot that began after the journal took the join also holds the ticket.
    const Slot* s = nullptr;
    uint8_t packed = 0;
    while ((s = line_.find(seq)) == nullptr || (packed = load_state(*s)) == 0) {
      std::this_thread::yield();
    }
    if (!with_ended && !is_live(state_of(packed))) continue;
    RestoredTicket t;
    t.seq = seq;
    t.tag = {s->tag[0], s->tag[1], s->tag[2]};
    if (s->extra != nullptr) {
      t.user = std::string(s->extra->user());
      t.key_hash = s->extra->key_hash();
    }
    t.state = state_of(packed);
    t.reason = reason_of(packed);
    t.lane = terms_lane(s->terms);
    t.probation_s = terms_probation(s->terms);
    if (holds_slot(t.state)) {
      t.admitted_at_ms = tick_to_ms(
          std::atomic_ref<const uint32_t>(s->admitted_at).load(std::memory_order_relaxed));
    }
    out.push_back(std::move(t));
  }
  return out;
}

void Room::fill_extra(const Slot& s, TicketDetail* d) {
  if (s.extra == nullptr) return;
  d->user = std::string(s.extra->user());
  d->key_hash = s.extra->key_hash();
}

Result<TicketDetail> Room::describe(std::string_view id) const {
  uint64_t seq = 0;
  const Slot* s = find_ticket(id, &seq);
  if (s == nullptr) return Status(Code::kTicketNotFound, "no such ticket in this room");
  TicketDetail d;
  d.ticket = view_of(seq, *s, load_state(*s), id);
  fill_extra(*s, &d);
  return d;
}

Result<TicketDetail> Room::activate(std::string_view id) {
  uint64_t seq = 0;
  Slot* s = find_ticket(id, &seq);
  if (s == nullptr) return Status(Code::kTicketNotFound, "no such ticket in this room");
  return activate_slot(seq, *s, id);
}

Result<TicketDetail> Room::activate_slot(uint64_t seq, Slot& s, std::string_view id) {
  std::atomic_ref<uint32_t> seen(s.last_seen);
  uint8_t packed = load_state(s);
  bool first_use = false;
  for (;;) {
    TicketState st = state_of(packed);
    if (st == TicketState::kWaiting)
      return Status(Code::kWrongState, "the ticket is still waiting");
    if (!is_live(st)) {
      return Status(Code::kWrongState,
                    std::string("the ticket has ended (") + state_name(st) + ")");
    }
    // Refresh first: the owner's idle check reads last_seen after seeing ACTIVE (acquire),
    // so a fresh session is never expired on the old timestamp.
    seen.store(visitor_tick(), std::memory_order_relaxed);
    if (st == TicketState::kActive) break;
    const uint8_t active = pack_state(TicketState::kActive, EndReason::kNone);
    if (cas_state(s, packed, active)) {
      journal(change(Change::Kind::kActivate, seq));
      packed = active;
      first_use = true;
      note_deadline(deadline_of(s, active));  // a session may end before its admission would
      break;
    }
  }
  TicketDetail d;
  d.first_use = first_use;
  d.ticket = view_of(seq, s, packed, id);
  fill_extra(s, &d);
  return d;
}

}  // namespace anteroom
