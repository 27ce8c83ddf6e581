#include "storage/log_records.h"

#include <algorithm>

#include "engine/codec.h"
#include "engine/op_codec.h"

namespace anteroom::logrec {
namespace {

using codec::put_string;
using codec::put_varint;
using codec::zigzag;

constexpr uint8_t kMetaType = 1, kSnapBeginType = 7, kSnapEndType = 8, kOpType = 11;

// An op record's payload starts with its room and time.
void put_room_head(std::string* p, std::string_view room, int64_t wall_ms) {
  put_string(p, room);
  put_varint(p, zigzag(wall_ms));
}

}  // namespace

void encode_change(const Change& c, int64_t wall_minus_engine_ms, std::string* out) {
  thread_local std::string p;  // reused: a join should not allocate here
  p.clear();
  const int64_t wall = c.at_ms + wall_minus_engine_ms;
  if (c.kind == Change::Kind::kDraw) {
    const DrawInfo& d = *c.draw;
    for (size_t from = 0; from < d.refs.size() || from == 0; from += kDrawRefsPerRecord) {
      const size_t n = std::min(kDrawRefsPerRecord, d.refs.size() - from);
      op::Draw part{
          DrawInfo{d.seed, d.first_seq, d.end_seq,
                   std::vector<uint64_t>(d.refs.begin() + static_cast<ptrdiff_t>(from),
                                         d.refs.begin() + static_cast<ptrdiff_t>(from + n))},
          from};
      encode(RoomOp{std::string(c.room), wall, std::move(part)}, out);
      if (n == 0) break;
    }
    return;
  }
  put_room_head(&p, c.room, wall);
  using codec::TicketOp;
  switch (c.kind) {
    case Change::Kind::kRoomPut:
      codec::put_op(&p, op::PutRoom{*c.config});
      break;
    case Change::Kind::kRoomDelete:
      codec::put_op(&p, op::DeleteRoom{});
      break;
    case Change::Kind::kJoin:
      codec::put_join(&p, c.tag, c.user, c.key_hash, c.seq, c.lane, c.probation_s);
      break;
    case Change::Kind::kAdmit:
      codec::put_ticket_op(&p, TicketOp::kAdmit, c.seq, EndReason::kNone);
      break;
    case Change::Kind::kActivate:
      codec::put_ticket_op(&p, TicketOp::kActivate, c.seq, EndReason::kNone);
      break;
    case Change::Kind::kLeave:
      codec::put_ticket_op(&p, TicketOp::kLeave, c.seq, EndReason::kLeft);
      break;
    case Change::Kind::kExpire:
      codec::put_ticket_op(&p, TicketOp::kExpire, c.seq, c.reason);
      break;
    case Change::Kind::kClear:
      codec::put_clear_seqs(&p, c.seqs);
      break;
    case Change::Kind::kDraw:
      break;  // above
  }
  logfmt::append_record(out, kOpType, p);
}

void encode(const Any& any, std::string* out) {
  std::string p;
  uint8_t type = 0;
  if (const auto* m = std::get_if<Meta>(&any)) {
    type = kMetaType;
    put_varint(&p, m->version);
    put_varint(&p, m->id_key[0]);
    put_varint(&p, m->id_key[1]);
  } else if (const auto* r = std::get_if<RoomOp>(&any)) {
    type = kOpType;
    put_room_head(&p, r->room, r->wall_ms);
    codec::put_op(&p, r->op);
  } else if (const auto* b = std::get_if<SnapshotBegin>(&any)) {
    type = kSnapBeginType;
    put_string(&p, b->magic);
    put_varint(&p, b->version);
  } else if (const auto* e = std::get_if<SnapshotEnd>(&any)) {
    type = kSnapEndType;
    put_varint(&p, e->crc);
  }
  logfmt::append_record(out, type, p);
}

namespace {

std::optional<Any> parse(const logfmt::Record& rec) {
  codec::Reader in(rec.payload);
  switch (rec.type) {
    case kMetaType: {
      Meta m;
      if (!in.number(&m.version) || !in.varint(&m.id_key[0]) || !in.varint(&m.id_key[1]))
        return std::nullopt;
      return in.done() ? std::optional<Any>(m) : std::nullopt;
    }
    case kSnapBeginType: {
      SnapshotBegin b;
      if (!in.string(&b.magic) || b.magic != "ANTEROOM-SNAPSHOT" || !in.number(&b.version))
        return std::nullopt;
      return in.done() ? std::optional<Any>(b) : std::nullopt;
    }
    case kSnapEndType: {
      SnapshotEnd e;
      if (!in.number(&e.crc)) return std::nullopt;
      return in.done() ? std::optional<Any>(e) : std::nullopt;
    }
    case kOpType: {
      RoomOp r;
      if (!in.string(&r.room) || !in.signed_number(&r.wall_ms) || !codec::read_op(in, &r.op))
        return std::nullopt;
      return in.done() ? std::optional<Any>(std::move(r)) : std::nullopt;
    }
    default:
      return decode_v3(rec);
  }
}

}  // namespace

Result<Any> decode(const logfmt::Record& rec) {
  if (std::optional<Any> any = parse(rec)) return std::move(*any);
  return Status(Code::kInvalidArgument, "record of type " + std::to_string(rec.type) +
                                            " at offset " + std::to_string(rec.offset) +
                                            " does not parse");
}

}  // namespace anteroom::logrec
