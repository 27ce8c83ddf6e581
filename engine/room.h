// One room of the sharded engine: its configuration, its line, its users, and the owner
// state that admission and expiry need.
//
// Thread safety: the "visitor" methods may be called from any thread at any time and never
// wait for a lock. Owner work (admission, expiry, applying visitors' leaves) runs under the
// room's owner lock. A thread that wants owner work done (a join that could be admitted, a
// leave that freed a slot) asks for a pass: it runs the pass itself if the lock is free, or
// leaves the request to the thread holding it, which serves every request before it lets go
// (serve()). So no visitor waits, and no request is lost.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/clock.h"
#include "engine/draw_line.h"
#include "engine/journal.h"
#include "engine/lane_line.h"
#include "engine/lane_schedule.h"
#include "engine/line.h"
#include "engine/model.h"
#include "engine/rate_window.h"
#include "engine/room_env.h"
#include "engine/ticket_extra.h"
#include "engine/ticket_id.h"
#include "engine/user_index.h"
#include "engine/wait_estimate.h"

namespace anteroom {

class Room {
 public:
  // `sink` gets this room's push hints; both it and `env` outlive the room. Slot times count
  // 100 ms ticks from `epoch_ms` (env.epoch_ms unless a replica says otherwise).
  Room(std::string name, const RoomConfig& config, const RoomEnv& env, EventSink& sink,
       std::optional<int64_t> epoch_ms = std::nullopt);
  ~Room();
  Room(const Room&) = delete;
  Room& operator=(const Room&) = delete;

  const std::string& name() const { return name_; }
  unsigned shard() const { return shard_; }
  void set_shard(unsigned s) { shard_ = s; }

  // Visitor side: any thread, no lock waited for.
  Result<JoinResult> join(const JoinRequest& request);
  Result<TicketView> status(std::string_view id, bool heartbeat);
  Result<TicketView> leave(std::string_view id);
  Result<TicketDetail> activate(std::string_view id);
  Result<TicketDetail> describe(std::string_view id) const;
  // The live tickets (WAITING, ALLOWED, ACTIVE) in seq order; `with_ended`: also the ended
  // ones whose memory is still held (their segment has a live ticket), so that a room
  // restored from them answers every ticket as this one does.
  std::vector<RestoredTicket> export_live(bool with_ended = false) const;
  RoomConfig config() const;
  JoinRules join_rules() const;
  RoomCounters counters() const;
  size_t bytes_allocated() const { return line_.bytes_allocated() + users_.bytes_allocated(); }
  // For tests that need to stand between a join's claim and its publish.
  Line& line_for_test() { return line_; }

  // Owner side: each takes the owner lock, waiting for it, and serves requests before it
  // lets go.
  // Sets the configuration and tells the journal (a new room's first configuration is told
  // by the engine before the room can be found, so `journal` is false then).
  void set_config(const RoomConfig& config, bool journal);
  // Fills a new, empty room with recovered tickets (see Engine::restore_room). Not journaled.
  // The next join gets `next_seq`, or the seq after the last ticket if that is higher.
  Status restore(const std::vector<RestoredTicket>& tickets, uint64_t next_seq = 0);
  // Does what is due: moves the event, sweeps for expiries once the earliest deadline of a
  // live ticket has come, admits what auto mode allows, publishes the admission rate, emits
  // hints. Returns when it next has something due (engine ms): the earliest expiry, the next
  // admission token while someone waits, the event's next phase, the next second while the
  // rate or the wait estimate moves; kNoDeadline when nothing can come due until a write (a
  // join, a config, a record) wakes it.
  int64_t run();

  // The shard's scheduling of this room's passes (sharded_engine_impl.h): `scheduled` is true
  // while the room is in the shard's woken list or on its way there; `timed` is the due time
  // of its valid entry in the shard's deadline heap (kNoDeadline: none; guarded by the shard's
  // rooms_mu); `unlisted` once it left the shard (guarded by the shard's wake_mu).
  std::atomic<bool> scheduled{true};
  int64_t timed = kNoDeadline;
  bool unlisted = false;
  uint64_t admit(uint64_t count);
  uint64_t clear();

