// The bytes of what a cluster keeps in Redis (docs/cluster.md):
//
// A record (the `r` field of an entry of the stream anteroom:{ROOM}:log): version 2, the
// proposing node's name, its batch number, the proposer's wall clock in ms, and its ops in
// the bytes the log uses too (engine/op_codec.h: types 1-10; a log's forms, which name
// tickets, are refused as damage).
// A snapshot (anteroom:{ROOM}:snap): its version (1-4), the record number and stream id it
// covers, then the room image: configuration, time origin, next seq, counters, and every
// live ticket, and from version 4 every ended one the room still holds (seq difference,
// tag, user, flags and key, state, reason, admitted and seen times, lane, probation).
// Numbers are varints (engine/codec.h); times and differences that can be negative zigzag.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/replica.h"
#include "engine/status.h"

namespace anteroom::cluster {

struct Record {
  std::string origin;  // the node that proposed it
  uint64_t batch = 0;  // that node's number for it: its answers wait for this batch
  int64_t at_ms = 0;   // the proposer's clock: the time every op applies at
  std::vector<Op> ops;
};

std::string encode_record(const Record& r);
// kInvalidArgument if the bytes are not a whole record of this version.
Result<Record> decode_record(std::string_view bytes);

struct Snapshot {
  uint64_t records = 0;   // the record number (the stream's n) it covers
  std::string stream_id;  // that record's stream id
  RoomImage image;
};

std::string encode_snapshot(const Snapshot& s);
Result<Snapshot> decode_snapshot(std::string_view bytes);

}  // namespace anteroom::cluster
