// The record types logs of versions 1 to 3 wrote, one per kind of change, read into the ops
// version 4 writes (log_records.h lists both), so recovery and check-log see one vocabulary.
#include <iterator>

#include "engine/codec.h"
#include "engine/op_codec.h"
#include "storage/log_records.h"

namespace anteroom::logrec {
namespace {

using In = codec::Reader;

std::optional<Any> parse_room_put(In& in) {
  RoomOp r;
  op::PutRoom put;
  if (!in.string(&r.room) || !codec::read_room_config(in, &put.config, true)) return std::nullopt;
  r.op = std::move(put);
  return r;
}

std::optional<Any> parse_room_delete(In& in) {
  RoomOp r;
  if (!in.string(&r.room)) return std::nullopt;
  r.op = op::DeleteRoom{};
  return r;
}

std::optional<Any> parse_join(In& in) {
  RoomOp r;
  op::Join j;
  uint64_t seq = 0;
  if (!in.string(&r.room) || !in.varint(&seq) || !in.number(&j.tag[0]) || !in.number(&j.tag[1]) ||
      !in.number(&j.tag[2]) || !in.string(&j.user) || !in.signed_number(&r.wall_ms)) {
    return std::nullopt;
  }
  j.seq = seq;
  if (!in.done()) {  // flags: written since keys existed, for a join with a key
    uint64_t flags = 0;
    KeyHash key{};
    if (!in.varint(&flags) || flags != 1 || !in.bytes(key.data(), key.size())) return std::nullopt;
    j.key_hash = key;
  }
  r.op = std::move(j);
  return r;
}

// A state record as the op that made the change; the pairs of state and reason the engine
// wrote, and no other.
std::optional<Op> state_op(uint64_t seq, TicketState state, EndReason reason) {
  switch (state) {
    case TicketState::kAllowed:
      if (reason == EndReason::kNone) return op::Admit{1, 0, {seq}};
      break;
    case TicketState::kActive:
      if (reason == EndReason::kNone) return op::Activate{seq};
      break;
    case TicketState::kLeft:
      if (reason == EndReason::kLeft || reason == EndReason::kNone) return op::Leave{seq};
      if (reason == EndReason::kCleared) return op::Clear{std::vector<uint64_t>{seq}};
      break;
    case TicketState::kExpired:
      if (reason == EndReason::kAllowedUnused || reason == EndReason::kSessionIdle ||
          reason == EndReason::kAbandoned) {
        return op::Expire{seq, reason};
      }
      break;
    case TicketState::kWaiting:
      break;
  }
  return std::nullopt;
}

std::optional<Any> parse_state(In& in) {
  RoomOp r;
  uint64_t seq = 0;
  uint8_t state = 0, reason = 0;
  if (!in.string(&r.room) || !in.varint(&seq) || !in.number(&state) || !in.number(&reason) ||
      state < 1 || state > 5 || reason > 5 || !in.signed_number(&r.wall_ms)) {
    return std::nullopt;
  }
  std::optional<Op> op =
      state_op(seq, static_cast<TicketState>(state), static_cast<EndReason>(reason));
  if (!op) return std::nullopt;
  r.op = std::move(*op);
  return r;
}

std::optional<Any> parse_clear(In& in) {  // version 1: every ticket then WAITING
  RoomOp r;
  if (!in.string(&r.room) || !in.signed_number(&r.wall_ms)) return std::nullopt;
  r.op = op::Clear{};
  return r;
}

std::optional<Any> parse_clear_seqs(In& in) {
  RoomOp r;
  std::vector<uint64_t> seqs;
  if (!in.string(&r.room) || !in.signed_number(&r.wall_ms) || !codec::read_ascending(in, &seqs))
    return std::nullopt;
  r.op = op::Clear{std::move(seqs)};
  return r;
}

std::optional<Any> parse_draw(In& in) {  // no time: it follows the room_put that started it
  RoomOp r;
  op::Draw d;
  if (!in.string(&r.room) || !codec::read_draw_part(in, &d)) return std::nullopt;
  r.op = std::move(d);
  return r;
}

using Parser = std::optional<Any> (*)(In&);
constexpr Parser kParsers[] = {nullptr,    nullptr,          parse_room_put, parse_room_delete,
                               parse_join, parse_state,      parse_clear,    nullptr,
                               nullptr,    parse_clear_seqs, parse_draw};

}  // namespace

std::optional<Any> decode_v3(const logfmt::Record& rec) {
  In in(rec.payload);
  if (rec.type >= std::size(kParsers) || kParsers[rec.type] == nullptr) return std::nullopt;
  std::optional<Any> any = kParsers[rec.type](in);
  if (!any || !in.done()) return std::nullopt;
  return any;
}

}  // namespace anteroom::logrec
