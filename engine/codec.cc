#include "engine/codec.h"

#include <utility>
#include <vector>

namespace anteroom::codec {

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

bool Reader::varint(uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos_ >= s_.size()) return false;
    auto b = static_cast<uint8_t>(s_[pos_++]);
    *v |= uint64_t{b & 0x7fu} << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

bool Reader::string(std::string* out) {
  uint64_t n = 0;
  if (!varint(&n) || n > s_.size() - pos_) return false;
  out->assign(s_.substr(pos_, n));
  pos_ += n;
  return true;
}

bool Reader::bytes(uint8_t* out, size_t n) {
  if (n > left()) return false;
  std::memcpy(out, s_.data() + pos_, n);
  pos_ += n;
  return true;
}

namespace {
// Numbered fields of a room's configuration; docs/log-format.md lists them.
enum RoomField : uint64_t {
  kTrustUser = 1,
  kMode = 2,
  kIpJoinsPerMinute = 3,
  kPowDifficulty = 4,
  kEventPrequeueAt = 10,  // zigzag, like the other event times
  kEventStartAt = 11,
  kEventEndAt = 12,
  kEventShuffle = 13,
  kEventCapacity = 14,
  kEventAdmitPerSecond = 15,
  kEventMode = 16,
  kEventSeed0 = 17,   // 17-20: a seed itself (logs before seeds were derived), four 8-byte words
  kEventNonce0 = 24,  // 24-27: the event's nonce, four 8-byte words, little-endian
  kEventPhase = 21,
  kEventPrequeueSeq = 22,
  kEventStartSeq = 23,
  kPage = 30,   // a length-prefixed string, not a varint
  kParts = 31,  // which parts a put sets (cluster records; absent: all)
  // Length-prefixed strings too:
  kGate = 32,    // RoomConfig::gate as it is
  kLanes = 33,   // the lanes' weights, each a varint
  kPasses = 34,  // the passes (put_passes), then passes_prune_before_ms (zigzag varint)
};

// Fields held as strings (put_room_config writes them after the varint ones).
bool string_field(uint64_t field) {
  return field == kPage || field == kGate || field == kLanes || field == kPasses;
}

void put_passes(std::string* out, const RoomConfig& c) {
  std::string p;
  put_varint(&p, c.passes.size());
  for (const RoomConfig::Pass& x : c.passes) {
    put_string(&p, x.id);
    put_string(&p, x.label);
    put_varint(&p, zigzag(x.expires_at_ms));
    put_varint(&p, x.uses);
    put_varint(&p, x.revoked ? 1 : 0);
  }
  put_varint(&p, zigzag(c.passes_prune_before_ms));
  put_string(out, p);
}

bool read_passes(std::string_view bytes, RoomConfig* c) {
  Reader in(bytes);
  uint64_t n = 0, prune = 0;
  if (!in.varint(&n) || n > RoomConfig::kMaxPasses) return false;
  c->passes.resize(n);
  for (RoomConfig::Pass& x : c->passes) {
    uint64_t at = 0, revoked = 0;
    if (!in.string(&x.id) || !in.string(&x.label) || !in.varint(&at) || !in.number(&x.uses) ||
        !in.varint(&revoked) || revoked > 1) {
      return false;
    }
    x.expires_at_ms = unzigzag(at);
    x.revoked = revoked == 1;
  }
  if (!in.varint(&prune) || !in.done()) return false;
  c->passes_prune_before_ms = unzigzag(prune);
  return true;
}

bool read_lanes(std::string_view bytes, RoomConfig* c) {
  Reader in(bytes);
  c->lanes.clear();
  while (!in.done()) {
    uint32_t w = 0;
    if (!in.number(&w) || c->lanes.size() >= 64) return false;
    c->lanes.push_back(w);
  }
  return true;
}

uint64_t nonce_word(const RoomEvent& e, int i) {
  uint64_t w = 0;
  for (int b = 7; b >= 0; --b) w = (w << 8) | e.nonce[i * 8 + b];
  return w;
}
void set_nonce_word(RoomEvent* e, int i, uint64_t w) {
  for (int b = 0; b < 8; ++b) e->nonce[i * 8 + b] = static_cast<uint8_t>(w >> (8 * b));
}

// Reads the value of numbered field `field` into *c; false if the field or value is unknown.
bool read_field(uint64_t field, uint64_t value, RoomConfig* c) {
  RoomEvent& e = c->event;
  switch (field) {
    case kTrustUser:
      c->trust_user = value == 1;
      return value <= 1;
    case kMode:
      c->mode = static_cast<RoomMode>(value);
      return value <= static_cast<uint64_t>(RoomMode::kQueueAll);
    case kIpJoinsPerMinute:
      c->ip_joins_per_minute = static_cast<uint32_t>(value);
      return value <= UINT32_MAX;
    case kPowDifficulty:
      c->pow_difficulty = static_cast<uint8_t>(value);
      return value <= 32 || value == RoomConfig::kPowAuto;
    case kEventPrequeueAt:
      e.prequeue_at_ms = unzigzag(value);
      return true;
    case kEventStartAt:
      e.start_at_ms = unzigzag(value);
      return true;
    case kEventEndAt:
      e.end_at_ms = unzigzag(value);
      return true;
    case kEventShuffle:
      e.shuffle = value == 1;
      return value <= 1;
    case kEventCapacity:
      e.capacity = static_cast<uint32_t>(value);
      return value <= UINT32_MAX;
    case kEventAdmitPerSecond:
      e.admit_per_second = static_cast<uint32_t>(value);
      return value <= UINT32_MAX;
    case kEventMode:
      e.mode = static_cast<RoomMode>(value);
      return value <= static_cast<uint64_t>(RoomMode::kQueueAll);
    case kEventSeed0:
    case kEventSeed0 + 1:
    case kEventSeed0 + 2:
    case kEventSeed0 + 3:
      e.legacy_seed = true;
      set_nonce_word(&e, static_cast<int>(field - kEventSeed0), value);
      return true;
    case kEventNonce0:
    case kEventNonce0 + 1:
    case kEventNonce0 + 2:
    case kEventNonce0 + 3:
      set_nonce_word(&e, static_cast<int>(field - kEventNonce0), value);
      return true;
    case kEventPhase:
      e.phase = static_cast<RoomEvent::Phase>(value);
      return value <= static_cast<uint64_t>(RoomEvent::Phase::kEnded);
    case kEventPrequeueSeq:
      e.prequeue_seq = value;
      return true;
    case kEventStartSeq:
      e.start_seq = value;
      return true;
    case kParts:
      c->parts = static_cast<uint8_t>(value);
      return value >= 1 && value <= RoomConfig::kAllParts;
    default:
      return false;
  }
}
}  // namespace

void put_room_config(std::string* out, const RoomConfig& c) {
  for (uint64_t v :
       {uint64_t{c.capacity}, uint64_t{static_cast<uint8_t>(c.admission)},
        uint64_t{c.admit_per_second}, uint64_t{c.allowed_ttl_seconds},
        uint64_t{c.session_ttl_seconds}, uint64_t{c.heartbeat_timeout_seconds}, c.max_waiting}) {
    put_varint(out, v);
  }
  std::vector<std::pair<uint64_t, uint64_t>> fields = {{kTrustUser, c.trust_user ? 1 : 0},
                                                       {kMode, static_cast<uint64_t>(c.mode)}};
  if (c.parts != RoomConfig::kAllParts) fields.emplace_back(kParts, c.parts);
  if (c.ip_joins_per_minute != 0) fields.emplace_back(kIpJoinsPerMinute, c.ip_joins_per_minute);
  if (c.pow_difficulty != 0) fields.emplace_back(kPowDifficulty, c.pow_difficulty);
  if (const RoomEvent& e = c.event; e.exists()) {
    fields.insert(fields.end(), {{kEventPrequeueAt, zigzag(e.prequeue_at_ms)},
                                 {kEventStartAt, zigzag(e.start_at_ms)},
                                 {kEventEndAt, zigzag(e.end_at_ms)},
                                 {kEventShuffle, e.shuffle ? 1 : 0},
                                 {kEventPhase, static_cast<uint64_t>(e.phase)},
                                 {kEventPrequeueSeq, e.prequeue_seq},
                                 {kEventStartSeq, e.start_seq}});
    const uint64_t first = e.legacy_seed ? kEventSeed0 : kEventNonce0;
    for (int i = 0; i < 4; ++i) fields.emplace_back(first + i, nonce_word(e, i));
    if (e.capacity) fields.emplace_back(kEventCapacity, *e.capacity);
    if (e.admit_per_second) fields.emplace_back(kEventAdmitPerSecond, *e.admit_per_second);
    if (e.mode) fields.emplace_back(kEventMode, static_cast<uint64_t>(*e.mode));
  }
  const bool passes = !c.passes.empty() || c.passes_prune_before_ms != 0;
  put_varint(out, fields.size() + (c.page.empty() ? 0 : 1) + (c.gate.empty() ? 0 : 1) +
                      (c.lanes.empty() ? 0 : 1) + (passes ? 1 : 0));  // numbered fields follow
  for (const auto& [field, value] : fields) {
    put_varint(out, field);
    put_varint(out, value);
  }
  if (!c.page.empty()) {
    put_varint(out, kPage);
    put_string(out, c.page);
  }
  if (!c.gate.empty()) {
    put_varint(out, kGate);
    put_string(out, c.gate);
  }
  if (!c.lanes.empty()) {
    std::string w;
    for (uint32_t x : c.lanes) put_varint(&w, x);
    put_varint(out, kLanes);
    put_string(out, w);
  }
  if (passes) {
    put_varint(out, kPasses);
    put_passes(out, c);
  }
}

bool read_room_config(Reader& in, RoomConfig* c, bool numbered_optional) {
  uint8_t admission = 0;
  if (!in.number(&c->capacity) || !in.number(&admission) || admission > 1 ||
      !in.number(&c->admit_per_second) || !in.number(&c->allowed_ttl_seconds) ||
      !in.number(&c->session_ttl_seconds) || !in.number(&c->heartbeat_timeout_seconds) ||
      !in.varint(&c->max_waiting)) {
    return false;
  }
  c->admission = static_cast<AdmissionMode>(admission);
  if (numbered_optional && in.done()) return true;
  uint64_t fields = 0;
  if (!in.varint(&fields) || fields > in.left()) return false;
  for (uint64_t i = 0; i < fields; ++i) {
    uint64_t field = 0, value = 0;
    if (!in.varint(&field)) return false;
    if (string_field(field)) {
      std::string s;
      if (!in.string(&s)) return false;
      if (field == kPage && s.size() <= RoomConfig::kMaxPageBytes) {
        c->page = std::move(s);
      } else if (field == kGate && s.size() <= RoomConfig::kMaxGateBytes) {
        c->gate = std::move(s);
      } else if (!(field == kLanes && read_lanes(s, c)) &&
                 !(field == kPasses && read_passes(s, c))) {
        return false;
      }
      continue;
    }
    if (!in.varint(&value) || !read_field(field, value, c)) return false;
  }
  return true;
}

}  // namespace anteroom::codec
