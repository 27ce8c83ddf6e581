#include "server/app/keys.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "engine/hex.h"

namespace anteroom {

KeyHash hash_key(std::string_view key) {
  KeyHash h{};
  SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(), h.data());
  return h;
}

std::optional<KeyHash> parse_key_hash(std::string_view hex) {
  if (hex.size() != 64) return std::nullopt;
  KeyHash h{};
  for (size_t i = 0; i < 64; ++i) {
    const char c = hex[i];
    int v = 0;
    if (c >= '0' && c <= '9') {
      v = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      v = c - 'a' + 10;
    } else {
      return std::nullopt;
    }
    h[i / 2] = static_cast<uint8_t>(i % 2 == 0 ? v << 4 : h[i / 2] | v);
  }
  return h;
}

std::string key_hash_hex(const KeyHash& h) { return to_hex(h.data(), h.size()); }

bool same_hash(const KeyHash& a, const KeyHash& b) {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace anteroom
