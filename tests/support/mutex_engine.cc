#include "tests/support/mutex_engine.h"

#include <algorithm>
#include <deque>
#include <map>
#include <mutex>
#include <string>

#include "engine/spend_ledger.h"
#include "tests/support/mutex_room.h"

namespace anteroom {
namespace {

class MutexEngine final : public Engine {
 public:
  explicit MutexEngine(EngineOptions o)
      : options_(std::move(o)),
        clock_(options_.clock ? options_.clock : std::make_shared<SteadyClock>()),
        codec_(options_.id_key ? IdCodec(*options_.id_key) : IdCodec()),
        env_{*clock_, options_.journal, [this](Event&& e) { emit(std::move(e)); }} {}

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
      it = rooms_.try_emplace(std::string(name), std::string(name), config, env_).first;
    }
    MutexRoom& r = it->second;
    r.set_config(r.config.with_parts_of(config));
    ++config_version_;
    if (options_.journal != nullptr) {
      Change c;
      c.kind = Change::Kind::kRoomPut;
      c.room = name;
      c.config = &config;
      options_.journal->record(c);
    }
    r.run();
    return Status::ok();
  }

  uint64_t config_version() const override {
    std::lock_guard lock(mu_);
    return config_version_;
  }

  void spend(std::string_view key, uint32_t limit, int64_t ttl_ms,
             std::function<void(bool)> then) override {
    then(spent_.spend(key, limit, ttl_ms, clock_->now_ms()));
  }

  Status restore_room(std::string_view name, const RoomConfig& config,
                      const std::vector<RestoredTicket>& tickets) override {
    if (!valid_room_name(name)) return {Code::kInvalidArgument, "bad room name"};
    if (Status st = config.validate(); !st.is_ok()) return st;
    std::lock_guard lock(mu_);
    if (rooms_.find(name) != rooms_.end()) return {Code::kInvalidArgument, "room exists already"};
    MutexRoom r(std::string(name), config, env_);
    const int64_t now = clock_->now_ms();
    for (const RestoredTicket& t : tickets) {
      if (t.seq < r.tickets.size()) return {Code::kInvalidArgument, "tickets out of order"};
      while (r.tickets.size() < t.seq) {  // never recorded: ended, unfindable
        MutexTicket& gap = r.tickets.emplace_back();
        gap.id = codec_.encode(r.tickets.size() - 1, random_tag());
        gap.state = TicketState::kLeft;
      }
      MutexTicket& k = r.tickets.emplace_back();
      k.id = codec_.encode(t.seq, t.tag);
      k.tag = t.tag;
      k.user = t.user;
      k.key_hash = t.key_hash;
      k.state = t.state;
      k.reason = t.reason;
      k.last_seen_ms = now;
      k.admitted_at_ms = t.admitted_at_ms;
      k.lane = t.lane;
      k.probation_s = t.probation_s;
      r.by_id.emplace(std::string(id_view(k.id)), t.seq);
      if (!t.user.empty()) r.by_user[t.user] = t.seq;
      if (holds_slot(t.state)) {
        r.in_use++;
        r.holders.push_back(t.seq);
      }
    }
    r.rebuild_line();
    r.totals.joined_total = r.tickets.size();
    rooms_.emplace(std::string(name), std::move(r));
    ++config_version_;
    return Status::ok();
  }

  LaneSchedule::Turn lanes_turn(std::string_view name) const override {
    std::lock_guard lock(mu_);
    const MutexRoom* r = find(name);
    return r != nullptr ? r->last_turn_ : LaneSchedule::Turn{};
  }

  Status restore_lanes_turn(std::string_view name, const LaneSchedule::Turn& turn) override {
    std::lock_guard lock(mu_);
    MutexRoom* r = find(name);
    if (r == nullptr) return no_room(name);
    r->last_turn_ = turn;
    return Status::ok();
  }

