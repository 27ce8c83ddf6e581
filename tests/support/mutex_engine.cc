#include "tests/support/mutex_engine.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

#include "engine/rate_window.h"
#include "engine/ticket_id.h"

namespace anteroom {
namespace {

struct Ticket {
  TicketId id{};
  std::string user;
  TicketState state = TicketState::kWaiting;
  EndReason reason = EndReason::kNone;
  int64_t last_seen_ms = 0;
  int64_t admitted_at_ms = 0;
};

struct MRoom {
  RoomConfig config;
  std::deque<Ticket> tickets;  // index = sequence number
  std::unordered_map<std::string, uint64_t> by_id;
  std::unordered_map<std::string, uint64_t> by_user;
  uint64_t cursor = 0;          // every ticket below is not WAITING
  std::vector<uint64_t> holes;  // sorted: tickets >= cursor that stopped waiting
  uint64_t in_use = 0;
  std::vector<uint64_t> holders;
  RoomCounters totals;
  double tokens = 0;
  int64_t tokens_at_ms = 0;
  int64_t last_sweep_ms = 0;
  RateWindow rate;
  bool positions_moved = false;
  uint64_t pub_waiting = ~uint64_t{0}, pub_active = ~uint64_t{0};
  uint32_t pub_capacity = ~uint32_t{0};

  uint64_t waiting_before(uint64_t seq) const {
    if (seq <= cursor) return 0;
    auto h = std::lower_bound(holes.begin(), holes.end(), seq) - holes.begin();
    return (seq - cursor) - static_cast<uint64_t>(h);
  }
  uint64_t waiting() const { return waiting_before(tickets.size()); }
  void add_hole(uint64_t seq) {
    if (seq < cursor) return;
    holes.insert(std::lower_bound(holes.begin(), holes.end(), seq), seq);
    positions_moved = true;
  }
};

class MutexEngine final : public Engine {
 public:
  explicit MutexEngine(EngineOptions o)
      : options_(std::move(o)),
        clock_(options_.clock ? options_.clock : std::make_shared<SteadyClock>()),
        codec_(options_.id_key ? IdCodec(*options_.id_key) : IdCodec()) {}

  Status put_room(std::string_view name, const RoomConfig& config) override {
    if (!valid_room_name(name)) {
      return {Code::kInvalidArgument, "room names are 1-64 characters of A-Z a-z 0-9 _ -"};
    }
    if (Status st = config.validate(); !st.is_ok()) return st;
    std::lock_guard lock(mu_);
    auto it = rooms_.find(name);
    if (it == rooms_.end()) {
      if (rooms_.size() >= options_.max_rooms) {
        return {Code::kUnavailable, "the engine holds its maximum number of rooms"};
      }
      MRoom& r = rooms_[std::string(name)];
      r.tokens = config.admit_per_second;
      r.tokens_at_ms = r.last_sweep_ms = clock_->now_ms();
      it = rooms_.find(name);
    }
    it->second.config = config;
    it->second.tokens = std::min<double>(it->second.tokens, config.admit_per_second);
    run_room(it->first, it->second);
    return Status::ok();
  }

