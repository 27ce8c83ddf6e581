#include "engine/codec.h"

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
enum RoomField : uint64_t { kTrustUser = 1 };
}  // namespace

void put_room_config(std::string* out, const RoomConfig& c) {
  for (uint64_t v :
       {uint64_t{c.capacity}, uint64_t{static_cast<uint8_t>(c.admission)},
        uint64_t{c.admit_per_second}, uint64_t{c.allowed_ttl_seconds},
        uint64_t{c.session_ttl_seconds}, uint64_t{c.heartbeat_timeout_seconds}, c.max_waiting}) {
    put_varint(out, v);
  }
  put_varint(out, 1);  // numbered fields follow
  put_varint(out, kTrustUser);
  put_varint(out, c.trust_user ? 1 : 0);
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
    if (!in.varint(&field) || !in.varint(&value)) return false;
    if (field == kTrustUser && value <= 1) {
      c->trust_user = value == 1;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace anteroom::codec
