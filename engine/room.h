// One room of the sharded engine: its configuration, its line, its users, and the owner
// state that admission and expiry need.
//
// Thread safety: the "visitor" methods may be called from any thread at any time and take
// no lock. The "owner" methods must be called only by the holder of the room's shard
// owner mutex.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/clock.h"
#include "engine/line.h"
#include "engine/model.h"
#include "engine/rate_window.h"
#include "engine/ticket_id.h"
#include "engine/user_index.h"

namespace anteroom {

class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void emit(Event&& e) = 0;
};

// What a visitor's leave did, so the engine can tell the owner.
struct LeaveOutcome {
  enum class Kind { kNone, kHole, kSlotFreed } kind = Kind::kNone;
  uint64_t seq = 0;
  TicketView view;
};

class Room {
 public:
  Room(std::string name, const RoomConfig& config, const IdCodec& codec, const Clock& clock,
       int64_t epoch_ms);

  const std::string& name() const { return name_; }
  unsigned shard() const { return shard_; }
  void set_shard(unsigned s) { shard_ = s; }

  // Visitor side: any thread, lock-free.
  Result<JoinResult> join(std::string_view user);
  Result<TicketView> status(std::string_view id, bool heartbeat);
  Result<LeaveOutcome> leave(std::string_view id);
  Result<TicketDetail> activate(std::string_view id);
  Result<TicketDetail> describe(std::string_view id) const;
  std::vector<RestoredTicket> export_live() const;
  RoomConfig config() const;
  RoomCounters counters() const;
  size_t bytes_allocated() const { return line_.bytes_allocated() + users_.bytes_allocated(); }
  // For tests that need to stand between a join's claim and its publish.
  Line& line_for_test() { return line_; }

  // Owner side.
  void set_config(const RoomConfig& config);
  // Fills a new, empty room with recovered tickets (see Engine::restore_room).
  Status restore(const std::vector<RestoredTicket>& tickets);
  void on_hole(uint64_t seq);  // a WAITING ticket left
  void on_slot_freed();        // a visitor left while holding a slot
  // Sweeps for expiries (when `sweep_interval_ms` has passed since the last sweep), admits
  // what auto mode allows, publishes the admission rate, emits events.
  void run(EventSink& sink, int64_t sweep_interval_ms);
  uint64_t admit(uint64_t count, EventSink& sink);
  uint64_t clear(EventSink& sink);

 private:
  uint32_t tick(int64_t now_ms) const { return static_cast<uint32_t>((now_ms - epoch_ms_) / 100); }
  uint32_t now_tick() const { return tick(clock_.now_ms()); }
  int64_t tick_to_ms(uint32_t t) const { return epoch_ms_ + int64_t{t} * 100; }

  Slot* find_ticket(std::string_view id, uint64_t* seq) const;
  uint64_t publish_new(const UserNode* user);
  // `id` is the ticket's id when the caller has it (saves encoding it again).
  TicketView view_of(uint64_t seq, const Slot& slot, uint8_t packed,
                     std::string_view id = {}) const;

  // Owner helpers.
  uint64_t admission_budget(int64_t now_ms, bool rate_capped);
  uint64_t admit_from_cursor(uint64_t budget, EventSink& sink);
  void sweep(EventSink& sink);
  void expire(uint64_t seq, Slot& slot, uint8_t& packed, EndReason why, EventSink& sink);
  void emit_changes(EventSink& sink);
  void publish_rate(int64_t now_ms);
  Event room_event(Event::Kind kind) const;
  Event ticket_event(Event::Kind kind, uint64_t seq, const Slot& slot, EndReason why) const;

  const std::string name_;
  const IdCodec& codec_;
  const Clock& clock_;
  const int64_t epoch_ms_;
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

  // Counts read by anyone, each a lone number: relaxed. All but left_total_ are written only
  // by the owner (plain load + store); left_total_ by visitors (fetch_add).
  std::atomic<uint64_t> in_use_{0};
  std::atomic<uint64_t> admitted_total_{0};
  std::atomic<uint64_t> left_total_{0};
  std::atomic<uint64_t> expired_[4] = {};  // indexed by EndReason 1..3
  std::atomic<uint64_t> cleared_total_{0};
  // Admissions per second, published by the owner; relaxed (a lone number).
  std::atomic<double> rate_{0};

  // Owner state.
  std::vector<uint64_t> holders_;  // seqs admitted and maybe still holding a slot
  double tokens_ = 0;              // admit_per_second token bucket
  int64_t tokens_at_ms_ = 0;
  int64_t last_sweep_ms_;
  RateWindow rate_window_;
  int64_t rate_published_s_ = -1;
  bool positions_moved_ = false;  // since the last events were emitted
  struct Published {
    uint64_t waiting = ~uint64_t{0}, active = ~uint64_t{0};
    uint32_t capacity = ~uint32_t{0};
  } published_;
};

}  // namespace anteroom