  // Replica side (replica.h), one thread at a time: each applies one op as of `at_ms`, under
  // the owner lock, and runs the pass it causes before returning.
  Result<JoinResult> apply_join(int64_t at_ms, const Tag& tag, const JoinRequest& request);
  Result<TicketDetail> apply_leave(int64_t at_ms, uint64_t seq);
  Result<TicketDetail> apply_activate(int64_t at_ms, uint64_t seq);
  uint64_t apply_admit(int64_t at_ms, uint64_t count, uint64_t owed = 0);
  void apply_expire(int64_t at_ms, uint64_t seq, EndReason why);
  void apply_seen(int64_t at_ms, const std::vector<uint64_t>& seqs);
  uint64_t apply_clear(int64_t at_ms);
  void apply_config(int64_t at_ms, const RoomConfig& config);
  // The event moves to `phase` as of `at_ms` (the decider proposed it when its time came).
  void apply_event_phase(int64_t at_ms, RoomEvent::Phase phase);
  // The room's last draw, once one happened.
  std::optional<DrawInfo> draw_info() const;
  // After restore(): the draw as it was (live tickets find their ranks again by their refs;
  // the rest are gone).
  void restore_draw(const DrawInfo& draw);
  void apply_publish();  // push hints for what the ops applied so far changed
  // The decider's side (room_schedule.cc): the expiries due at `now_ms` (swept once a live
  // ticket's deadline came), what admit_per_second allows, and when next to ask. Changes only
  // the token bucket and the sweep's schedule, which only the decider reads.
  struct Due {
    std::vector<std::pair<uint64_t, EndReason>> expire;
    uint64_t admit = 0;
    uint64_t owed = 0;                      // of `admit`, owed for no-shows
    std::optional<RoomEvent::Phase> phase;  // the event's next phase, when its time has come
    int64_t next_ms = kNoDeadline;          // unless a record comes first (which may move it)
  };
  Due decide(int64_t now_ms);
  int64_t epoch_ms() const { return epoch_ms_; }
  // The room with every time and total (replica.h's RoomImage, less config and epoch), and
  // its inverse on a new, empty room.
  uint64_t next_seq() const { return line_.claimed(); }
  // With lanes: the last turn taken (a snapshot keeps it), and its inverse on a restore.
  LaneSchedule::Turn lanes_turn() const;
  void restore_lanes_turn(const LaneSchedule::Turn& turn);
  // export_live(true) with every time as it is: what a cluster's snapshot holds.
  std::vector<RestoredTicket> export_exact() const;
  Status restore_exact(uint64_t next_seq, const RoomCounters& totals,
                       const std::vector<RestoredTicket>& tickets);

 private:
  // Ticks from `then` to `now`; negative when a visitor stamped a tick after the owner read
  // the clock, or records of two nodes came with clocks slightly apart.
  static int64_t ticks_since(uint32_t now, uint32_t then) { return int64_t{now} - int64_t{then}; }
  uint32_t tick(int64_t ms) const {
    return static_cast<uint32_t>(std::max<int64_t>(0, ms - epoch_ms_) / 100);
  }
  // What "now" is: the clock, or on a replica the time of the record being applied.
  int64_t now_ms() const {
    return env_.replica ? applying_at_ms_.load(std::memory_order_relaxed) : env_.clock.now_ms();
  }
  uint32_t now_tick() const { return tick(now_ms()); }
  // now_tick() for a visitor's stamp (a join, a heartbeat, a use): the clock read cheaply
  // (Clock::coarse_ms), at most a tick behind.
  uint32_t visitor_tick() const {
    return tick(env_.replica ? applying_at_ms_.load(std::memory_order_relaxed)
                             : env_.clock.coarse_ms());
  }
  int64_t tick_to_ms(uint32_t t) const { return epoch_ms_ + int64_t{t} * 100; }
  // Runs f under the owner lock as of `at_ms` (replica side).
  template <typename F>
  auto applying(int64_t at_ms, F&& f) {
    return with_owner([&] {
      applying_at_ms_.store(at_ms, std::memory_order_relaxed);
      return f();
    });
  }
  Slot* published(uint64_t seq) const;  // the published slot of `seq`, or null
  TicketView leave_slot(uint64_t seq, Slot& s, std::string_view id);
  Result<TicketDetail> activate_slot(uint64_t seq, Slot& s, std::string_view id);
  // How long an admission of `s` holds its slot unused: the room's allowed_ttl_seconds, or
  // the join's probation if shorter.
  uint32_t allowed_seconds(const Slot& s) const;
  // Whether ticket `seq` (in `packed` state) is due to expire for `why` at tick `now`.
  bool due(const Slot& s, uint8_t packed, EndReason why, uint32_t now) const;
  void prune_holders();
  uint64_t journal(const Change& c) const {
    return env_.journal != nullptr ? env_.journal->record(c) : 0;
  }
  Change change(Change::Kind kind, uint64_t seq) const;

