// One room of the yardstick MutexEngine: plain containers, no atomics. Every method runs
// under the engine's one mutex.
#pragma once

#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/clock.h"
#include "engine/journal.h"
#include "engine/lane_schedule.h"
#include "engine/model.h"
#include "engine/rate_window.h"
#include "engine/ticket_id.h"

namespace anteroom {

struct MutexTicket {
  TicketId id{};
  Tag tag{};
  std::string user;
  std::optional<KeyHash> key_hash;
  TicketState state = TicketState::kWaiting;
  EndReason reason = EndReason::kNone;
  int64_t last_seen_ms = 0;
  int64_t admitted_at_ms = 0;
  uint8_t lane = JoinRequest::kLastLane;  // as the join named it
  uint16_t probation_s = 0;
};

// What a room needs from its engine.
struct MutexEnv {
  const Clock& clock;
  Journal* journal;                         // may be null
  std::function<void(Event&&)> emit;        // push hints
  uint64_t admitted_total = 0;              // engine-wide, only grows
  std::array<uint64_t, 6> expired_total{};  // by EndReason
};

class MutexRoom {
 public:
  MutexRoom(std::string name, const RoomConfig& config, MutexEnv& env);

  const std::string& name() const { return name_; }
  RoomConfig config;
  std::deque<MutexTicket> tickets;  // index = sequence number
  std::unordered_map<std::string, uint64_t> by_id;
  std::unordered_map<std::string, uint64_t> by_user;
  uint64_t in_use = 0;
  std::vector<uint64_t> holders;
  RoomCounters totals;
  LaneSchedule::Turn last_turn_;  // with lanes: the last turn taken

  uint64_t waiting_before(uint64_t seq) const;
  uint64_t waiting() const { return waiting_before(tickets.size()); }
  TicketView view(uint64_t seq) const;
  RoomInfo info() const;
  void journal(Change::Kind kind, uint64_t seq, EndReason why = EndReason::kNone) const;

  // Owner work.
  void set_config(const RoomConfig& c);
  void add_hole(uint64_t seq);
  uint64_t budget(bool rate_capped);
  uint64_t admit_from_cursor(uint64_t budget);
  // With lanes: each admission takes the next turn (LaneSchedule::next) of a lane someone
  // waits in, and that lane's first waiting ticket; then passes the head as above.
  uint64_t admit(uint64_t budget);
  uint64_t clear();
  void expire(uint64_t seq, EndReason why);
  void emit_changes();
  void run();
  // After restoring tickets: the cursor and holes that describe them.
  void rebuild_line();

 private:
  void sweep();
  uint32_t lane_of(const MutexTicket& t) const {
    return std::min<uint32_t>(t.lane, static_cast<uint32_t>(config.lanes.size() - 1));
  }
  uint64_t allowed_ms(const MutexTicket& t) const {
    const uint32_t s = t.probation_s != 0 && t.probation_s < config.allowed_ttl_seconds
                           ? t.probation_s
                           : config.allowed_ttl_seconds;
    return uint64_t{s} * 1000;
  }
  // The lane's first WAITING ticket, or none (tickets.size()).
  uint64_t lane_head(uint32_t lane) const;
  // With lanes, a WAITING ticket's position: admissions walked one by one, as admit() would
  // make them, until the ticket's own.
  uint64_t lane_position(uint64_t seq) const;
  Event room_event(Event::Kind kind) const;
  void ticket_event(uint64_t seq, Event::Kind kind);

  const std::string name_;
  MutexEnv& env_;
  uint64_t cursor_ = 0;          // every ticket below is not WAITING
  std::vector<uint64_t> holes_;  // sorted: tickets >= cursor that stopped waiting
  double tokens_ = 0;
  int64_t tokens_at_ms_ = 0;
  RateWindow rate_;
  bool positions_moved_ = false;
  uint64_t pub_waiting_ = ~uint64_t{0}, pub_active_ = ~uint64_t{0};
  uint32_t pub_capacity_ = ~uint32_t{0};
};

}  // namespace anteroom
