// One Redis reply, copied out of hiredis's reader (cluster/redis_connection.cc) so that no
// other file includes hiredis.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace anteroom::cluster {

struct RedisReply {
  enum class Kind : uint8_t { kString, kStatus, kError, kInteger, kNil, kArray };
  Kind kind = Kind::kNil;
  std::string str;  // kString, kStatus, kError
  int64_t integer = 0;
  std::vector<RedisReply> elements;  // kArray

  bool is_error() const { return kind == Kind::kError; }
  bool is_nil() const { return kind == Kind::kNil; }
  bool is_array() const { return kind == Kind::kArray; }
  static RedisReply error(std::string why) {
    RedisReply r;
    r.kind = Kind::kError;
    r.str = std::move(why);
    return r;
  }
};

}  // namespace anteroom::cluster
