#include "engine/op_codec.h"

#include "engine/lane_schedule.h"

#include <iterator>
#include <type_traits>

namespace anteroom::codec {
namespace {

enum OpType : uint64_t {
  kJoin = 1,
  kLeave,
  kActivate,
  kAdmit,
  kExpire,
  kSeen,
  kClear,
  kPutRoom,
  kDeleteRoom,
  kEventPhase,
  kAdmitSeqs,
  kClearSeqs,
  kDraw,
  kLaneTurn,
};
constexpr uint64_t kKeyFollows = 1, kSeqFollows = 2, kLaneFollows = 4, kProbationFollows = 8;
constexpr uint64_t kMaxReason = static_cast<uint64_t>(EndReason::kCleared);

// Ascending seqs, each as its difference from the one before (the first from 0).
void put_ascending(std::string* out, std::span<const uint64_t> seqs) {
  put_varint(out, seqs.size());
  uint64_t last = 0;
  for (uint64_t s : seqs) {
    put_varint(out, s - last);
    last = s;
  }
}

// Seen's seqs come in the order visitors were seen: differences may be negative.
void put_any_order(std::string* out, const std::vector<uint64_t>& seqs) {
  put_varint(out, seqs.size());
  uint64_t last = 0;
  for (uint64_t s : seqs) {
    put_varint(out, zigzag(static_cast<int64_t>(s - last)));
    last = s;
  }
}

bool read_any_order(Reader& in, std::vector<uint64_t>* seqs) {
  uint64_t n = 0, last = 0;
  if (!in.varint(&n) || n > in.left()) return false;
  seqs->reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t d = 0;
    if (!in.varint(&d)) return false;
    last += static_cast<uint64_t>(unzigzag(d));
    seqs->push_back(last);
  }
  return true;
}

bool read_join(Reader& in, Op* op) {
  op::Join j;
  uint64_t flags = 0;
  if (!in.number(&j.tag[0]) || !in.number(&j.tag[1]) || !in.number(&j.tag[2]) ||
      !in.string(&j.user) || !in.varint(&flags) ||
      flags > (kKeyFollows | kSeqFollows | kLaneFollows | kProbationFollows)) {
    return false;
  }
  if ((flags & kKeyFollows) != 0) {
    KeyHash k{};
    if (!in.bytes(k.data(), k.size())) return false;
    j.key_hash = k;
  }
  if ((flags & kSeqFollows) != 0) {
    uint64_t seq = 0;
    if (!in.varint(&seq)) return false;
    j.seq = seq;
  }
  if ((flags & kLaneFollows) != 0 && (!in.number(&j.lane) || j.lane > JoinRequest::kLastLane)) {
    return false;
  }
  if ((flags & kProbationFollows) != 0 &&
      (!in.number(&j.probation_s) || j.probation_s > JoinRequest::kMaxProbation)) {
    return false;
  }
  *op = std::move(j);
  return true;
}

void put_draw(std::string* out, const op::Draw& d) {
  put_varint(out, kDraw);
  put_varint(out, d.part.first_seq);
  put_varint(out, d.part.end_seq);
  out->append(reinterpret_cast<const char*>(d.part.seed.data()), d.part.seed.size());
  put_varint(out, d.first_rank);
  put_varint(out, d.part.refs.size());
  for (uint64_t ref : d.part.refs) {
    for (int byte = 7; byte >= 0; --byte) out->push_back(static_cast<char>(ref >> (8 * byte)));
  }
}

bool read_draw(Reader& in, Op* op) {
  op::Draw d;
  if (!read_draw_part(in, &d)) return false;
  *op = std::move(d);
  return true;
}

template <typename T>
bool read_seq_op(Reader& in, Op* op) {
  T t;
  if (!in.varint(&t.seq)) return false;
  *op = t;
  return true;
}

}  // namespace

