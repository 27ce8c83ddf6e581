// The keys a visitor's client keeps (bound admissions) and how a returning visitor proves
// they are the one who holds a user's place.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "engine/model.h"

namespace anteroom {

// SHA-256 of the key's bytes.
KeyHash hash_key(std::string_view key);
// 64 lowercase hex characters -> the hash; nullopt for anything else.
std::optional<KeyHash> parse_key_hash(std::string_view hex);
std::string key_hash_hex(const KeyHash& h);
// Constant time.
bool same_hash(const KeyHash& a, const KeyHash& b);

// What a join may carry to prove it comes from the visitor who holds the user's place.
struct UserProof {
  std::optional<std::string> key;         // the key the ticket was bound to
  std::optional<std::string> user_token;  // an assertion signed by the protected service
  bool invited = false;  // an invite the service signed for this user (Api::invite_terms)
};

}  // namespace anteroom
