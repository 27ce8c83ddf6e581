#include "storage/log_records.h"

#include "engine/codec.h"

#include <iterator>
#include <optional>
#include <span>

namespace anteroom::logrec {
namespace {

using codec::put_room_config;
using codec::put_string;
using codec::put_varint;
using codec::zigzag;
using In = codec::Reader;

void put_state(std::string* p, std::string_view room, uint64_t seq, TicketState state,
               EndReason reason, int64_t wall_ms) {
  put_string(p, room);
  put_varint(p, seq);
  put_varint(p, static_cast<uint8_t>(state));
  put_varint(p, static_cast<uint8_t>(reason));
  put_varint(p, zigzag(wall_ms));
}

void put_join(std::string* p, std::string_view room, uint64_t seq,
              const std::array<uint32_t, 3>& tag, std::string_view user, int64_t wall_ms,
              const KeyHash* key) {
  put_string(p, room);
  put_varint(p, seq);
  for (uint32_t t : tag) put_varint(p, t);
  put_string(p, user);
  put_varint(p, zigzag(wall_ms));
  if (key != nullptr) {
    put_varint(p, 1);  // flags: a key hash follows
    p->append(reinterpret_cast<const char*>(key->data()), key->size());
  }
}

void put_clear_seqs(std::string* p, std::string_view room, int64_t wall_ms,
                    std::span<const uint64_t> seqs) {
  put_string(p, room);
  put_varint(p, zigzag(wall_ms));
  put_varint(p, seqs.size());
  uint64_t prev = 0;
  for (uint64_t s : seqs) {
    put_varint(p, s - prev);
    prev = s;
  }
}

}  // namespace

void encode_change(const Change& c, int64_t wall_minus_engine_ms, std::string* out) {
  thread_local std::string p;  // reused: a join should not allocate here
  p.clear();
  const int64_t wall = c.at_ms + wall_minus_engine_ms;
  uint8_t type = 5;
  switch (c.kind) {
    case Change::Kind::kRoomPut:
      type = 2;
      put_string(&p, c.room);
      put_room_config(&p, *c.config);
      break;
    case Change::Kind::kRoomDelete:
      type = 3;
      put_string(&p, c.room);
      break;
    case Change::Kind::kJoin:
      type = 4;
      put_join(&p, c.room, c.seq, c.tag, c.user, wall, c.key_hash);
      break;
    case Change::Kind::kAdmit:
      put_state(&p, c.room, c.seq, TicketState::kAllowed, EndReason::kNone, wall);
      break;
    case Change::Kind::kActivate:
      put_state(&p, c.room, c.seq, TicketState::kActive, EndReason::kNone, wall);
      break;
    case Change::Kind::kLeave:
      put_state(&p, c.room, c.seq, TicketState::kLeft, EndReason::kLeft, wall);
      break;
    case Change::Kind::kExpire:
      put_state(&p, c.room, c.seq, TicketState::kExpired, c.reason, wall);
      break;
    case Change::Kind::kClear:
      type = 9;
      put_clear_seqs(&p, c.room, wall, c.seqs);
      break;
    case Change::Kind::kDraw: {
      const DrawInfo& d = *c.draw;
      for (size_t from = 0; from < d.refs.size() || from == 0; from += kDrawRefsPerRecord) {
        const size_t n = std::min(kDrawRefsPerRecord, d.refs.size() - from);
        encode(Draw{std::string(c.room), d.first_seq, d.end_seq, d.seed, from,
                    std::vector<uint64_t>(d.refs.begin() + static_cast<ptrdiff_t>(from),
                                          d.refs.begin() + static_cast<ptrdiff_t>(from + n))},
               out);
        if (n == 0) break;
      }
      return;
    }
  }
  logfmt::append_record(out, type, p);
}

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
    put_room_config(&p, r->config);
  } else if (const auto* d = std::get_if<RoomDelete>(&any)) {
    type = 3;
    put_string(&p, d->room);
  } else if (const auto* j = std::get_if<Join>(&any)) {
    type = 4;
    put_join(&p, j->room, j->seq, j->tag, j->user, j->wall_ms,
             j->key_hash ? &*j->key_hash : nullptr);
  } else if (const auto* s = std::get_if<StateChange>(&any)) {
    type = 5;
    put_state(&p, s->room, s->seq, s->state, s->reason, s->wall_ms);
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
  } else if (const auto* cs = std::get_if<ClearSeqs>(&any)) {
    type = 9;
    put_clear_seqs(&p, cs->room, cs->wall_ms, cs->seqs);
  } else if (const auto* dr = std::get_if<Draw>(&any)) {
    type = 10;
    put_string(&p, dr->room);
    put_varint(&p, dr->first_seq);
    put_varint(&p, dr->end_seq);
    p.append(reinterpret_cast<const char*>(dr->seed.data()), dr->seed.size());
    put_varint(&p, dr->first_rank);
    put_varint(&p, dr->refs.size());
    for (uint64_t ref : dr->refs) {
      for (int byte = 7; byte >= 0; --byte) p.push_back(static_cast<char>(ref >> (8 * byte)));
    }
  }
  logfmt::append_record(out, type, p);
}