  Status restore_room(std::string_view name, const RoomConfig& config,
                      const std::vector<RestoredTicket>& tickets) override {
    if (!valid_room_name(name)) return {Code::kInvalidArgument, "bad room name"};
    if (Status st = config.validate(); !st.is_ok()) return st;
    std::lock_guard lock(mu_);
    if (rooms_.find(name) != rooms_.end()) return {Code::kInvalidArgument, "room exists already"};
    MRoom r;
    r.config = config;
    r.tokens = config.admit_per_second;
    r.tokens_at_ms = r.last_sweep_ms = clock_->now_ms();
    const int64_t now = clock_->now_ms();
    for (const RestoredTicket& t : tickets) {
      if (t.seq < r.tickets.size()) return {Code::kInvalidArgument, "tickets out of order"};
      while (r.tickets.size() < t.seq) {  // never recorded: ended, unfindable
        Ticket& gap = r.tickets.emplace_back();
        gap.id = codec_.encode(r.tickets.size() - 1, random_tag());
        gap.state = TicketState::kLeft;
      }
      Ticket& k = r.tickets.emplace_back();
      k.id = codec_.encode(t.seq, t.tag);
      k.user = t.user;
      k.state = t.state;
      k.reason = t.reason;
      k.last_seen_ms = now;
      k.admitted_at_ms = t.admitted_at_ms;
      r.by_id.emplace(std::string(id_view(k.id)), t.seq);
      if (!t.user.empty()) r.by_user[t.user] = t.seq;
      if (holds_slot(t.state)) {
        r.in_use++;
        r.holders.push_back(t.seq);
      }
    }
    while (r.cursor < r.tickets.size() && r.tickets[r.cursor].state != TicketState::kWaiting)
      r.cursor++;
    for (uint64_t seq = r.cursor; seq < r.tickets.size(); ++seq) {
      if (r.tickets[seq].state != TicketState::kWaiting) r.holes.push_back(seq);
    }
    r.totals.joined_total = r.tickets.size();
    rooms_.emplace(std::string(name), std::move(r));
    return Status::ok();
  }

  Result<std::vector<RestoredTicket>> export_tickets(std::string_view name) const override {
    std::lock_guard lock(mu_);
    const MRoom* r = find(name);
    if (r == nullptr) return no_room(name);
    std::vector<RestoredTicket> out;
    for (uint64_t seq = 0; seq < r->tickets.size(); ++seq) {
      const Ticket& t = r->tickets[seq];
      if (!is_live(t.state)) continue;
      RestoredTicket x;
      uint64_t decoded = 0;
      Tag tag{};
      codec_.decode(id_view(t.id), &decoded, &tag);
      x.seq = seq;
      x.tag = tag;
      x.user = t.user;
      x.state = t.state;
      x.reason = t.reason;
      x.admitted_at_ms = holds_slot(t.state) ? t.admitted_at_ms : 0;
      out.push_back(std::move(x));
    }
    return out;
  }

  Result<RoomInfo> room_info(std::string_view name) const override {
    std::lock_guard lock(mu_);
    const MRoom* r = find(name);
    if (r == nullptr) return no_room(name);
    return info(std::string(name), *r);
  }

  std::vector<RoomInfo> rooms() const override {
    std::lock_guard lock(mu_);
    std::vector<RoomInfo> out;
    for (const auto& [name, r] : rooms_) out.push_back(info(name, r));
    return out;
  }

  Status delete_room(std::string_view name) override {
    std::lock_guard lock(mu_);
    auto it = rooms_.find(name);
    if (it == rooms_.end()) return no_room(name);
    rooms_.erase(it);
    return Status::ok();
  }

  Result<uint64_t> admit(std::string_view name, uint64_t count) override {
    std::lock_guard lock(mu_);
    MRoom* r = find(name);
    if (r == nullptr) return no_room(name);
    uint64_t n = admit_from_cursor(name, *r, std::min(count, budget(*r, false)));
    emit_changes(name, *r);
    return n;
  }

  Result<uint64_t> clear(std::string_view name) override {
    std::lock_guard lock(mu_);
    MRoom* r = find(name);
    if (r == nullptr) return no_room(name);
    uint64_t n = 0;
    for (uint64_t seq = r->cursor; seq < r->tickets.size(); ++seq) {
      Ticket& t = r->tickets[seq];
      if (t.state != TicketState::kWaiting) continue;
      t.state = TicketState::kLeft;
      t.reason = EndReason::kCleared;
      r->add_hole(seq);
      ++n;
    }
    r->totals.cleared_total += n;
    admit_from_cursor(name, *r, 0);
    emit_changes(name, *r);
    return n;
  }

