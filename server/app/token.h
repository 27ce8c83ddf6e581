// Admission tokens: standard JWTs (RFC 7519) signed with HS256, so any JWT library checks
// them with the shared secret.
//
// Claims: iss ("anteroom"), sub (the ticket id), room, usr (when the join named a user),
// iat and exp (seconds since the Unix epoch).
//
// Thread safety: TokenSigner is immutable after construction; use it from any thread.
#pragma once

#include <boost/json/object.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace anteroom {

struct TokenClaims {
  std::string ticket;
  std::string room;
  std::string user;  // empty: not in the token
  int64_t issued_at = 0;
  int64_t expires_at = 0;
};

enum class TokenError { kMalformed, kBadAlgorithm, kBadSignature, kExpired, kWrongRoom };
const char* token_error_text(TokenError e);

class TokenSigner {
 public:
  explicit TokenSigner(std::string secret) : secret_(std::move(secret)) {}

  std::string sign(const TokenClaims& claims) const;
  // The claims, if the token is well formed, signed with our secret using HS256 (and nothing
  // else: "none" and every other algorithm are refused), not expired at `now_s`, and for
  // `room`. The signature is compared in constant time.
  std::optional<TokenClaims> verify(std::string_view token, std::string_view room, int64_t now_s,
                                    TokenError* why = nullptr) const;

 private:
  std::string secret_;
};

// The claims of an HS256 JWT signed with `secret` (and nothing else: "none" and every other
// algorithm are refused; the signature is compared in constant time); no claim is checked.
std::optional<boost::json::object> verify_hs256(std::string_view token, std::string_view secret,
                                                TokenError* why);
// A user assertion from the protected service: an HS256 JWT signed with `secret` (the
// --user-secret) whose `sub` is `user`, whose `exp` (required) has not passed, and whose
// `room`, if it has one, is `room`.
bool user_token_names(std::string_view token, std::string_view secret, std::string_view user,
                      std::string_view room, int64_t now_s);
std::string hmac_sha256(std::string_view key, std::string_view input);

// base64url without padding (RFC 4648 section 5), as JWTs use.
std::string base64url_encode(std::string_view bytes);
std::optional<std::string> base64url_decode(std::string_view text);

}  // namespace anteroom
