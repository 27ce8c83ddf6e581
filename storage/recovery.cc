#include "storage/recovery.h"

#include "engine/engine.h"

#include <unistd.h>

#include <fstream>
#include <sstream>

namespace anteroom::logrec {
namespace {

// Where a state sits in a ticket's life: states only move forward.
int rank(TicketState s) { return is_live(s) ? static_cast<int>(s) : 4; }

}  // namespace

bool Recovery::move(Room& room, uint64_t seq, TicketState state, EndReason reason,
                    int64_t wall_ms) {
  auto t = room.tickets.find(seq);
  if (t == room.tickets.end()) return false;  // its join record was lost: it stays lost
  Ticket& k = t->second;
  if (state == TicketState::kAllowed && k.admitted_wall_ms == 0) k.admitted_wall_ms = wall_ms;
  if (rank(state) <= rank(k.state)) return false;  // told late: the ticket is past it already
  k.state = state;
  k.reason = reason;
  return true;
}

void Recovery::apply_op(const RoomOp& r) {
  if (const auto* put = std::get_if<op::PutRoom>(&r.op)) {
    Room& room = rooms_[r.room];
    if (room.config.lanes != put->config.lanes) room.lanes_turn = {};  // the engine does so too
    room.config = put->config;
    return;
  }
  if (std::holds_alternative<op::DeleteRoom>(r.op)) {
    rooms_.erase(r.room);
    return;
  }
  auto found = rooms_.find(r.room);
  if (found == rooms_.end()) return;  // a change of a room deleted later in the log
  Room& room = found->second;
  const int64_t at = r.wall_ms;
  if (const auto* j = std::get_if<op::Join>(&r.op)) {
    Ticket& t = room.tickets[j->seq.value_or(0)];  // validate() refuses a join without one
    t.tag = j->tag;
    t.user = j->user;
    t.key_hash = j->key_hash;
    t.lane = j->lane;
    t.probation_s = j->probation_s;
  } else if (const auto* a = std::get_if<op::Admit>(&r.op)) {
    const std::vector<uint32_t>& weights = room.config.lanes;
    for (uint64_t seq : a->seqs) {
      if (!move(room, seq, TicketState::kAllowed, EndReason::kNone, at) || weights.empty())
        continue;
      // Each admission of a room with lanes took its lane's next turn (room_lanes.cc).
      const auto lane =
          std::min<uint32_t>(room.tickets[seq].lane, static_cast<uint32_t>(weights.size() - 1));
      const uint64_t k = LaneSchedule(weights).turns_through(lane, room.lanes_turn);
      room.lanes_turn = {true, lane, k};
    }
  } else if (const auto* x = std::get_if<op::Activate>(&r.op)) {
    move(room, x->seq, TicketState::kActive, EndReason::kNone, at);
  } else if (const auto* l = std::get_if<op::Leave>(&r.op)) {
    move(room, l->seq, TicketState::kLeft, EndReason::kLeft, at);
  } else if (const auto* e = std::get_if<op::Expire>(&r.op)) {
    move(room, e->seq, TicketState::kExpired, e->reason, at);
  } else if (const auto* c = std::get_if<op::Clear>(&r.op)) {
    if (c->seqs) {
      for (uint64_t seq : *c->seqs) move(room, seq, TicketState::kLeft, EndReason::kCleared, at);
    } else {  // a version 1 log's: every ticket WAITING at this point
      for (auto& [seq, t] : room.tickets) {
        if (t.state == TicketState::kWaiting)
          move(room, seq, TicketState::kLeft, EndReason::kCleared, at);
      }
    }
  } else if (const auto* d = std::get_if<op::Draw>(&r.op)) {
    std::optional<DrawInfo>& kept = room.draw;
    if (d->first_rank == 0) kept = DrawInfo{d->part.seed, d->part.first_seq, d->part.end_seq, {}};
    // A part of another draw, or one whose start was lost, is not this draw's.
    if (!kept || kept->seed != d->part.seed || d->first_rank != kept->refs.size()) return;
    kept->refs.insert(kept->refs.end(), d->part.refs.begin(), d->part.refs.end());
  } else if (const auto* t = std::get_if<op::LaneTurn>(&r.op)) {
    if (t->lane < room.config.lanes.size()) room.lanes_turn = {true, t->lane, t->k};
  }
  // seen and event_phase: a cluster's, refused by validate() before they get here
}

void Recovery::apply(const Any& any) {
  if (const auto* m = std::get_if<Meta>(&any)) {
    id_key_ = m->id_key;
    version_ = m->version;
  } else if (const auto* r = std::get_if<RoomOp>(&any)) {
    apply_op(*r);
  }
}

std::vector<RestoredTicket> Recovery::tickets_for_restore(const Room& room,
                                                          int64_t engine_minus_wall_ms) {
  std::vector<RestoredTicket> out;
  out.reserve(room.tickets.size());
  for (const auto& [seq, t] : room.tickets) {
    RestoredTicket r;
    r.seq = seq;
    r.tag = t.tag;
    r.user = t.user;
    r.key_hash = t.key_hash;
    r.state = t.state;
    r.reason = t.reason;
    r.lane = t.lane;
    r.probation_s = t.probation_s;
    if (holds_slot(t.state)) r.admitted_at_ms = t.admitted_wall_ms + engine_minus_wall_ms;
    out.push_back(std::move(r));
  }
  return out;
}

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

// The rooms an engine holds by default (EngineOptions::max_rooms): a log naming more live
// rooms could not be restored.
const size_t kMaxRooms = EngineOptions{}.max_rooms;

LogScan scan_log(std::string_view data, Recovery* fold, const ScanProgress& progress) {
  LogScan scan;
  logfmt::Reader reader(data);
  logfmt::Record rec;
  std::optional<uint64_t> snapshot_begin;
  Recovery scratch;  // the version check needs a fold even when the caller wants none
  Recovery* into = fold != nullptr ? fold : &scratch;
  auto stop = [&](uint64_t at, std::string why, bool repairs) {
    scan.end = logfmt::Reader::End::kCorrupt;
    scan.problem = std::move(why);
    scan.cut = at;
    scan.cut_repairs = repairs;
    return scan;
  };
  while (reader.next(&rec)) {
    const std::string at = "record " + std::to_string(scan.records + 1) + " (type " +
                           std::to_string(rec.type) + ") at offset " + std::to_string(rec.offset);
    auto any = decode(rec);
    if (!any.is_ok()) return stop(rec.offset, at + " does not parse", true);
    if (Status st = validate(any.value()); !st.is_ok()) {
      const bool version = std::holds_alternative<Meta>(any.value());
      return stop(rec.offset, at + ": " + st.message(), !version);
    }
    if (std::holds_alternative<SnapshotBegin>(any.value())) snapshot_begin = rec.offset;
    if (std::holds_alternative<SnapshotEnd>(any.value())) {
      const uint32_t want = std::get<SnapshotEnd>(any.value()).crc;
      if (!snapshot_begin ||
          logfmt::crc32c(data.data() + *snapshot_begin, rec.offset - *snapshot_begin) != want) {
        return stop(snapshot_begin.value_or(rec.offset),
                    at + ": the snapshot it ends does not match its checksum", true);
      }
    }
    into->apply(any.value());
    if (const auto* r = std::get_if<RoomOp>(&any.value());
        r != nullptr && std::holds_alternative<op::PutRoom>(r->op) &&
        into->rooms().size() > kMaxRooms) {
      return stop(rec.offset,
                  at + ": one room more than the " + std::to_string(kMaxRooms) + " a server holds",
                  true);
    }
    ++scan.records;
    if (progress && scan.records % 4096 == 0) progress(rec.offset, scan.records);
  }
  scan.end = reader.end();
  scan.problem = reader.problem();
  scan.cut = reader.valid_bytes();
  return scan;
}

Status read_log(const std::string& path, const std::string& dir, Recovery* out,
                std::string* warnings) {
  const std::string data = read_file(path);
  const std::string where = path + ": ";
  const LogScan scan = scan_log(data, out);
  if (scan.end == logfmt::Reader::End::kCorrupt) {
    std::string advice =
        scan.cut_repairs
            ? "; the records before offset " + std::to_string(scan.cut) +
                  " are intact. Run `anteroom check-log --fix " + dir +
                  "` to cut the log there (what follows is lost), or restore it from a backup"
            : "; use an anteroom that reads it";
    return Status(Code::kUnavailable, where + scan.problem + advice);
  }
  if (scan.end == logfmt::Reader::End::kTornTail) {
    if (::truncate(path.c_str(), static_cast<off_t>(scan.cut)) != 0) {
      return Status(Code::kUnavailable, "cannot cut the torn tail of " + path);
    }
    if (warnings != nullptr) {
      *warnings += where + scan.problem + "; cut at offset " + std::to_string(scan.cut) +
                   " (an unfinished last write)\n";
    }
  }
  return Status::ok();
}

}  // namespace anteroom::logrec
