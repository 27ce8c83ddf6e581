// logrec::validate: whether a record says something the server could have written.
#include "engine/line.h"
#include "storage/log_records.h"

namespace anteroom::logrec {

namespace {

Status invalid(const std::string& why) { return Status(Code::kInvalidArgument, why); }

Status check_room(std::string_view room) {
  if (valid_room_name(room)) return Status::ok();
  return invalid("room name '" + std::string(room.substr(0, 80)) +
                 "' is not 1-64 characters of A-Z a-z 0-9 _ -");
}

Status check_seq(uint64_t seq) {
  if (seq < Line::kMaxTickets) return Status::ok();
  return invalid("seq " + std::to_string(seq) + " is beyond what a room hands out");
}

// The reasons each state may carry (what the engine writes).
bool state_fits_reason(TicketState s, EndReason r) {
  switch (s) {
    case TicketState::kWaiting:
    case TicketState::kAllowed:
    case TicketState::kActive:
      return r == EndReason::kNone;
    case TicketState::kLeft:
      return r == EndReason::kLeft || r == EndReason::kCleared || r == EndReason::kNone;
    case TicketState::kExpired:
      return r == EndReason::kAllowedUnused || r == EndReason::kSessionIdle ||
             r == EndReason::kAbandoned;
  }
  return false;
}

}  // namespace

Status validate(const Any& any) {
  if (const auto* m = std::get_if<Meta>(&any)) {
    if (m->version < kOldestVersion || m->version > kVersion) {
      return invalid("log format version " + std::to_string(m->version) +
                     "; this anteroom reads versions " + std::to_string(kOldestVersion) + " to " +
                     std::to_string(kVersion));
    }
  } else if (const auto* r = std::get_if<RoomPut>(&any)) {
    if (Status st = check_room(r->room); !st.is_ok()) return st;
    if (Status st = r->config.validate(); !st.is_ok())
      return invalid("room config: " + st.message());
  } else if (const auto* d = std::get_if<RoomDelete>(&any)) {
    return check_room(d->room);
  } else if (const auto* j = std::get_if<Join>(&any)) {
    if (Status st = check_room(j->room); !st.is_ok()) return st;
    if (Status st = check_seq(j->seq); !st.is_ok()) return st;
    if (!j->user.empty() && !valid_user(j->user)) return invalid(std::string("user: ") + kUserRule);
  } else if (const auto* c = std::get_if<StateChange>(&any)) {
    if (Status st = check_room(c->room); !st.is_ok()) return st;
    if (Status st = check_seq(c->seq); !st.is_ok()) return st;
    if (!state_fits_reason(c->state, c->reason)) {
      return invalid(std::string("state ") + state_name(c->state) + " with reason " +
                     reason_name(c->reason));
    }
  } else if (const auto* cl = std::get_if<Clear>(&any)) {
    return check_room(cl->room);
  } else if (const auto* cs = std::get_if<ClearSeqs>(&any)) {
    if (Status st = check_room(cs->room); !st.is_ok()) return st;
    if (!cs->seqs.empty()) return check_seq(cs->seqs.back());  // ascending
  } else if (const auto* dr = std::get_if<Draw>(&any)) {
    if (Status st = check_room(dr->room); !st.is_ok()) return st;
    if (dr->end_seq < dr->first_seq || dr->end_seq > Line::kMaxTickets ||
        dr->first_rank > Line::kMaxTickets ||
        dr->refs.size() > Line::kMaxTickets - dr->first_rank) {
      return invalid("a draw's ranks are beyond what a room holds");
    }
  } else if (const auto* b = std::get_if<SnapshotBegin>(&any)) {
    if (b->version < kOldestVersion || b->version > kVersion)
      return invalid("snapshot format version " + std::to_string(b->version));
  }
  return Status::ok();
}

}  // namespace anteroom::logrec