  Slot* find_ticket(std::string_view id, uint64_t* seq) const;
  // Claims, journals and publishes a new WAITING ticket; returns its seq and the journal's
  // durability position.
  // Claims, journals and publishes a new WAITING ticket carrying `extra` (owned by the
  // ticket from here on); returns its seq and the journal's durability position, or
  // room_full once the room has handed out every number it may.
  // `tag` is the id's random part when a record gives it; null draws a fresh one.
  Result<std::pair<uint64_t, uint64_t>> publish_new(const TicketExtra* extra, uint16_t terms,
                                                    const Tag* tag = nullptr);
  Result<JoinResult> join_as(const JoinRequest& request, const Tag* tag);
  Status refuse_if_full() const;
  // `id` is the ticket's id when the caller has it (saves encoding it again).
  TicketView view_of(uint64_t seq, const Slot& slot, uint8_t packed,
                     std::string_view id = {}) const;
  static void fill_extra(const Slot& s, TicketDetail* d);
  // UserIndex::NameOf for this room: the user of a live ticket.
  static std::string_view user_of(const void* room, uint64_t seq);
  // Whether an auto room might admit now: worth asking for a pass after a join.
  bool might_admit() const;
  RoomMode mode() const { return static_cast<RoomMode>(mode_.load(std::memory_order_relaxed)); }
  int64_t wall_ms(int64_t engine_ms) const { return engine_ms + env_.wall_minus_engine_ms; }
  // The position of WAITING ticket `seq` (0 with *hidden set: none to tell).
  uint64_t position_of(uint64_t seq, bool* hidden) const;

  // The owner lock and its requests (see the comment at the top).
  void request_pass();
  void serve();
  // The room whose owner lock this thread holds inside with_owner (null outside): a
  // function-local thread_local, constant-initialized, reached without a TLS wrapper.
  static const Room*& owning();
  template <typename F>
  auto with_owner(F&& f) {
    std::unique_lock lock(owner_);
    const Room* outer = std::exchange(owning(), this);
    auto result = f();
    while (wanted_.exchange(0, std::memory_order_acq_rel) != 0) pass();
    owning() = outer;
    lock.unlock();
    if (wanted_.fetch_or(0, std::memory_order_acq_rel) != 0) serve();  // see serve()
    return result;
  }

  // f(seq, slot, packed state) for every WAITING ticket from the cursor on, skipping
  // given-back segments whole; ends at the first segment not allocated yet.
  template <typename F>
  void for_each_waiting(F&& f) {
    const uint64_t end = line_.claimed();
    for (uint64_t seq = line_.cursor(); seq < end; ++seq) {
      Slot* s = line_.find(seq);
      if (s == nullptr) break;
      if (Line::is_sentinel(s)) {
        seq = line_.skip_ended(seq) - 1;
        continue;
      }
      uint8_t packed = load_state(*s);
      if (state_of(packed) == TicketState::kWaiting) f(seq, *s, packed);  // not unpublished (0)
    }
  }

  // Lanes (room_lanes.cc). A join's claim in a room with lanes (or switching to them).
  bool claim_in_lanes(uint64_t* seq, uint16_t terms);
  // The configuration's lanes in effect (owner): made, changed or removed.
  void set_lanes(const std::vector<uint32_t>& weights);
  // Fills new lanes with the WAITING tickets from the cursor up to `end` (owner, no lock).
  void fill_lanes(uint64_t end);
  uint64_t admit_from_lanes(uint64_t budget);  // owner; admit_from_cursor's with lanes
  // The head of lane `j` (owner, lanes_mu_ held): its first WAITING ticket, passing ended
  // ones and expiring the abandoned; false when it has none ready.
  bool lane_head(Lanes& lanes, uint32_t j, uint32_t now, uint64_t* seq, Slot** slot,
                 uint8_t* packed, bool* unpublished);
  // A WAITING ticket's position under the lanes' schedule; 0 if the lanes do not hold it.
  uint64_t lane_position(uint64_t seq, const Slot& s) const;
  void lane_hole(uint64_t seq, const Slot& s);  // owner: it stopped WAITING

