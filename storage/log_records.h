// What the append-only log says (the payloads of docs/log-format.md's records), and
// recovery as a pure function from those records to rooms to restore.
//
// Record types (the frame's type byte):
//   1 meta         version, the engine's id key (first record of a log)
//   2 room_put     room, full config
//   3 room_delete  room
//   4 join         room, seq, tag, user, wall-clock ms
//   5 state        room, seq, new state, reason, wall-clock ms
//   6 clear        room, wall-clock ms: every ticket still WAITING at this point left
//   7 snap_begin   magic "ANTEROOM-SNAPSHOT", version: a snapshot's records follow
//   8 snap_end     CRC32C of every byte from snap_begin's header to snap_end's header
// Payloads are varints (unsigned LEB128) and length-prefixed strings, in the order above.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "storage/log_format.h"
#include "engine/model.h"
#include "engine/status.h"

namespace anteroom::logrec {

constexpr uint32_t kVersion = 1;

struct Meta {
  uint32_t version = kVersion;
  std::array<uint64_t, 2> id_key{};
};
struct RoomPut {
  std::string room;
  RoomConfig config;
};
struct RoomDelete {
  std::string room;
};
struct Join {
  std::string room;
  uint64_t seq = 0;
  std::array<uint32_t, 3> tag{};
  std::string user;
  int64_t wall_ms = 0;
};
struct StateChange {
  std::string room;
  uint64_t seq = 0;
  TicketState state = TicketState::kWaiting;
  EndReason reason = EndReason::kNone;
  int64_t wall_ms = 0;
};
struct Clear {
  std::string room;
  int64_t wall_ms = 0;
};
struct SnapshotBegin {
  std::string magic = "ANTEROOM-SNAPSHOT";
  uint32_t version = kVersion;
};
struct SnapshotEnd {
  uint32_t crc = 0;
};
using Any =
    std::variant<Meta, RoomPut, RoomDelete, Join, StateChange, Clear, SnapshotBegin, SnapshotEnd>;

// Appends `r` as one framed record.
void encode(const Any& r, std::string* out);
// The record's content; kInvalidArgument if the payload does not parse.
Result<Any> decode(const logfmt::Record& r);

// Everything the log says, folded: each room's latest config and each ticket's latest
// state. Apply records in log order.
class Recovery {
 public:
  struct Ticket {
    std::array<uint32_t, 3> tag{};
    std::string user;
    TicketState state = TicketState::kWaiting;
    EndReason reason = EndReason::kNone;
    int64_t admitted_wall_ms = 0;
  };
  struct Room {
    RoomConfig config;
    std::map<uint64_t, Ticket> tickets;
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
  std::map<std::string, Room> rooms_;
  std::optional<std::array<uint64_t, 2>> id_key_;
  uint32_t version_ = kVersion;
};

}  // namespace anteroom::logrec
