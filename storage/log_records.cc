#include "storage/log_records.h"

#include <limits>

namespace anteroom::logrec {
namespace {

void put_varint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}
void put_string(std::string* out, std::string_view s) {
  put_varint(out, s.size());
  out->append(s);
}
uint64_t zigzag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
int64_t unzigzag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

class In {
 public:
  explicit In(std::string_view s) : s_(s) {}
  bool varint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= s_.size()) return false;
      auto b = static_cast<uint8_t>(s_[pos_++]);
      *v |= uint64_t{b & 0x7fu} << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  }
  template <typename T>
  bool number(T* v) {
    uint64_t x = 0;
    if (!varint(&x) || x > static_cast<uint64_t>(std::numeric_limits<T>::max())) return false;
    *v = static_cast<T>(x);
    return true;
  }
  bool signed_number(int64_t* v) {
    uint64_t x = 0;
    if (!varint(&x)) return false;
    *v = unzigzag(x);
    return true;
  }
  bool string(std::string* out) {
    uint64_t n = 0;
    if (!varint(&n) || n > s_.size() - pos_) return false;
    out->assign(s_.substr(pos_, n));
    pos_ += n;
    return true;
  }
  bool done() const { return pos_ == s_.size(); }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

void encode(const Any& any, std::string* out) {
  std::string p;
  uint8_t type = 0;
  if (const auto* m = std::get_if<Meta>(&any)) {
    type = 1;
    put_varint(&p, m->version);
    put_varint(&p, m->id_key[0]);
    put_varint(&p, m->id_key[1]);
  } else if (const auto* r = std::get_if<RoomPut>(&any)) {
    type = 2;
    put_string(&p, r->room);
    const RoomConfig& c = r->config;
    for (uint64_t v :
         {uint64_t{c.capacity}, uint64_t{static_cast<uint8_t>(c.admission)},
          uint64_t{c.admit_per_second}, uint64_t{c.allowed_ttl_seconds},
          uint64_t{c.session_ttl_seconds}, uint64_t{c.heartbeat_timeout_seconds}, c.max_waiting}) {
      put_varint(&p, v);
    }
  } else if (const auto* d = std::get_if<RoomDelete>(&any)) {
    type = 3;
    put_string(&p, d->room);
  } else if (const auto* j = std::get_if<Join>(&any)) {
    type = 4;
    put_string(&p, j->room);
    put_varint(&p, j->seq);
    for (uint32_t t : j->tag) put_varint(&p, t);
    put_string(&p, j->user);
    put_varint(&p, zigzag(j->wall_ms));
  } else if (const auto* s = std::get_if<StateChange>(&any)) {
    type = 5;
    put_string(&p, s->room);
    put_varint(&p, s->seq);
    put_varint(&p, static_cast<uint8_t>(s->state));
    put_varint(&p, static_cast<uint8_t>(s->reason));
    put_varint(&p, zigzag(s->wall_ms));
  } else if (const auto* c = std::get_if<Clear>(&any)) {
    type = 6;
    put_string(&p, c->room);
    put_varint(&p, zigzag(c->wall_ms));
  } else if (const auto* b = std::get_if<SnapshotBegin>(&any)) {
    type = 7;
    put_string(&p, b->magic);
    put_varint(&p, b->version);
  } else if (const auto* e = std::get_if<SnapshotEnd>(&any)) {
    type = 8;
    put_varint(&p, e->crc);
  }
  logfmt::append_record(out, type, p);
}

Result<Any> decode(const logfmt::Record& rec) {
  In in(rec.payload);
  auto bad = [&] {
    return Status(Code::kInvalidArgument, "record of type " + std::to_string(rec.type) +
                                              " at offset " + std::to_string(rec.offset) +
                                              " does not parse");
  };
  switch (rec.type) {
    case 1: {
      Meta m;
      if (!in.number(&m.version) || !in.varint(&m.id_key[0]) || !in.varint(&m.id_key[1]) ||
          !in.done())
        return bad();
      return Any(m);
    }
    case 2: {
      RoomPut r;
      uint8_t admission = 0;
      RoomConfig& c = r.config;
      if (!in.string(&r.room) || !in.number(&c.capacity) || !in.number(&admission) ||
          admission > 1 || !in.number(&c.admit_per_second) || !in.number(&c.allowed_ttl_seconds) ||
          !in.number(&c.session_ttl_seconds) || !in.number(&c.heartbeat_timeout_seconds) ||
          !in.varint(&c.max_waiting) || !in.done()) {
        return bad();
      }
      c.admission = static_cast<AdmissionMode>(admission);
      return Any(r);
    }
    case 3: {
      RoomDelete d;
      if (!in.string(&d.room) || !in.done()) return bad();
      return Any(d);
    }
    case 4: {
      Join j;
      if (!in.string(&j.room) || !in.varint(&j.seq) || !in.number(&j.tag[0]) ||
          !in.number(&j.tag[1]) || !in.number(&j.tag[2]) || !in.string(&j.user) ||
          !in.signed_number(&j.wall_ms) || !in.done()) {
        return bad();
      }
      return Any(j);
    }
    case 5: {
      StateChange s;
      uint8_t state = 0, reason = 0;
      if (!in.string(&s.room) || !in.varint(&s.seq) || !in.number(&state) || !in.number(&reason) ||
          state < 1 || state > 5 || reason > 5 || !in.signed_number(&s.wall_ms) || !in.done()) {
        return bad();
      }
      s.state = static_cast<TicketState>(state);
      s.reason = static_cast<EndReason>(reason);
      return Any(s);
    }
    case 6: {
      Clear c;
      if (!in.string(&c.room) || !in.signed_number(&c.wall_ms) || !in.done()) return bad();
      return Any(c);
    }
    case 7: {
      SnapshotBegin b;
      if (!in.string(&b.magic) || b.magic != "ANTEROOM-SNAPSHOT" || !in.number(&b.version) ||
          !in.done())
        return bad();
      return Any(b);
    }
    case 8: {
      SnapshotEnd e;
      if (!in.number(&e.crc) || !in.done()) return bad();
      return Any(e);
    }
    default:
      return bad();
  }
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
  } else if (const auto* s = std::get_if<StateChange>(&any)) {
    auto room = rooms_.find(s->room);
    if (room == rooms_.end()) return;
    auto t = room->second.tickets.find(s->seq);
    if (t == room->second.tickets.end()) return;  // its join record was lost: it stays lost
    if (!is_live(t->second.state)) return;        // ended is final
    if (s->state == TicketState::kAllowed) t->second.admitted_wall_ms = s->wall_ms;
    t->second.state = s->state;
    t->second.reason = s->reason;
  } else if (const auto* c = std::get_if<Clear>(&any)) {
    auto room = rooms_.find(c->room);
    if (room == rooms_.end()) return;
    for (auto& [seq, t] : room->second.tickets) {
      if (t.state == TicketState::kWaiting) {
        t.state = TicketState::kLeft;
        t.reason = EndReason::kCleared;
      }
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
    r.state = t.state;
    r.reason = t.reason;
    if (holds_slot(t.state)) r.admitted_at_ms = t.admitted_wall_ms + engine_minus_wall_ms;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace anteroom::logrec
