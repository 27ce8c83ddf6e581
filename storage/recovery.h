// Recovery: the log read back into the rooms it describes. A pure fold over records (apply
// them in log order: each a room's op, engine/ops.h, in the form a journal writes), plus
// read_log(), which reads a log file into that fold, cutting a torn tail and refusing damage in the
// middle.
//
// A ticket's states only move forward when records are applied (WAITING < ALLOWED <
// ACTIVE < ended): the journal may tell two near-simultaneous changes of a ticket in either
// order (engine/journal.h), and a snapshot's records may be followed by records it already
// contains; both then rebuild the same state.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/lane_schedule.h"
#include "engine/model.h"
#include "engine/status.h"
#include "storage/log_records.h"

namespace anteroom::logrec {

class Recovery {
 public:
  struct Ticket {
    std::array<uint32_t, 3> tag{};
    std::string user;
    std::optional<KeyHash> key_hash;
    TicketState state = TicketState::kWaiting;
    EndReason reason = EndReason::kNone;
    int64_t admitted_wall_ms = 0;
    uint8_t lane = JoinRequest::kLastLane;
    uint16_t probation_s = 0;
  };
  struct Room {
    RoomConfig config;
    std::map<uint64_t, Ticket> tickets;
    std::optional<DrawInfo> draw;  // the room's last draw
    // A room with lanes: the last turn taken, followed from its admissions in log order
    // (each the next turn of its ticket's lane) or read from a snapshot's lane_turn.
    LaneSchedule::Turn lanes_turn;
  };

  void apply(const Any& r);
  const std::map<std::string, Room>& rooms() const { return rooms_; }
  std::optional<std::array<uint64_t, 2>> id_key() const { return id_key_; }
  uint32_t version() const { return version_; }
  // The room's tickets for Engine::restore_room; wall-clock admission times are turned
  // into the engine's clock with `engine_minus_wall_ms`.
  static std::vector<RestoredTicket> tickets_for_restore(const Room& room,
                                                         int64_t engine_minus_wall_ms);

 private:
  void apply_op(const RoomOp& r);
  // Moves ticket `seq` of `room` to `state` if that is forward (`wall_ms`: when).
  // Returns whether it moved.
  static bool move(Room& room, uint64_t seq, TicketState state, EndReason reason, int64_t wall_ms);

  std::map<std::string, Room> rooms_;
  std::optional<std::array<uint64_t, 2>> id_key_;
  uint32_t version_ = kVersion;
};

// One pass over a log's bytes, checking every record the way recovery does (framing,
// payload, validate(), snapshot checksums, version), folding each into `fold` (may be null)
// until the first bad one. Recovery and `anteroom check-log` share it, so the tool says
// "ok" exactly when start-up would accept the log.
struct LogScan {
  uint64_t records = 0;  // whole records read before the scan stopped
  logfmt::Reader::End end = logfmt::Reader::End::kClean;
  std::string problem;      // for any end but kClean
  uint64_t cut = 0;         // cutting the file here leaves only what was accepted
  bool cut_repairs = true;  // false: the log is of a version this build cannot read
};
// `progress`, if set, is told every 4,096 records how far the scan got (bytes, records).
using ScanProgress = std::function<void(uint64_t bytes, uint64_t records)>;
LogScan scan_log(std::string_view data, Recovery* fold, const ScanProgress& progress = nullptr);

// Reads the log at `path` (absent: empty) into *out. A torn tail is cut off the file and
// described in *warnings; damage in the middle, a snapshot whose checksum does not match or
// a version this build cannot read is an error naming the file and offset, and telling the
// operator to run `anteroom check-log --fix DIR` (`dir`).
Status read_log(const std::string& path, const std::string& dir, Recovery* out,
                std::string* warnings);

}  // namespace anteroom::logrec