  // Owner helpers: the caller holds owner_.
  void pass();  // applies visitors' leaves, admits what auto mode allows, emits hints
  // The scheduled event (room_event.cc).
  // Moves the event to the phase its times call for at engine time `now` (not a replica).
  void advance_event(int64_t now_ms);
  // The phase the event's times call for at engine time `now`.
  RoomEvent::Phase due_phase(int64_t now_ms) const;
  void enter_phase(RoomEvent::Phase phase);  // sets the seqs, draws, journals, re-applies
  void build_draw();
  // The seed of an event's draw (fair_draw.h): derived from its nonce under the engine's key.
  std::array<uint8_t, 32> seed_of(const RoomEvent& e) const;
  // Random mode's pick number `b` of pick `a`: a keyed PRF (HMAC-SHA256 under pick_key), the
  // same on every replica, foreseen by nobody without the key.
  uint64_t pick_number(uint64_t a, uint64_t b) const;
  // Capacity, rate and mode: the room's own, or the event's overrides while it runs.
  void apply_settings();
  // Whether the event holds admission back now (a pre-queue, or its start not applied yet).
  bool event_holds_admission(int64_t now_ms) const;
  // Ticket `seq` stopped WAITING at or above the cursor: a hole for positions (and the draw's).
  void count_hole(uint64_t seq, Slot& slot);
  // Admits one WAITING ticket (the caller checked it is not due to be abandoned).
  bool admit_one(uint64_t seq, Slot& s, uint8_t& packed, uint32_t now);
  uint64_t admit_random(uint64_t budget);
  uint64_t admit_asked(int64_t now_ms, uint64_t count);  // admit() and apply_admit()
  uint64_t admit_from_draw(uint64_t budget);
  bool abandoned(const Slot& s, uint32_t now) const;
  // When live ticket `s` (in `packed` state) is next due to expire, in engine ms.
  int64_t deadline_of(const Slot& s, uint8_t packed) const;
  // A visitor made a deadline at `ms` (a join, a first use): run() sweeps by then.
  void note_deadline(int64_t ms);
  // run()'s answer, after its pass (room_schedule.cc).
  int64_t next_due(int64_t now_ms) const;
  int64_t admission_due(int64_t now_ms) const;  // the next admission token, if one is awaited
  int64_t event_due(int64_t now_ms) const;      // the event's next phase
  void note_freed(const Slot& s);               // a slot freed: its hold, for the wait estimate
  void publish_pace(int64_t now_ms);
  void drain_inbox();
  // Ticket `seq` ended: forget its user's entry, count it for giving memory back.
  void on_ended(uint64_t seq, Slot& slot);
  uint64_t admission_budget(int64_t now_ms, bool rate_capped);
  uint64_t admit_from_cursor(uint64_t budget);
  void count_admitted(uint64_t n);  // the totals, the rate and the tokens of n admissions
  // Expires what is due; returns when to sweep next (scan_deadlines, shared with decide()).
  int64_t sweep();
  template <typename F>
  int64_t scan_deadlines(uint32_t now, int64_t now_ms, F&& on_due);
  void expire(uint64_t seq, Slot& slot, uint8_t& packed, EndReason why);
  void emit_changes();
  void publish_rate(int64_t now_ms);
  Event room_event(Event::Kind kind) const;
  Event ticket_event(Event::Kind kind, uint64_t seq, const Slot& slot, EndReason why) const;

  const std::string name_;
  const RoomEnv& env_;
  const int64_t epoch_ms_;
  // Replica: the time of the record being applied (written by the applier, read under the
  // owner lock). Relaxed: the owner lock orders it.
  std::atomic<int64_t> applying_at_ms_{0};
  EventSink& sink_;
  unsigned shard_ = 0;

  Line line_;
  UserIndex users_;

