// The one record vocabulary: every change of a room is an Op, applied to the room at the
// record's time. The log on disk (storage/log_records.h) and a cluster's Redis Stream
// (cluster/records.h) both hold these, written by one codec (engine/op_codec.h).
//
// Two kinds of source write them. A cluster's nodes propose requests whose outcome every
// replica works out alike as it applies them (a Join takes the next seq, an Admit of `count`
// takes the next in line, a Clear empties the line: replica.h). A single process's journal
// (engine/journal.h) tells what it already decided, naming the tickets: a Join with its seq,
// an Admit or a Clear of these seqs, a Draw. A field says which form a record is in; a
// cluster never appends the second form, and a log never holds the first (logrec::validate).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "engine/model.h"
#include "engine/ticket_id.h"

namespace anteroom {

namespace op {
struct Join {
  Tag tag{};  // the random part of the new ticket's id, drawn by the proposer
  std::string user;
  std::optional<KeyHash> key_hash;
  std::optional<uint64_t> seq;            // a log's: the seq it got (a cluster's: unset, the next)
  uint8_t lane = JoinRequest::kLastLane;  // JoinRequest's
  uint16_t probation_s = 0;               // JoinRequest's
};
struct Leave {
  uint64_t seq = 0;
};
struct Activate {  // first use at the protected service (ALLOWED -> ACTIVE)
  uint64_t seq = 0;
};
struct Admit {  // up to `count` of the next WAITING tickets, within capacity
  uint64_t count = 0;
  uint64_t owed = 0;  // of which owed for no-shows (the decider's), taken from what is owed
  std::vector<uint64_t> seqs;  // a log's: exactly these tickets, ascending (count is their number)
};
struct Expire {  // a cluster's is applied only if still due by the record's time
  uint64_t seq = 0;
  EndReason reason = EndReason::kNone;
};
struct Seen {  // visitors seen (polls, streams, uses at the service): refreshes their time
  std::vector<uint64_t> seqs;
};
struct Clear {
  std::optional<std::vector<uint64_t>>
      seqs;  // a log's: these tickets, ascending; unset: all WAITING
};
struct EventPhase {  // the room's event reached `phase` (its time came)
  RoomEvent::Phase phase = RoomEvent::Phase::kScheduled;
};
struct PutRoom {
  RoomConfig config;
};
struct DeleteRoom {};
struct Draw {  // a log's: the room's drawn pre-queue from rank `first_rank` on (a part of it)
  DrawInfo part;
  uint64_t first_rank = 0;
};
// A log's: a room with lanes took this turn last (lane_schedule.h). A snapshot writes it
// after the room's tickets (their admissions come in seq order there, not in turn order);
// between snapshots recovery follows the turns from the admissions themselves.
struct LaneTurn {
  uint32_t lane = 0;
  uint64_t k = 0;
};
}  // namespace op

using Op =
    std::variant<op::Join, op::Leave, op::Activate, op::Admit, op::Expire, op::Seen, op::Clear,
                 op::PutRoom, op::DeleteRoom, op::EventPhase, op::Draw, op::LaneTurn>;

// Whether `op` is in the form a single process's journal writes (it names its tickets: a
// Join with its seq, an Admit or a Clear of seqs, a Draw, a LaneTurn), never a cluster's.
bool names_tickets(const Op& op);

// The op's name as docs/log-format.md and docs/cluster.md spell it ("join", "admit", ...).
const char* op_name(const Op& op);

}  // namespace anteroom