  Result<JoinResult> join(std::string_view name, std::string_view user) override {
    if (!user.empty() && !valid_user(user)) {
      return Status(Code::kInvalidArgument, "user must be 1-128 bytes with no control characters");
    }
    std::lock_guard lock(mu_);
    MRoom* r = find(name);
    if (r == nullptr) return no_room(name);
    if (!user.empty()) {
      auto it = r->by_user.find(std::string(user));
      if (it != r->by_user.end() && is_live(r->tickets[it->second].state)) {
        return JoinResult{view(*r, it->second), false};
      }
    }
    if (r->config.max_waiting != 0 && r->waiting() >= r->config.max_waiting) {
      return Status(Code::kRoomFull,
                    "the waiting line of room '" + std::string(name) + "' is full");
    }
    uint64_t seq = r->tickets.size();
    Ticket& t = r->tickets.emplace_back();
    t.id = codec_.encode(seq, random_tag());
    t.user = std::string(user);
    t.last_seen_ms = clock_->now_ms();
    r->by_id.emplace(std::string(id_view(t.id)), seq);
    if (!user.empty()) r->by_user[t.user] = seq;
    r->totals.joined_total++;
    return JoinResult{view(*r, seq), true};
  }

  Result<TicketView> status(std::string_view name, std::string_view ticket) override {
    return lookup(name, ticket, [&](MRoom& r, uint64_t seq) {
      Ticket& t = r.tickets[seq];
      if (t.state == TicketState::kWaiting) t.last_seen_ms = clock_->now_ms();
      return view(r, seq);
    });
  }

  Result<TicketView> peek(std::string_view name, std::string_view ticket) const override {
    return const_cast<MutexEngine*>(this)->lookup(
        name, ticket, [&](MRoom& r, uint64_t seq) { return view(r, seq); });
  }

  Result<TicketDetail> describe(std::string_view name, std::string_view ticket) const override {
    std::lock_guard lock(mu_);
    const MRoom* r = find(name);
    if (r == nullptr) return no_room(name);
    auto it = r->by_id.find(std::string(ticket));
    if (it == r->by_id.end()) return Status(Code::kTicketNotFound, "no such ticket in this room");
    return TicketDetail{view(*r, it->second), r->tickets[it->second].user};
  }

  Status heartbeat(std::string_view name, std::string_view ticket) override {
    return status(name, ticket).status();
  }

  Result<TicketView> leave(std::string_view name, std::string_view ticket) override {
    return lookup(name, ticket, [&](MRoom& r, uint64_t seq) {
      Ticket& t = r.tickets[seq];
      if (is_live(t.state)) {
        TicketState was = t.state;
        t.state = TicketState::kLeft;
        t.reason = EndReason::kLeft;
        r.totals.left_total++;
        if (holds_slot(was)) {
          r.in_use--;
          run_room(name, r);
        } else {
          r.add_hole(seq);
        }
      }
      return view(r, seq);
    });
  }

  Result<TicketDetail> activate(std::string_view name, std::string_view ticket) override {
    std::lock_guard lock(mu_);
    MRoom* r = find(name);
    if (r == nullptr) return no_room(name);
    auto it = r->by_id.find(std::string(ticket));
    if (it == r->by_id.end()) return Status(Code::kTicketNotFound, "no such ticket in this room");
    Ticket& t = r->tickets[it->second];
    if (t.state == TicketState::kWaiting)
      return Status(Code::kWrongState, "the ticket is still waiting");
    if (!is_live(t.state)) {
      return Status(Code::kWrongState,
                    std::string("the ticket has ended (") + state_name(t.state) + ")");
    }
    const bool first_use = t.state == TicketState::kAllowed;
    t.state = TicketState::kActive;
    t.last_seen_ms = clock_->now_ms();
    return TicketDetail{view(*r, it->second), t.user, first_use};
  }

  unsigned shard_count() const override { return 1; }
  unsigned shard_of(std::string_view) const override { return 0; }

  void run_shard(unsigned) override {
    std::lock_guard lock(mu_);
    for (auto& [name, r] : rooms_) run_room(name, r);
  }

  size_t poll_events(std::vector<Event>& out, size_t max) override {
    std::lock_guard lock(mu_);
    size_t n = std::min(max, events_.size());
    for (size_t i = 0; i < n; ++i) {
      out.push_back(std::move(events_.front()));
      events_.pop_front();
    }
    return n;
  }

  EngineStats stats() const override {
    std::lock_guard lock(mu_);
    return EngineStats{dropped_, 0};
  }