bool read_ascending(Reader& in, std::vector<uint64_t>* seqs) {
  uint64_t n = 0, last = 0;
  if (!in.varint(&n) || n > in.left()) return false;  // every seq takes a byte at least
  seqs->reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t d = 0;
    if (!in.varint(&d) || (i != 0 && d == 0) || d > UINT64_MAX - last) return false;
    last += d;
    seqs->push_back(last);
  }
  return true;
}

bool read_draw_part(Reader& in, op::Draw* d) {
  uint64_t n = 0;
  if (!in.varint(&d->part.first_seq) || !in.varint(&d->part.end_seq) ||
      !in.bytes(d->part.seed.data(), d->part.seed.size()) || !in.varint(&d->first_rank) ||
      !in.varint(&n) || n > in.left() / 8) {
    return false;
  }
  d->part.refs.resize(n);
  for (uint64_t& ref : d->part.refs) {
    uint8_t b[8];
    if (!in.bytes(b, 8)) return false;
    for (uint8_t x : b) ref = (ref << 8) | x;
  }
  return true;
}

void put_join(std::string* out, const Tag& tag, std::string_view user, const KeyHash* key,
              std::optional<uint64_t> seq, uint8_t lane, uint16_t probation_s) {
  put_varint(out, kJoin);
  for (uint32_t t : tag) put_varint(out, t);
  put_string(out, user);
  const bool has_lane = lane != JoinRequest::kLastLane;
  put_varint(out, (key != nullptr ? kKeyFollows : 0) | (seq ? kSeqFollows : 0) |
                      (has_lane ? kLaneFollows : 0) | (probation_s != 0 ? kProbationFollows : 0));
  if (key != nullptr) out->append(reinterpret_cast<const char*>(key->data()), key->size());
  if (seq) put_varint(out, *seq);
  if (has_lane) put_varint(out, lane);
  if (probation_s != 0) put_varint(out, probation_s);
}

void put_ticket_op(std::string* out, TicketOp kind, uint64_t seq, EndReason reason) {
  switch (kind) {
    case TicketOp::kAdmit:
      put_varint(out, kAdmitSeqs);
      put_varint(out, 1);
      break;
    case TicketOp::kActivate:
      put_varint(out, kActivate);
      break;
    case TicketOp::kLeave:
      put_varint(out, kLeave);
      break;
    case TicketOp::kExpire:
      put_varint(out, kExpire);
      break;
  }
  put_varint(out, seq);
  if (kind == TicketOp::kExpire) put_varint(out, static_cast<uint8_t>(reason));
}

void put_clear_seqs(std::string* out, std::span<const uint64_t> seqs) {
  put_varint(out, kClearSeqs);
  put_ascending(out, seqs);
}

void put_op(std::string* out, const Op& op) {
  std::visit(
      [out](const auto& o) {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, op::Join>) {
          put_join(out, o.tag, o.user, o.key_hash ? &*o.key_hash : nullptr, o.seq, o.lane,
                   o.probation_s);
        } else if constexpr (std::is_same_v<T, op::Leave>) {
          put_ticket_op(out, TicketOp::kLeave, o.seq, EndReason::kLeft);
        } else if constexpr (std::is_same_v<T, op::Activate>) {
          put_ticket_op(out, TicketOp::kActivate, o.seq, EndReason::kNone);
        } else if constexpr (std::is_same_v<T, op::Admit>) {
          if (o.seqs.empty()) {
            put_varint(out, kAdmit);
            put_varint(out, o.count);
            put_varint(out, o.owed);
          } else {
            put_varint(out, kAdmitSeqs);
            put_ascending(out, o.seqs);
          }
        } else if constexpr (std::is_same_v<T, op::Expire>) {
          put_ticket_op(out, TicketOp::kExpire, o.seq, o.reason);
        } else if constexpr (std::is_same_v<T, op::Seen>) {
          put_varint(out, kSeen);
          put_any_order(out, o.seqs);
        } else if constexpr (std::is_same_v<T, op::Clear>) {
          if (o.seqs) {
            put_clear_seqs(out, *o.seqs);
          } else {
            put_varint(out, kClear);
          }
        } else if constexpr (std::is_same_v<T, op::PutRoom>) {
          put_varint(out, kPutRoom);
          put_room_config(out, o.config);
        } else if constexpr (std::is_same_v<T, op::EventPhase>) {
          put_varint(out, kEventPhase);
          put_varint(out, static_cast<uint64_t>(o.phase));
        } else if constexpr (std::is_same_v<T, op::Draw>) {
          put_draw(out, o);
        } else if constexpr (std::is_same_v<T, op::LaneTurn>) {
          put_varint(out, kLaneTurn);
          put_varint(out, o.lane);
          put_varint(out, o.k);
        } else {
          static_assert(std::is_same_v<T, op::DeleteRoom>);
          put_varint(out, kDeleteRoom);
        }
      },
      op);
}

