#include "cluster/records.h"

#include <algorithm>
#include <type_traits>

#include "engine/codec.h"
#include "engine/op_codec.h"

namespace anteroom::cluster {
namespace {

using codec::put_string;
using codec::put_varint;
using codec::zigzag;

constexpr uint64_t kVersion = 2;
constexpr uint64_t kOldestVersion = 1;  // snapshots before events (no draw)
// Snapshots: 3 adds each ticket's lane and probation, and the lanes' last turn; 4 adds the
// ended tickets whose memory the room still holds (LEFT and EXPIRED states).
constexpr uint64_t kSnapshotVersion = 4;
constexpr uint64_t kMaxReason = static_cast<uint64_t>(EndReason::kCleared);

void put_key(std::string* out, const std::optional<KeyHash>& key) {
  put_varint(out, key ? 1 : 0);
  if (key) out->append(reinterpret_cast<const char*>(key->data()), key->size());
}

bool read_key(codec::Reader& in, std::optional<KeyHash>* key) {
  uint64_t flags = 0;
  if (!in.varint(&flags) || flags > 1) return false;
  if (flags == 0) return true;
  KeyHash k{};
  if (!in.bytes(k.data(), k.size())) return false;
  *key = k;
  return true;
}

// "ms-seq", both decimal numbers, as Redis numbers stream entries.
bool valid_stream_id(std::string_view id) {
  const auto dash = id.find('-');
  auto digits = [](std::string_view s) {
    return !s.empty() && s.size() <= 20 &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  return dash != std::string_view::npos && digits(id.substr(0, dash)) &&
         digits(id.substr(dash + 1));
}

Status damaged(const char* what) {
  return Status(Code::kInvalidArgument, std::string("damaged ") + what);
}

}  // namespace

std::string encode_record(const Record& r) {
  std::string out;
  put_varint(&out, kVersion);
  put_string(&out, r.origin);
  put_varint(&out, r.batch);
  put_varint(&out, zigzag(r.at_ms));
  put_varint(&out, r.ops.size());
  for (const Op& op : r.ops) codec::put_op(&out, op);
  return out;
}

Result<Record> decode_record(std::string_view bytes) {
  codec::Reader in(bytes);
  Record r;
  uint64_t version = 0, n = 0;
  if (!in.varint(&version) || version != kVersion || !in.string(&r.origin) ||
      !in.varint(&r.batch) || !in.signed_number(&r.at_ms) || !in.varint(&n) || n > in.left()) {
    return damaged("record header");
  }
  r.ops.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    Op op;
    if (!codec::read_op(in, &op)) return damaged("record op");
    if (names_tickets(op)) return damaged("record op (a log's, naming tickets)");
    r.ops.push_back(std::move(op));
  }
  if (!in.done()) return damaged("record (bytes left over)");
  return r;
}

std::string encode_snapshot(const Snapshot& s) {
  std::string out;
  const RoomImage& img = s.image;
  put_varint(&out, kSnapshotVersion);
  put_varint(&out, s.records);
  put_string(&out, s.stream_id);
  codec::put_room_config(&out, img.config);
  put_varint(&out, zigzag(img.epoch_ms));
  put_varint(&out, img.next_seq);
  const RoomCounters& c = img.counters;
  for (uint64_t v : {c.joined_total, c.admitted_total, c.left_total, c.expired_allowed_unused,
                     c.expired_session_idle, c.expired_abandoned, c.cleared_total}) {
    put_varint(&out, v);
  }
  put_varint(&out, img.tickets.size());
  uint64_t last = 0;
  for (const RestoredTicket& t : img.tickets) {
    put_varint(&out, t.seq - last);
    last = t.seq;
    for (uint32_t x : t.tag) put_varint(&out, x);
    put_string(&out, t.user);
    put_key(&out, t.key_hash);
    put_varint(&out, static_cast<uint8_t>(t.state));
    put_varint(&out, static_cast<uint8_t>(t.reason));
    put_varint(&out, zigzag(t.admitted_at_ms));
    put_varint(&out, zigzag(t.seen_at_ms));
    put_varint(&out, t.lane);
    put_varint(&out, t.probation_s);
  }
  put_varint(&out, img.draw ? 1 : 0);
  if (img.draw) {
    put_varint(&out, img.draw->first_seq);
    put_varint(&out, img.draw->end_seq);
    out.append(reinterpret_cast<const char*>(img.draw->seed.data()), img.draw->seed.size());
    put_varint(&out, img.draw->refs.size());
    for (uint64_t ref : img.draw->refs) {
      for (int b = 7; b >= 0; --b) out.push_back(static_cast<char>(ref >> (8 * b)));
    }
  }
  const LaneSchedule::Turn& turn = img.lanes_turn;
  put_varint(&out, turn.taken ? 1 : 0);
  if (turn.taken) {
    put_varint(&out, turn.lane);
    put_varint(&out, turn.k);
  }
  return out;
}

Result<Snapshot> decode_snapshot(std::string_view bytes) {
  codec::Reader in(bytes);
  Snapshot s;
  RoomImage& img = s.image;
  RoomCounters& c = img.counters;
  uint64_t version = 0, n = 0;
  if (!in.varint(&version) || version < kOldestVersion || version > kSnapshotVersion ||
      !in.varint(&s.records) || !in.string(&s.stream_id) ||
      !codec::read_room_config(in, &img.config, false) || !in.signed_number(&img.epoch_ms) ||
      !in.varint(&img.next_seq)) {
    return damaged("snapshot header");
  }
  for (uint64_t* v : {&c.joined_total, &c.admitted_total, &c.left_total, &c.expired_allowed_unused,
                      &c.expired_session_idle, &c.expired_abandoned, &c.cleared_total}) {
    if (!in.varint(v)) return damaged("snapshot counters");
  }
  if (!in.varint(&n) || n > in.left()) return damaged("snapshot ticket count");
  img.tickets.reserve(n);
  uint64_t last = 0;
  for (uint64_t i = 0; i < n; ++i) {
    RestoredTicket t;
    uint64_t delta = 0;
    uint8_t state = 0, reason = 0;
    if (!in.varint(&delta) || !in.number(&t.tag[0]) || !in.number(&t.tag[1]) ||
        !in.number(&t.tag[2]) || !in.string(&t.user) || !read_key(in, &t.key_hash) ||
        !in.number(&state) || !in.number(&reason) || !in.signed_number(&t.admitted_at_ms) ||
        !in.signed_number(&t.seen_at_ms) || state < static_cast<uint8_t>(TicketState::kWaiting) ||
        state > static_cast<uint8_t>(version >= 4 ? TicketState::kExpired : TicketState::kActive) ||
        reason > kMaxReason || (i > 0 && delta == 0) || (!t.user.empty() && !valid_user(t.user)) ||
        (version >= 3 &&
         (!in.number(&t.lane) || t.lane > JoinRequest::kLastLane || !in.number(&t.probation_s) ||
          t.probation_s > JoinRequest::kMaxProbation))) {
      return damaged("snapshot ticket");
    }
    last += delta;
    t.seq = last;
    t.state = static_cast<TicketState>(state);
    t.reason = static_cast<EndReason>(reason);
    img.tickets.push_back(std::move(t));
  }
  uint64_t has_draw = 0;
  if (version >= 2 && (!in.varint(&has_draw) || has_draw > 1)) return damaged("snapshot draw");
  if (has_draw == 1) {
    DrawInfo d;
    if (!in.varint(&d.first_seq) || !in.varint(&d.end_seq) || d.end_seq < d.first_seq ||
        !in.bytes(d.seed.data(), d.seed.size()) || !in.varint(&n) || n > in.left() / 8) {
      return damaged("snapshot draw");
    }
    d.refs.resize(n);
    for (uint64_t& ref : d.refs) {
      uint8_t b[8];
      if (!in.bytes(b, 8)) return damaged("snapshot draw");
      for (uint8_t x : b) ref = (ref << 8) | x;
    }
    img.draw = std::move(d);
  }
  uint64_t taken = 0;
  if (version >= 3 && (!in.varint(&taken) || taken > 1)) return damaged("snapshot lanes");
  if (taken == 1) {
    LaneSchedule::Turn& turn = img.lanes_turn;
    turn.taken = true;
    if (!in.number(&turn.lane) || turn.lane >= LaneSchedule::kMaxLanes || !in.varint(&turn.k)) {
      return damaged("snapshot lanes");
    }
  }
  if (!in.done()) return damaged("snapshot (bytes left over)");
  if (!valid_stream_id(s.stream_id)) return damaged("snapshot stream id");
  return s;
}

}  // namespace anteroom::cluster