  Result<std::vector<RestoredTicket>> export_tickets(std::string_view name) const override {
    std::lock_guard lock(mu_);
    const MutexRoom* r = find(name);
    if (r == nullptr) return no_room(name);
    std::vector<RestoredTicket> out;
    for (uint64_t seq = 0; seq < r->tickets.size(); ++seq) {
      const MutexTicket& t = r->tickets[seq];
      if (!is_live(t.state)) continue;
      RestoredTicket x;
      x.seq = seq;
      x.tag = t.tag;
      x.user = t.user;
      x.key_hash = t.key_hash;
      x.state = t.state;
      x.reason = t.reason;
      x.admitted_at_ms = holds_slot(t.state) ? t.admitted_at_ms : 0;
      x.lane = t.lane;
      x.probation_s = t.probation_s;
      out.push_back(std::move(x));
    }
    return out;
  }

  Result<RoomInfo> room_info(std::string_view name) const override {
    std::lock_guard lock(mu_);
    const MutexRoom* r = find(name);
    if (r == nullptr) return no_room(name);
    return r->info();
  }

  std::vector<RoomInfo> rooms() const override {
    std::lock_guard lock(mu_);
    std::vector<RoomInfo> out;
    for (const auto& [name, r] : rooms_) out.push_back(r.info());
    return out;
  }

  Status delete_room(std::string_view name) override {
    std::lock_guard lock(mu_);
    auto it = rooms_.find(name);
    if (it == rooms_.end()) return no_room(name);
    rooms_.erase(it);
    ++config_version_;
    if (options_.journal != nullptr) {
      Change c;
      c.kind = Change::Kind::kRoomDelete;
      c.room = name;
      options_.journal->record(c);
    }
    return Status::ok();
  }

  Result<uint64_t> admit(std::string_view name, uint64_t count) override {
    std::lock_guard lock(mu_);
    MutexRoom* r = find(name);
    if (r == nullptr) return no_room(name);
    uint64_t n = r->admit(std::min(count, r->budget(false)));
    r->emit_changes();
    return n;
  }

  Result<uint64_t> clear(std::string_view name) override {
    std::lock_guard lock(mu_);
    MutexRoom* r = find(name);
    if (r == nullptr) return no_room(name);
    return r->clear();
  }

  using Engine::join;
  Result<JoinResult> join(std::string_view name, const JoinRequest& request) override {
    const std::string_view user = request.user;
    if (!user.empty() && !valid_user(user)) return Status(Code::kInvalidArgument, kUserRule);
    std::lock_guard lock(mu_);
    MutexRoom* r = find(name);
    if (r == nullptr) return no_room(name);
    if (!user.empty()) {
      auto it = r->by_user.find(std::string(user));
      if (it != r->by_user.end() && is_live(r->tickets[it->second].state)) {
        return JoinResult{r->view(it->second), r->tickets[it->second].key_hash, false};
      }
    }
    if (r->waiting() >= r->config.waiting_limit()) {
      return Status(Code::kRoomFull,
                    "the waiting line of room '" + std::string(name) + "' is full");
    }
    uint64_t seq = r->tickets.size();
    MutexTicket& t = r->tickets.emplace_back();
    t.tag = random_tag();
    t.id = codec_.encode(seq, t.tag);
    t.user = std::string(user);
    t.key_hash = request.key_hash;
    t.lane = request.lane;
    t.probation_s = std::min(request.probation_s, JoinRequest::kMaxProbation);
    t.last_seen_ms = clock_->now_ms();
    r->by_id.emplace(std::string(id_view(t.id)), seq);
    if (!user.empty()) r->by_user[t.user] = seq;
    r->totals.joined_total++;
    r->journal(Change::Kind::kJoin, seq);
    if (r->config.admission == AdmissionMode::kAuto) {  // a free slot admits at once
      r->admit(r->budget(true));
      r->emit_changes();
    }
    return JoinResult{r->view(seq), t.key_hash, true};
  }

  Result<TicketView> status(std::string_view name, std::string_view ticket) override {
    return lookup(name, ticket, [&](MutexRoom& r, uint64_t seq) {
      MutexTicket& t = r.tickets[seq];
      if (t.state == TicketState::kWaiting) t.last_seen_ms = clock_->now_ms();
      return r.view(seq);
    });
  }

  Result<TicketView> peek(std::string_view name, std::string_view ticket) const override {
    return const_cast<MutexEngine*>(this)->lookup(
        name, ticket, [&](MutexRoom& r, uint64_t seq) { return r.view(seq); });
  }