  // Configuration: written by the owner, read by anyone. Each field stands alone, so relaxed.
  std::atomic<uint32_t> capacity_;
  std::atomic<uint8_t> admission_;
  std::atomic<uint32_t> admit_per_second_;
  std::atomic<uint32_t> allowed_ttl_s_;
  std::atomic<uint32_t> session_ttl_s_;
  std::atomic<uint32_t> heartbeat_timeout_s_;
  std::atomic<uint64_t> max_waiting_;
  std::atomic<bool> trust_user_;
  std::atomic<uint8_t> mode_{0};  // RoomMode in effect (the event's while it runs)
  std::atomic<uint32_t> ip_joins_per_minute_{0};
  std::atomic<uint8_t> pow_difficulty_{0};
  // The configuration as set (without the event's overrides), with the event as it stands.
  // Written by the owner under config_mu_; config() reads it under config_mu_.
  mutable std::mutex config_mu_;
  RoomConfig base_;
  // The event, for readers: phase, the pre-queue's seqs, its start (Unix ms). Relaxed: the
  // phase is stored last with release, and readers that see it read the rest after (acquire).
  std::atomic<uint8_t> event_phase_{0};
  std::atomic<uint64_t> prequeue_seq_{0};
  std::atomic<uint64_t> start_seq_{0};
  std::atomic<int64_t> opens_at_ms_{0};
  // The drawn pre-queue (owned; replaced only by a new event's draw, the old one retired).
  std::atomic<DrawLine*> draw_{nullptr};
  std::atomic<double> pace_{0};  // wait_estimate.h's line_pace, published by the owner
  // The lanes, if any, under lanes_mu_ (position reads share it; joins and the owner take
  // it alone); has_lanes_ tells a join whether to take it (room_lanes.cc says why enough).
  mutable std::shared_mutex lanes_mu_;
  std::unique_ptr<Lanes> lanes_;
  std::atomic<bool> has_lanes_{false};
  bool lanes_held_ = false;  // owner only: it holds lanes_mu_ (count_hole must not take it)
  uint64_t lanes_from_ = 0;  // guarded by lanes_mu_: joins from this seq on add themselves
  std::atomic<uint8_t> lane_count_{0};  // lanes_'s, for views (relaxed: a lone number)

  // Counts read by anyone, each a lone number: relaxed. All but left_total_ are written only
  // by the owner (plain load + store); left_total_ by visitors (fetch_add).
  std::atomic<uint64_t> in_use_{0};
  std::atomic<uint64_t> admitted_total_{0};
  std::atomic<uint64_t> left_total_{0};
  std::atomic<uint64_t> expired_[4] = {};  // indexed by EndReason 1..3
  std::atomic<uint64_t> cleared_total_{0};
  // Admissions per second, published by the owner; relaxed (a lone number).
  std::atomic<double> rate_{0};

  // The owner lock. try_lock on it never fails spuriously (glibc's normal mutex), which
  // serve() relies on.
  std::mutex owner_;
  // Nonzero: a pass is wanted. Only read-modify-writes touch it (see serve() for why).
  std::atomic<uint32_t> wanted_{0};
  // What visitors' leaves tell the owner: WAITING tickets that left (holes in the line) and
  // tickets that left holding a slot. Guarded by inbox_mu_, held for a push or a swap only.
  std::mutex inbox_mu_;
  std::vector<uint64_t> inbox_holes_;
  std::vector<uint64_t> inbox_freed_;

  // Owner state: guarded by owner_.
  std::vector<uint64_t> holders_;  // seqs admitted and maybe still holding a slot
  std::vector<uint64_t> scratch_holes_, scratch_freed_;  // drain_inbox's swap partners
  double tokens_ = 0;                                    // admit_per_second token bucket
  // No-show compensation: admissions that expired unused, owed on top of the rate. Counted
  // alike on every replica (applying the expiry), taken as admissions are applied.
  uint64_t owed_ = 0;
  void take_tokens(uint64_t admitted);
  int64_t tokens_at_ms_ = 0;
  // At or before the earliest deadline of any live ticket (a sweep then computes it again);
  // kNoDeadline when there is none. Set to kSweepNow by whatever may move deadlines sooner
  // on the owner side (a configuration, a restore).
  int64_t sweep_due_ms_ = kNoDeadline;
  static constexpr int64_t kSweepNow = INT64_MIN;
  // The earliest deadline visitors made since run() last looked (a join, a first use):
  // written with a CAS only when sooner, so a busy room's joins mostly just load it.
  std::atomic<int64_t> hinted_due_ms_{kNoDeadline};
  RateWindow rate_window_;
  HoldWindow holds_;
  uint64_t random_picks_ = 0;  // random mode: picks so far (the deterministic draw's counter)
  int64_t rate_published_s_ = -1;
  bool positions_moved_ = false;  // since the last hints were emitted
  struct Published {
    uint64_t waiting = ~uint64_t{0}, active = ~uint64_t{0};
    uint32_t capacity = ~uint32_t{0};
  } published_;
};

}  // namespace anteroom
