// Bytes for records: unsigned LEB128 varints, zigzag for signed numbers, length-prefixed
// strings, and a room's configuration. The log on disk (storage/) and the records a cluster
// appends to Redis (cluster/) are both written with these.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>

#include "engine/model.h"

namespace anteroom::codec {

void put_varint(std::string* out, uint64_t v);
void put_string(std::string* out, std::string_view s);
inline uint64_t zigzag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline int64_t unzigzag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

// Reads what the put_ functions wrote; every read says whether it found a whole field.
class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s) {}
  bool varint(uint64_t* v);
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
  bool string(std::string* out);
  bool bytes(uint8_t* out, size_t n);
  bool done() const { return pos_ == s_.size(); }
  size_t left() const { return s_.size() - pos_; }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

// A room's configuration: seven varints (capacity, admission, admit_per_second,
// allowed_ttl_seconds, session_ttl_seconds, heartbeat_timeout_seconds, max_waiting), then a
// count of numbered fields and each field's number and varint value (1: trust_user, 2: mode,
// 10-27: the scheduled event; codec.cc lists them). A reader refuses a number it does not
// know: an unknown field is damage, never skipped.
void put_room_config(std::string* out, const RoomConfig& c);
// Reads the seven fixed fields and, unless `numbered_optional` and the input ends there
// (logs written before numbered fields existed), the numbered ones. False on damage.
bool read_room_config(Reader& in, RoomConfig* c, bool numbered_optional);

}  // namespace anteroom::codec
