// What a ticket may carry beyond its slot: the user it was joined for and the hash of the
// client's key (a bound admission). Allocated at join only when there is something to keep,
// immutable afterwards, freed with the ticket's segment (engine/line.h).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "engine/model.h"

namespace anteroom {

// Two bytes, then the key hash (when bound), then the name, in one allocation: a named
// unbound ticket pays for its name only.
struct TicketExtra {
  uint8_t user_len = 0;  // at most 128 (valid_user)
  uint8_t has_key = 0;
  const char* bytes() const { return reinterpret_cast<const char*>(this + 1); }
  std::string_view user() const { return {bytes() + (has_key ? sizeof(KeyHash) : 0), user_len}; }
  // Null when the ticket is not bound.
  const KeyHash* key() const {
    return has_key ? reinterpret_cast<const KeyHash*>(bytes()) : nullptr;
  }
  std::optional<KeyHash> key_hash() const {
    return has_key ? std::optional<KeyHash>(*key()) : std::nullopt;
  }
};
static_assert(alignof(KeyHash) == 1);

// Null when there is neither a user nor a key. `user` is at most 128 bytes (valid_user).
const TicketExtra* make_extra(std::string_view user, const std::optional<KeyHash>& key);
void free_extra(const TicketExtra* e);  // null is fine
// Bytes make_extra() takes for these.
size_t extra_bytes(std::string_view user, bool has_key);

}  // namespace anteroom