  Result<TicketDetail> describe(std::string_view name, std::string_view ticket) const override {
    std::lock_guard lock(mu_);
    const MutexRoom* r = find(name);
    if (r == nullptr) return no_room(name);
    auto it = r->by_id.find(std::string(ticket));
    if (it == r->by_id.end()) return Status(Code::kTicketNotFound, "no such ticket in this room");
    const MutexTicket& t = r->tickets[it->second];
    return TicketDetail{r->view(it->second), t.user, false, t.key_hash};
  }

  Status heartbeat(std::string_view name, std::string_view ticket) override {
    return status(name, ticket).status();
  }

  Result<TicketView> leave(std::string_view name, std::string_view ticket) override {
    return lookup(name, ticket, [&](MutexRoom& r, uint64_t seq) {
      MutexTicket& t = r.tickets[seq];
      if (is_live(t.state)) {
        TicketState was = t.state;
        t.state = TicketState::kLeft;
        t.reason = EndReason::kLeft;
        r.journal(Change::Kind::kLeave, seq);
        r.totals.left_total++;
        if (holds_slot(was)) {
          r.in_use--;
          r.run();
        } else {
          r.add_hole(seq);
        }
      }
      return r.view(seq);
    });
  }

  Result<TicketDetail> activate(std::string_view name, std::string_view ticket) override {
    std::lock_guard lock(mu_);
    MutexRoom* r = find(name);
    if (r == nullptr) return no_room(name);
    auto it = r->by_id.find(std::string(ticket));
    if (it == r->by_id.end()) return Status(Code::kTicketNotFound, "no such ticket in this room");
    MutexTicket& t = r->tickets[it->second];
    if (t.state == TicketState::kWaiting)
      return Status(Code::kWrongState, "the ticket is still waiting");
    if (!is_live(t.state)) {
      return Status(Code::kWrongState,
                    std::string("the ticket has ended (") + state_name(t.state) + ")");
    }
    const bool first_use = t.state == TicketState::kAllowed;
    t.state = TicketState::kActive;
    t.last_seen_ms = clock_->now_ms();
    if (first_use) r->journal(Change::Kind::kActivate, it->second);
    return TicketDetail{r->view(it->second), t.user, first_use, t.key_hash};
  }

  void run_lane(size_t /*lane*/) override {  // one lane: every room
    std::lock_guard lock(mu_);
    for (auto& [name, r] : rooms_) r.run();
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
    EngineStats s;
    s.events_dropped = dropped_;
    s.admitted = env_.admitted_total;
    s.expired = env_.expired_total;
    return s;
  }

  const Clock& clock() const override { return *clock_; }

 private:
  static Status no_room(std::string_view name) {
    return {Code::kRoomNotFound, "no room named '" + std::string(name) + "'"};
  }
  MutexRoom* find(std::string_view name) {
    auto it = rooms_.find(name);
    return it == rooms_.end() ? nullptr : &it->second;
  }
  const MutexRoom* find(std::string_view name) const {
    auto it = rooms_.find(name);
    return it == rooms_.end() ? nullptr : &it->second;
  }

  template <typename F>
  Result<TicketView> lookup(std::string_view name, std::string_view ticket, F&& f) {
    std::lock_guard lock(mu_);
    MutexRoom* r = find(name);
    if (r == nullptr) return no_room(name);
    auto it = r->by_id.find(std::string(ticket));
    if (it == r->by_id.end()) return Status(Code::kTicketNotFound, "no such ticket in this room");
    return f(*r, it->second);
  }

  // Caller holds mu_.
  void emit(Event&& e) {
    if (events_.size() >= options_.max_queued_events) {
      ++dropped_;
      return;
    }
    events_.push_back(std::move(e));
  }

  const EngineOptions options_;
  const std::shared_ptr<const Clock> clock_;
  const IdCodec codec_;
  MutexEnv env_;  // guarded by mu_
  mutable std::mutex mu_;
  std::map<std::string, MutexRoom, std::less<>> rooms_;
  uint64_t config_version_ = 1;  // under mu_: moved by every put and delete
  SpendLedger spent_;
  std::deque<Event> events_;
  uint64_t dropped_ = 0;
};

}  // namespace

std::unique_ptr<Engine> make_mutex_engine(EngineOptions options) {
  return std::make_unique<MutexEngine>(std::move(options));
}

}  // namespace anteroom
