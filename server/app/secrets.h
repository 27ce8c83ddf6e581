// The token secret and the admin key: taken from the options when given, else read from
// the data directory, else generated (32 random bytes, hex) and written there with mode 0600
// so a restart keeps them.
#pragma once

#include <string>
#include <string_view>

#include "engine/status.h"

namespace anteroom {

// The shortest secrets start-up accepts.
constexpr size_t kMinTokenSecret = 32;
constexpr size_t kMinAdminKey = 16;

struct Secrets {
  std::string token_secret;
  std::string admin_key;
  bool admin_key_generated = false;  // true: print it, the operator has not seen it
};

// Why `value` is too weak to be `what` (at least `min_bytes`, and at least 8 different
// characters), or empty if it will do.
std::string weak_secret(std::string_view what, std::string_view value, size_t min_bytes);

Result<Secrets> load_secrets(const std::string& data_dir, std::string token_secret,
                             std::string admin_key);

}  // namespace anteroom
