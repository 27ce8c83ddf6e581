// The bytes of one Op (engine/ops.h): a type, then its fields, as varints and strings
// (engine/codec.h). The log (storage/log_records.cc) and a cluster's records
// (cluster/records.cc) both carry ops in this form:
//    1 join        tag (three varints), user, flags (1: a 32-byte key hash follows, 2: the
//                  seq follows), then what the flags say
//    2 leave       seq              3 activate   seq            4 admit   count, owed
//    5 expire      seq, reason      6 seen       count, each seq as the zigzag difference
//                                                from the one before
//    7 clear       (every WAITING ticket)        8 put_room  configuration (codec.h)
//    9 delete_room                  10 event_phase  phase
//   11 admit_seqs  count, each seq as the difference from the one before (the first from 0)
//   12 clear_seqs  the same
//   13 draw        first seq, end seq, seed (32 bytes), first rank, count, each ref as 8 bytes
//                  big-endian
// Types 1-10 are what clusters wrote before the log shared the codec; a reader refuses a
// type it does not know.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "engine/codec.h"
#include "engine/ops.h"

namespace anteroom::codec {

void put_op(std::string* out, const Op& op);
// The same bytes from views, for a writer that must not allocate (the journal's, as visitors
// join and move on). put_op writes these kinds through them.
void put_join(std::string* out, const Tag& tag, std::string_view user, const KeyHash* key,
              std::optional<uint64_t> seq, uint8_t lane = JoinRequest::kLastLane,
              uint16_t probation_s = 0);
enum class TicketOp { kAdmit, kActivate, kLeave, kExpire };  // kAdmit: an admit_seqs of one
void put_ticket_op(std::string* out, TicketOp kind, uint64_t seq, EndReason reason);
void put_clear_seqs(std::string* out, std::span<const uint64_t> seqs);
// Fields the log's older records wrote in these same bytes (storage/log_records_v3.cc reads
// them here): ascending seqs as differences (admit_seqs' and clear_seqs' fields), and a
// draw's fields.
bool read_ascending(Reader& in, std::vector<uint64_t>* seqs);
bool read_draw_part(Reader& in, op::Draw* d);
// False if the bytes at `in` are not one whole op (its fields may be out of range for a room:
// the reader's own checks say).
bool read_op(Reader& in, Op* op);

}  // namespace anteroom::codec
