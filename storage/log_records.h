// What the append-only log says: the payloads of docs/log-format.md's records, and how the
// engine's journal changes (engine/journal.h) become records.
//
// Record types (the frame's type byte):
//   1 meta         version, the engine's id key (first record of a log)
//   2 room_put     room, full config: seven varints, then (version 2) a count of numbered
//                  fields and each field's number and value (1: trust_user)
//   3 room_delete  room
//   4 join         room, seq, tag, user, wall-clock ms, then (version 2, optional) flags
//                  and, with flag 1, the 32-byte hash of the client's key
//   5 state        room, seq, new state, reason, wall-clock ms (admit, activate, leave,
//                  expire)
//   6 clear        room, wall-clock ms: every ticket still WAITING at this point left
//                  (version 1 logs; version 2 writes clear_seqs instead)
//   7 snap_begin   magic "ANTEROOM-SNAPSHOT", version: a snapshot's records follow
//   8 snap_end     CRC32C of every byte from snap_begin's header to snap_end's header
//   9 clear_seqs   room, wall-clock ms, count, then each cleared seq as the difference
//                  from the one before (the first from 0)
//  10 draw         (version 3) room, the pre-queue's first seq and end seq, the seed (32
//                  bytes), first rank, count, then each ref as 8 bytes big-endian: a room's
//                  drawn pre-queue from that rank on, in drawn order (a draw of more than
//                  kDrawRefsPerRecord refs takes several records)
// Payloads are varints (unsigned LEB128) and length-prefixed strings, in the order above.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "engine/journal.h"
#include "engine/model.h"
#include "engine/status.h"
#include "storage/log_format.h"

namespace anteroom::logrec {

constexpr uint32_t kVersion = 3;        // what this build writes
constexpr uint32_t kOldestVersion = 1;  // the oldest it reads

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
  std::optional<KeyHash> key_hash;
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
struct ClearSeqs {
  std::string room;
  int64_t wall_ms = 0;
  std::vector<uint64_t> seqs;  // ascending
};
struct Draw {
  std::string room;
  uint64_t first_seq = 0, end_seq = 0;
  std::array<uint8_t, 32> seed{};
  uint64_t first_rank = 0;
  std::vector<uint64_t> refs;
};
constexpr size_t kDrawRefsPerRecord = 1 << 20;  // 8 MiB of refs, within kMaxPayload
struct SnapshotBegin {
  std::string magic = "ANTEROOM-SNAPSHOT";
  uint32_t version = kVersion;
};
struct SnapshotEnd {
  uint32_t crc = 0;
};
using Any = std::variant<Meta, RoomPut, RoomDelete, Join, StateChange, Clear, SnapshotBegin,
                         SnapshotEnd, ClearSeqs, Draw>;

// Appends `r` as one framed record.
void encode(const Any& r, std::string* out);
// Appends a journal change as framed records (a draw may take several); engine-clock times become
// wall-clock ones by adding `wall_minus_engine_ms`. Allocates nothing beyond *out's growth.
void encode_change(const Change& c, int64_t wall_minus_engine_ms, std::string* out);
// The record's content; kInvalidArgument if the payload does not parse.
Result<Any> decode(const logfmt::Record& r);
// Whether a decoded record says something the server could have written: room names and
// users as the API accepts them, a configuration that validates, sequence numbers a room
// can hand out, states with the reasons they go with. kInvalidArgument saying what is
// wrong otherwise. Recovery and `anteroom check-log` both apply it to every record.
Status validate(const Any& r);

}  // namespace anteroom::logrec
