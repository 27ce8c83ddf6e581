// The ES256 signer's caches (token.h says what each saves), each a fixed-size, direct-mapped
// table of 16,384 slots (a new entry replaces whatever held its slot), each slot under one
// of 64 mutexes: memory is bounded whatever the traffic.
//
//   signed    claims without iat -> the token signed for them
//   verified  SHA-256 of a token -> its claims (the signature verified, or we signed it)
//   refused   SHA-256 of a token -> why its header, kid or signature failed
//
// Keyed by the whole token's SHA-256, a hit is the very same bytes.
//
// Thread safety: every method from any thread.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "server/app/token.h"

namespace anteroom {

using TokenDigest = std::array<unsigned char, 32>;
TokenDigest token_digest(std::string_view token);

class TokenCache {
 public:
  TokenCache();
  ~TokenCache();

  std::optional<std::string> signed_token(const std::string& claims_without_iat) const;
  void store_signed(const std::string& claims_without_iat, const std::string& token);
  std::optional<TokenClaims> verified(const TokenDigest& d) const;
  void store_verified(const TokenDigest& d, const TokenClaims& c);
  std::optional<TokenError> refused(const TokenDigest& d) const;
  void store_refused(const TokenDigest& d, TokenError why);

 private:
  struct Tables;
  std::unique_ptr<Tables> t_;
};

}  // namespace anteroom
