#include "storage/recovery.h"

#include <unistd.h>

#include <fstream>
#include <sstream>

namespace anteroom::logrec {
namespace {

// Where a state sits in a ticket's life: states only move forward.
int rank(TicketState s) { return is_live(s) ? static_cast<int>(s) : 4; }

}  // namespace

void Recovery::apply_state(const StateChange& s) {
  auto room = rooms_.find(s.room);
  if (room == rooms_.end()) return;
  auto t = room->second.tickets.find(s.seq);
  if (t == room->second.tickets.end()) return;  // its join record was lost: it stays lost
  Ticket& k = t->second;
  if (s.state == TicketState::kAllowed && k.admitted_wall_ms == 0) k.admitted_wall_ms = s.wall_ms;
  if (rank(s.state) <= rank(k.state)) return;  // told late: the ticket is past it already
  k.state = s.state;
  k.reason = s.reason;
}

void Recovery::apply(const Any& any) {
  if (const auto* m = std::get_if<Meta>(&any)) {
    id_key_ = m->id_key;
    version_ = m->version;
  } else if (const auto* r = std::get_if<RoomPut>(&any)) {
    rooms_[r->room].config = r->config;
  } else if (const auto* d = std::get_if<RoomDelete>(&any)) {
    rooms_.erase(d->room);
  } else if (const auto* j = std::get_if<Join>(&any)) {
    auto room = rooms_.find(j->room);
    if (room == rooms_.end()) return;  // joined a room deleted later in the log
    Ticket& t = room->second.tickets[j->seq];
    t.tag = j->tag;
    t.user = j->user;
    t.key_hash = j->key_hash;
  } else if (const auto* s = std::get_if<StateChange>(&any)) {
    apply_state(*s);
  } else if (const auto* c = std::get_if<Clear>(&any)) {
    auto room = rooms_.find(c->room);
    if (room == rooms_.end()) return;
    for (auto& [seq, t] : room->second.tickets) {
      if (t.state == TicketState::kWaiting) {
        t.state = TicketState::kLeft;
        t.reason = EndReason::kCleared;
      }
    }
  } else if (const auto* cs = std::get_if<ClearSeqs>(&any)) {
    for (uint64_t seq : cs->seqs) {
      apply_state(StateChange{cs->room, seq, TicketState::kLeft, EndReason::kCleared, 0});
    }
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

std::string fix_hint(const std::string& dir) {
  return "run `anteroom check-log --fix " + dir + "` to cut the log there";
}

// Checks a snapshot's trailing checksum, a version, and folds the record. kInvalidArgument:
// the record does not parse (check-log --fix can cut it off); kUnavailable: anything else.
Status take(const logfmt::Record& rec, const std::string& data, const std::string& where,
            std::optional<uint64_t>* snapshot_begin, Recovery* out) {
  auto any = decode(rec);
  if (!any.is_ok()) return Status(Code::kInvalidArgument, where + any.status().message());
  if (std::holds_alternative<SnapshotBegin>(any.value())) *snapshot_begin = rec.offset;
  if (const auto* end = std::get_if<SnapshotEnd>(&any.value())) {
    if (!*snapshot_begin ||
        logfmt::crc32c(data.data() + **snapshot_begin, rec.offset - **snapshot_begin) != end->crc) {
      return Status(Code::kUnavailable, where + "the snapshot ending at offset " +
                                            std::to_string(rec.offset) +
                                            " does not match its checksum");
    }
  }
  out->apply(any.value());
  if (out->version() < kOldestVersion || out->version() > kVersion) {
    return Status(Code::kUnavailable,
                  where + "written in log format version " + std::to_string(out->version()) +
                      ", this anteroom reads versions " + std::to_string(kOldestVersion) + " to " +
                      std::to_string(kVersion));
  }
  return Status::ok();
}

}  // namespace

Status read_log(const std::string& path, const std::string& dir, Recovery* out,
                std::string* warnings) {
  const std::string data = read_file(path);
  const std::string where = path + ": ";
  logfmt::Reader reader(data);
  logfmt::Record rec;
  std::optional<uint64_t> snapshot_begin;
  while (reader.next(&rec)) {
    if (Status st = take(rec, data, where, &snapshot_begin, out); !st.is_ok()) {
      if (st.code() != Code::kInvalidArgument) return st;
      return Status(Code::kUnavailable, st.message() + "; " + fix_hint(dir));
    }
  }
  if (reader.end() == logfmt::Reader::End::kCorrupt) {
    return Status(Code::kUnavailable,
                  where + reader.problem() + "; the records before offset " +
                      std::to_string(reader.valid_bytes()) + " are intact. Run `anteroom " +
                      "check-log --fix " + dir +
                      "` to cut the log there (what follows is lost), or restore it from a backup");
  }
  if (reader.end() == logfmt::Reader::End::kTornTail) {
    if (::truncate(path.c_str(), static_cast<off_t>(reader.valid_bytes())) != 0) {
      return Status(Code::kUnavailable, "cannot cut the torn tail of " + path);
    }
    if (warnings != nullptr) {
      *warnings += where + reader.problem() + "; cut at offset " +
                   std::to_string(reader.valid_bytes()) + " (an unfinished last write)\n";
    }
  }
  return Status::ok();
}

}  // namespace anteroom::logrec
