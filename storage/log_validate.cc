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

Status check_op(const Op& op) {
  if (const auto* put = std::get_if<op::PutRoom>(&op)) {
    if (Status st = put->config.validate(); !st.is_ok())
      return invalid("room config: " + st.message());
  } else if (const auto* j = std::get_if<op::Join>(&op)) {
    if (!j->seq) return invalid("a join without its seq (a cluster's request, not a log's)");
    if (Status st = check_seq(*j->seq); !st.is_ok()) return st;
    if (!j->user.empty() && !valid_user(j->user)) return invalid(std::string("user: ") + kUserRule);
  } else if (const auto* a = std::get_if<op::Admit>(&op)) {
    if (a->seqs.empty()) return invalid("an admit by count (a cluster's request, not a log's)");
    return check_seq(a->seqs.back());  // ascending
  } else if (const auto* x = std::get_if<op::Activate>(&op)) {
    return check_seq(x->seq);
  } else if (const auto* l = std::get_if<op::Leave>(&op)) {
    return check_seq(l->seq);
  } else if (const auto* e = std::get_if<op::Expire>(&op)) {
    if (e->reason != EndReason::kAllowedUnused && e->reason != EndReason::kSessionIdle &&
        e->reason != EndReason::kAbandoned) {
      return invalid(std::string("an expiry with reason ") + reason_name(e->reason));
    }
    return check_seq(e->seq);
  } else if (const auto* c = std::get_if<op::Clear>(&op)) {
    if (c->seqs && !c->seqs->empty()) return check_seq(c->seqs->back());
  } else if (const auto* d = std::get_if<op::Draw>(&op)) {
    const DrawInfo& p = d->part;
    if (p.end_seq < p.first_seq || p.end_seq > Line::kMaxTickets ||
        d->first_rank > Line::kMaxTickets || p.refs.size() > Line::kMaxTickets - d->first_rank) {
      return invalid("a draw's ranks are beyond what a room holds");
    }
  } else if (std::holds_alternative<op::Seen>(op) || std::holds_alternative<op::EventPhase>(op)) {
    return invalid(std::string("a ") + op_name(op) + " op (a cluster's, not a log's)");
  }
  return Status::ok();
}

}  // namespace

Status validate(const Any& any) {
  if (const auto* m = std::get_if<Meta>(&any)) {
    if (m->version < kOldestVersion || m->version > kVersion) {
      return invalid("log format version " + std::to_string(m->version) +
                     "; this anteroom reads versions " + std::to_string(kOldestVersion) + " to " +
                     std::to_string(kVersion));
    }
  } else if (const auto* r = std::get_if<RoomOp>(&any)) {
    if (Status st = check_room(r->room); !st.is_ok()) return st;
    return check_op(r->op);
  } else if (const auto* b = std::get_if<SnapshotBegin>(&any)) {
    if (b->version < kOldestVersion || b->version > kVersion)
      return invalid("snapshot format version " + std::to_string(b->version));
  }
  return Status::ok();
}

}  // namespace anteroom::logrec
