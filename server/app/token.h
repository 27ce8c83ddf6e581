// Admission tokens: standard JWTs (RFC 7519) signed with HS256 (a shared secret) or ES256
// (a P-256 key whose public half is served as a JWKS), so any JWT library checks them.
//
// Header: alg, typ ("JWT") and kid (ES256: the key's RFC 7638 thumbprint; HS256: a digest
// of the secret that reveals nothing of it). Claims: iss ("anteroom"), sub (the ticket id),
// room, usr (when the join named a user), cnf ({"kh": hex SHA-256 of the key} when the
// ticket is bound to one), iat and exp (seconds since the Unix epoch).
//
// Verification is pinned to the configured algorithm: "none", the other algorithm (an HS256
// token whose HMAC key is the ES256 public key: algorithm confusion) and unknown kids are
// refused before any signature is checked.
//
// ES256 caches (docs/security.md): a token signed for the same claims but iat is handed out
// again until its exp changes (status reads of an admitted ticket sign nothing new), and a
// token whose signature verified, or that this signer made, is remembered by its SHA-256, so
// verifying it (the gate sees the cookie it set) costs a hash and a lookup; its exp and room
// are checked on every use. Both are fixed-size tables of 16,384 entries (bounded memory).
//
// Thread safety: TokenSigner is immutable after construction apart from its caches, which
// are internally locked; use it from any thread.
#pragma once

#include <boost/json/object.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "engine/status.h"
#include "server/app/token_keys.h"

namespace anteroom {

struct TokenClaims {
  std::string ticket;
  std::string room;
  std::string user;  // empty: not in the token
  // A bound admission (SPEC section 9): hex SHA-256 of the client's key, claim
  // "cnf": {"kh": ...}; empty: not bound.
  std::string key_hash;
  int64_t issued_at = 0;
  int64_t expires_at = 0;
};

enum class TokenError {
  kMalformed,
  kBadAlgorithm,
  kUnknownKey,
  kBadSignature,
  kExpired,
  kWrongRoom
};
const char* token_error_text(TokenError e);

enum class TokenAlg { kHS256, kES256 };

class TokenSigner {
 public:
  // HS256 under `secret`.
  explicit TokenSigner(std::string secret);
  // ES256: signs with `current` (which must hold its private key); tokens signed with
  // `previous` (its public key is enough) still verify, for a rotation.
  // `caches` false: sign and verify every time (for benchmarks).
  explicit TokenSigner(EcKey current, std::optional<EcKey> previous = std::nullopt,
                       bool caches = true);
  TokenSigner(TokenSigner&&) noexcept;
  TokenSigner& operator=(TokenSigner&&) noexcept;
  ~TokenSigner();

  TokenAlg alg() const { return alg_; }
  // The kid of the key that signs.
  const std::string& kid() const { return kid_; }
  // The JWKS (RFC 7517) of the public keys tokens may be signed with: the current key, then
  // the previous one. HS256: {"keys":[]} (a shared secret is never published).
  const std::string& jwks() const { return jwks_; }

  std::string sign(const TokenClaims& claims) const;
  // The claims, if the token is well formed, signed with the configured algorithm (and
  // nothing else: "none" and every other algorithm are refused) under a key we know (its kid
  // one of ours; an HS256 token may have none), not expired at `now_s`, and for `room`. An
  // HS256 signature is compared in constant time.
  std::optional<TokenClaims> verify(std::string_view token, std::string_view room, int64_t now_s,
                                    TokenError* why = nullptr) const;

 private:
  struct Caches;
  // The claims of a token whose header and signature are good; nothing else checked.
  std::optional<TokenClaims> verify_signature(std::string_view token, TokenError* why) const;
  // Stores a token known good (verified, or signed here) in the verify cache.
  void remember_verified(std::string_view token, const TokenClaims& c) const;

  TokenAlg alg_ = TokenAlg::kHS256;
  std::string secret_;                       // HS256
  std::optional<EcKey> current_, previous_;  // ES256
  std::string kid_;
  std::string header_;  // base64url of the JOSE header
  std::string jwks_;
  std::unique_ptr<Caches> caches_;  // ES256 only
};

// The signer --token-alg asks for: HS256 under `secret`, or ES256 with the key in
// `key_file` (or DATA_DIR/token-key.pem, created once) and, while rotating, `previous_file`.
// Errors say which flag or file is wrong and why. *created_key: a key was generated.
Result<TokenSigner> load_token_signer(const std::string& alg, const std::string& data_dir,
                                      const std::string& key_file, const std::string& previous_file,
                                      std::string secret, bool* created_key = nullptr);

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
