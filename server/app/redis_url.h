// What --cluster names: the Redis a cluster of nodes shares, as URLs or bare addresses.
//
//   HOST:PORT[,HOST:PORT...]                       plain TCP; several: a Redis Cluster's nodes
//   redis://[USER[:PASSWORD]@]HOST:PORT[/DB][,...]  the same as a URL (every item alike; USER
//                                                  alone: the password is given apart)
//   rediss://...                                   TLS
//   redis-sentinel://HOST:PORT[,HOST:PORT...]/MASTER  the master found through Sentinel
//
// Hosts may be [IPv6]. USER and PASSWORD are percent-decoded (RFC 3986 userinfo). A parse
// error says what is wrong without repeating the value, which may hold a password.
//
// Thread safety: a value type and a pure function.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/status.h"

namespace anteroom {

struct RedisTarget {
  enum class Scheme { kPlain, kTls, kSentinel };
  Scheme scheme = Scheme::kPlain;
  std::vector<std::pair<std::string, uint16_t>> hosts;  // Redis nodes, or Sentinels
  std::string user;                                     // empty: the default user
  std::string password;                                 // empty: no AUTH
  std::string master;                                   // Sentinel's master name
  unsigned db = 0;
  bool url = false;  // written as a URL (not bare HOST:PORT)
};

// kInvalidArgument naming what does not read (never the password).
Result<RedisTarget> parse_redis_target(std::string_view text);

}  // namespace anteroom