 private:
  static Status no_room(std::string_view name) {
    return {Code::kRoomNotFound, "no room named '" + std::string(name) + "'"};
  }
  MRoom* find(std::string_view name) {
    auto it = rooms_.find(name);
    return it == rooms_.end() ? nullptr : &it->second;
  }
  const MRoom* find(std::string_view name) const {
    auto it = rooms_.find(name);
    return it == rooms_.end() ? nullptr : &it->second;
  }

  template <typename F>
  Result<TicketView> lookup(std::string_view name, std::string_view ticket, F&& f) {
    std::lock_guard lock(mu_);
    MRoom* r = find(name);
    if (r == nullptr) return no_room(name);
    auto it = r->by_id.find(std::string(ticket));
    if (it == r->by_id.end()) return Status(Code::kTicketNotFound, "no such ticket in this room");
    return f(*r, it->second);
  }

  RoomInfo info(std::string name, const MRoom& r) const {
    RoomInfo i{std::move(name), r.config, r.totals};
    i.counters.waiting = r.waiting();
    i.counters.active = r.in_use;
    double rate = r.rate.per_second(clock_->now_ms());
    if (rate > 0) i.counters.admit_rate_per_second = rate;
    return i;
  }

  TicketView view(const MRoom& r, uint64_t seq) const {
    const Ticket& t = r.tickets[seq];
    TicketView v;
    v.id = t.id;
    v.seq = seq;
    v.state = t.state;
    v.reason = t.reason;
    v.waiting = r.waiting();
    v.active = r.in_use;
    v.capacity = r.config.capacity;
    if (t.state == TicketState::kWaiting) {
      v.position = r.waiting_before(seq) + 1;
      double rate = r.rate.per_second(clock_->now_ms());
      if (rate > 0) v.eta_seconds = static_cast<double>(v.position) / rate;
    } else if (holds_slot(t.state)) {
      v.eta_seconds = 0.0;
      v.admitted_at_ms = t.admitted_at_ms;
    }
    return v;
  }

  void emit(Event&& e) {
    if (events_.size() >= options_.max_queued_events) {
      ++dropped_;
      return;
    }
    events_.push_back(std::move(e));
  }
  Event room_event(std::string_view name, const MRoom& r, Event::Kind kind) const {
    Event e;
    e.kind = kind;
    e.room = std::string(name);
    e.waiting = r.waiting();
    e.active = r.in_use;
    e.capacity = r.config.capacity;
    return e;
  }
  void ticket_event(std::string_view name, const MRoom& r, uint64_t seq, Event::Kind kind) {
    Event e = room_event(name, r, kind);
    e.ticket = r.tickets[seq].id;
    e.reason = r.tickets[seq].reason;
    emit(std::move(e));
  }
  void expire(std::string_view name, MRoom& r, uint64_t seq, EndReason why) {
    Ticket& t = r.tickets[seq];
    TicketState was = t.state;
    t.state = TicketState::kExpired;
    t.reason = why;
    if (why == EndReason::kAllowedUnused) r.totals.expired_allowed_unused++;
    if (why == EndReason::kSessionIdle) r.totals.expired_session_idle++;
    if (why == EndReason::kAbandoned) r.totals.expired_abandoned++;
    if (holds_slot(was)) {
      r.in_use--;
    } else {
      r.add_hole(seq);
    }
    ticket_event(name, r, seq, Event::Kind::kExpired);
  }

  uint64_t budget(MRoom& r, bool rate_capped) {
    uint64_t b = std::numeric_limits<uint64_t>::max();
    if (r.config.capacity != 0)
      b = r.in_use >= r.config.capacity ? 0 : r.config.capacity - r.in_use;
    uint32_t aps = r.config.admit_per_second;
    if (rate_capped && aps != 0) {
      int64_t now = clock_->now_ms();
      r.tokens = std::min<double>(
          aps, r.tokens + static_cast<double>(now - r.tokens_at_ms) / 1000.0 * aps);
      r.tokens_at_ms = now;
      b = std::min<uint64_t>(b, static_cast<uint64_t>(std::floor(r.tokens)));
    }
    return b;
  }