namespace {

// One parser per record type: the record's fields, or nullopt if they do not parse.
// decode() checks that nothing is left over.
std::optional<Any> parse_meta(In& in) {
  Meta m;
  if (!in.number(&m.version) || !in.varint(&m.id_key[0]) || !in.varint(&m.id_key[1]))
    return std::nullopt;
  return m;
}

std::optional<Any> parse_room_put(In& in) {
  RoomPut r;
  if (!in.string(&r.room) || !codec::read_room_config(in, &r.config, true)) return std::nullopt;
  return r;
}

std::optional<Any> parse_room_delete(In& in) {
  RoomDelete d;
  if (!in.string(&d.room)) return std::nullopt;
  return d;
}

std::optional<Any> parse_join(In& in) {
  Join j;
  if (!in.string(&j.room) || !in.varint(&j.seq) || !in.number(&j.tag[0]) || !in.number(&j.tag[1]) ||
      !in.number(&j.tag[2]) || !in.string(&j.user) || !in.signed_number(&j.wall_ms)) {
    return std::nullopt;
  }
  if (in.done()) return j;  // no flags: written before keys existed, or no key
  uint64_t flags = 0;
  KeyHash key{};
  if (!in.varint(&flags) || flags != 1 || !in.bytes(key.data(), key.size())) return std::nullopt;
  j.key_hash = key;
  return j;
}

std::optional<Any> parse_state(In& in) {
  StateChange s;
  uint8_t state = 0, reason = 0;
  if (!in.string(&s.room) || !in.varint(&s.seq) || !in.number(&state) || !in.number(&reason) ||
      state < 1 || state > 5 || reason > 5 || !in.signed_number(&s.wall_ms)) {
    return std::nullopt;
  }
  s.state = static_cast<TicketState>(state);
  s.reason = static_cast<EndReason>(reason);
  return s;
}

std::optional<Any> parse_clear(In& in) {
  Clear c;
  if (!in.string(&c.room) || !in.signed_number(&c.wall_ms)) return std::nullopt;
  return c;
}

std::optional<Any> parse_snapshot_begin(In& in) {
  SnapshotBegin b;
  if (!in.string(&b.magic) || b.magic != "ANTEROOM-SNAPSHOT" || !in.number(&b.version))
    return std::nullopt;
  return b;
}

std::optional<Any> parse_snapshot_end(In& in) {
  SnapshotEnd e;
  if (!in.number(&e.crc)) return std::nullopt;
  return e;
}

std::optional<Any> parse_clear_seqs(In& in) {
  ClearSeqs c;
  uint64_t n = 0, prev = 0;
  if (!in.string(&c.room) || !in.signed_number(&c.wall_ms) || !in.varint(&n)) return std::nullopt;
  if (n > in.left()) return std::nullopt;  // each seq takes at least a byte
  c.seqs.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t d = 0;
    if (!in.varint(&d) || (i != 0 && d == 0) || d > UINT64_MAX - prev) return std::nullopt;
    prev += d;
    c.seqs.push_back(prev);
  }
  return c;
}

std::optional<Any> parse_draw(In& in) {
  Draw d;
  uint64_t n = 0;
  if (!in.string(&d.room) || !in.varint(&d.first_seq) || !in.varint(&d.end_seq) ||
      !in.bytes(d.seed.data(), d.seed.size()) || !in.varint(&d.first_rank) || !in.varint(&n) ||
      n > in.left() / 8) {
    return std::nullopt;
  }
  d.refs.resize(n);
  for (uint64_t& ref : d.refs) {
    uint8_t b[8];
    if (!in.bytes(b, 8)) return std::nullopt;
    for (uint8_t x : b) ref = (ref << 8) | x;
  }
  return d;
}

using Parser = std::optional<Any> (*)(In&);
constexpr Parser kParsers[] = {
    nullptr,     parse_meta,  parse_room_put,       parse_room_delete,  parse_join,
    parse_state, parse_clear, parse_snapshot_begin, parse_snapshot_end, parse_clear_seqs,
    parse_draw};

}  // namespace

Result<Any> decode(const logfmt::Record& rec) {
  In in(rec.payload);
  if (rec.type < std::size(kParsers) && kParsers[rec.type] != nullptr) {
    std::optional<Any> any = kParsers[rec.type](in);
    if (any && in.done()) return std::move(*any);
  }
  return Status(Code::kInvalidArgument, "record of type " + std::to_string(rec.type) +
                                            " at offset " + std::to_string(rec.offset) +
                                            " does not parse");
}

}  // namespace anteroom::logrec
