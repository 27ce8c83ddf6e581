// What the append-only log says: the payloads of docs/log-format.md's records, and how the
// engine's journal changes (engine/journal.h) become records.
//
// Since format version 4 a room's change is one record of type 11, the room, the wall-clock
// time and one op of the record vocabulary a cluster appends too (engine/ops.h), in the same
// bytes (engine/op_codec.h). Logs of versions 1 to 3 wrote one record type per kind of change;
// they are read into the same ops (log_records_v3.cc), so recovery has one input.
//
// Record types (the frame's type byte):
//   1 meta         version, the engine's id key (first record of a log)
//   7 snap_begin   magic "ANTEROOM-SNAPSHOT", version: a snapshot's records follow
//   8 snap_end     CRC32C of every byte from snap_begin's header to snap_end's header
//  11 op           (version 4) room, wall-clock ms, one op: join (with its seq), admit_seqs,
//                  activate, leave, expire, clear_seqs, put_room, delete_room, draw
// Read only, from logs of versions 1 to 3 (written no more):
//   2 room_put     room, full config: seven varints, then (version 2) a count of numbered
//                  fields and each field's number and value
//   3 room_delete  room
//   4 join         room, seq, tag, user, wall-clock ms, then (version 2, optional) flags
//                  and, with flag 1, the 32-byte hash of the client's key
//   5 state        room, seq, new state, reason, wall-clock ms (admit, activate, leave,
//                  expire)
//   6 clear        room, wall-clock ms: every ticket still WAITING at this point left
//   9 clear_seqs   room, wall-clock ms, count, then each cleared seq as the difference
//                  from the one before (the first from 0)
//  10 draw         (version 3) room, the pre-queue's first seq and end seq, the seed (32
//                  bytes), first rank, count, then each ref as 8 bytes big-endian
// Payloads are varints (unsigned LEB128) and length-prefixed strings, in the order above.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "engine/journal.h"
#include "engine/ops.h"
#include "engine/status.h"
#include "storage/log_format.h"

namespace anteroom::logrec {

constexpr uint32_t kVersion = 4;        // what this build writes
constexpr uint32_t kOldestVersion = 1;  // the oldest it reads

struct Meta {
  uint32_t version = kVersion;
  std::array<uint64_t, 2> id_key{};
};
// One change of one room: what every record of a room says.
struct RoomOp {
  std::string room;
  int64_t wall_ms = 0;
  Op op;
};
constexpr size_t kDrawRefsPerRecord = 1 << 20;  // 8 MiB of refs, within kMaxPayload
struct SnapshotBegin {
  std::string magic = "ANTEROOM-SNAPSHOT";
  uint32_t version = kVersion;
};
struct SnapshotEnd {
  uint32_t crc = 0;
};
using Any = std::variant<Meta, RoomOp, SnapshotBegin, SnapshotEnd>;

// Appends `r` as one framed record.
void encode(const Any& r, std::string* out);
// Appends a journal change as framed records (a draw may take several); engine-clock times become
// wall-clock ones by adding `wall_minus_engine_ms`. Allocates nothing beyond *out's growth for
// the changes visitors cause (join, admit, activate, leave, expire).
void encode_change(const Change& c, int64_t wall_minus_engine_ms, std::string* out);
// The record's content; kInvalidArgument if the payload does not parse.
Result<Any> decode(const logfmt::Record& r);
// The older record types (2-6, 9, 10) as ops; nullopt for a type it does not know or a payload
// that does not parse (log_records_v3.cc).
std::optional<Any> decode_v3(const logfmt::Record& r);
// Whether a decoded record says something the server could have written: room names and
// users as the API accepts them, a configuration that validates, sequence numbers a room
// can hand out, reasons that go with their change, and only the ops a log holds (never a
// cluster's requests: an admit by count, seen, event_phase). kInvalidArgument saying what is
// wrong otherwise. Recovery and `anteroom check-log` both apply it to every record.
Status validate(const Any& r);

}  // namespace anteroom::logrec