  uint64_t admit_from_cursor(std::string_view name, MRoom& r, uint64_t budget) {
    const int64_t now = clock_->now_ms();
    const int64_t abandon_ms = int64_t{r.config.heartbeat_timeout_seconds} * 1000;
    uint64_t admitted = 0;
    uint64_t seq = r.cursor;
    for (; seq < r.tickets.size(); ++seq) {
      Ticket& t = r.tickets[seq];
      if (t.state != TicketState::kWaiting) continue;
      if (now - t.last_seen_ms >= abandon_ms) {
        expire(name, r, seq, EndReason::kAbandoned);
        continue;
      }
      if (admitted == budget) break;
      t.state = TicketState::kAllowed;
      t.admitted_at_ms = now;
      r.in_use++;
      r.holders.push_back(seq);
      ++admitted;
      ticket_event(name, r, seq, Event::Kind::kAdmitted);
    }
    if (seq != r.cursor) {
      r.cursor = seq;
      r.holes.erase(r.holes.begin(), std::lower_bound(r.holes.begin(), r.holes.end(), seq));
      r.positions_moved = true;
    }
    if (admitted != 0) {
      r.totals.admitted_total += admitted;
      r.tokens = std::max(0.0, r.tokens - static_cast<double>(admitted));
      r.rate.record(now, admitted);
    }
    return admitted;
  }

  void sweep(std::string_view name, MRoom& r) {
    const int64_t now = clock_->now_ms();
    for (uint64_t seq = r.cursor; seq < r.tickets.size(); ++seq) {
      const Ticket& t = r.tickets[seq];
      if (t.state == TicketState::kWaiting &&
          now - t.last_seen_ms >= int64_t{r.config.heartbeat_timeout_seconds} * 1000) {
        expire(name, r, seq, EndReason::kAbandoned);
      }
    }
    std::vector<uint64_t> keep;
    for (uint64_t seq : r.holders) {
      const Ticket& t = r.tickets[seq];
      if (t.state == TicketState::kAllowed &&
          now - t.admitted_at_ms >= int64_t{r.config.allowed_ttl_seconds} * 1000) {
        expire(name, r, seq, EndReason::kAllowedUnused);
      } else if (t.state == TicketState::kActive &&
                 now - t.last_seen_ms >= int64_t{r.config.session_ttl_seconds} * 1000) {
        expire(name, r, seq, EndReason::kSessionIdle);
      }
      if (holds_slot(t.state)) keep.push_back(seq);
    }
    r.holders = std::move(keep);
  }

  void emit_changes(std::string_view name, MRoom& r) {
    if (r.positions_moved) {
      emit(room_event(name, r, Event::Kind::kPositionsMoved));
      r.positions_moved = false;
    }
    Event e = room_event(name, r, Event::Kind::kCountsChanged);
    if (e.waiting != r.pub_waiting || e.active != r.pub_active || e.capacity != r.pub_capacity) {
      r.pub_waiting = e.waiting;
      r.pub_active = e.active;
      r.pub_capacity = e.capacity;
      emit(std::move(e));
    }
  }

  void run_room(std::string_view name, MRoom& r) {
    int64_t now = clock_->now_ms();
    if (now - r.last_sweep_ms >= options_.sweep_interval_ms) {
      sweep(name, r);
      r.last_sweep_ms = now;
    }
    bool is_auto = r.config.admission == AdmissionMode::kAuto;
    admit_from_cursor(name, r, is_auto ? budget(r, true) : 0);
    emit_changes(name, r);
  }

  const EngineOptions options_;
  const std::shared_ptr<const Clock> clock_;
  const IdCodec codec_;
  mutable std::mutex mu_;
  std::map<std::string, MRoom, std::less<>> rooms_;
  std::deque<Event> events_;
  uint64_t dropped_ = 0;
};

}  // namespace

std::unique_ptr<Engine> make_mutex_engine(EngineOptions options) {
  return std::make_unique<MutexEngine>(std::move(options));
}

}  // namespace anteroom
