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

struct TicketExtra {
  uint16_t user_len = 0;
  bool has_key = false;
  KeyHash key{};
  // The user's name follows in the same allocation.
  std::string_view user() const { return {reinterpret_cast<const char*>(this + 1), user_len}; }
  std::optional<KeyHash> key_hash() const {
    return has_key ? std::optional<KeyHash>(key) : std::nullopt;
  }
};

// Null when there is neither a user nor a key. `user` is at most 128 bytes (valid_user).
const TicketExtra* make_extra(std::string_view user, const std::optional<KeyHash>& key);
void free_extra(const TicketExtra* e);  // null is fine
// Bytes make_extra() took for these (for statistics).
size_t extra_bytes(std::string_view user);

}  // namespace anteroom