bool read_op(Reader& in, Op* op) {
  uint64_t type = 0;
  if (!in.varint(&type)) return false;
  switch (type) {
    case kJoin:
      return read_join(in, op);
    case kLeave:
      return read_seq_op<op::Leave>(in, op);
    case kActivate:
      return read_seq_op<op::Activate>(in, op);
    case kAdmit: {
      op::Admit a;
      if (!in.varint(&a.count) || !in.varint(&a.owed) || a.owed > a.count) return false;
      *op = a;
      return true;
    }
    case kExpire: {
      op::Expire e;
      uint64_t reason = 0;
      if (!in.varint(&e.seq) || !in.varint(&reason) || reason == 0 || reason > kMaxReason) {
        return false;
      }
      e.reason = static_cast<EndReason>(reason);
      *op = e;
      return true;
    }
    case kSeen: {
      op::Seen s;
      if (!read_any_order(in, &s.seqs)) return false;
      *op = std::move(s);
      return true;
    }
    case kClear:
      *op = op::Clear{};
      return true;
    case kPutRoom: {
      op::PutRoom p;
      if (!read_room_config(in, &p.config, false)) return false;
      *op = p;
      return true;
    }
    case kDeleteRoom:
      *op = op::DeleteRoom{};
      return true;
    case kEventPhase: {
      uint64_t phase = 0;
      if (!in.varint(&phase) || phase == 0 ||
          phase > static_cast<uint64_t>(RoomEvent::Phase::kEnded)) {
        return false;
      }
      *op = op::EventPhase{static_cast<RoomEvent::Phase>(phase)};
      return true;
    }
    case kAdmitSeqs: {
      op::Admit a;
      if (!read_ascending(in, &a.seqs) || a.seqs.empty()) return false;
      a.count = a.seqs.size();
      *op = std::move(a);
      return true;
    }
    case kClearSeqs: {
      std::vector<uint64_t> seqs;
      if (!read_ascending(in, &seqs)) return false;
      *op = op::Clear{std::move(seqs)};
      return true;
    }
    case kDraw:
      return read_draw(in, op);
    case kLaneTurn: {
      op::LaneTurn t;
      if (!in.number(&t.lane) || t.lane >= LaneSchedule::kMaxLanes || !in.varint(&t.k)) {
        return false;
      }
      *op = t;
      return true;
    }
    default:
      return false;
  }
}

}  // namespace anteroom::codec

namespace anteroom {

bool names_tickets(const Op& op) {
  if (const auto* j = std::get_if<op::Join>(&op)) return j->seq.has_value();
  if (const auto* a = std::get_if<op::Admit>(&op)) return !a->seqs.empty();
  if (const auto* c = std::get_if<op::Clear>(&op)) return c->seqs.has_value();
  return std::holds_alternative<op::Draw>(op) || std::holds_alternative<op::LaneTurn>(op);
}

const char* op_name(const Op& op) {
  static constexpr const char* kNames[] = {"join",        "leave",       "activate", "admit",
                                           "expire",      "seen",        "clear",    "put_room",
                                           "delete_room", "event_phase", "draw",     "lane_turn"};
  static_assert(std::size(kNames) == std::variant_size_v<Op>);
  return kNames[op.index()];
}

}  // namespace anteroom
