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
// ES256 caches (docs/security.md, token_cache.h): a token signed for the same claims but iat
// is handed out again until its exp changes (status reads of an admitted ticket sign nothing
// new); a token whose signature verified, or that this signer made, is remembered by its
// SHA-256, so verifying it (the gate sees the cookie it set) costs a hash and a lookup, its
// exp and room checked on every use; and a token whose signature failed is remembered too, so
// a forged cookie sent again costs a hash. Before any ECDSA check, the claims a token states
// are read: one that says it expired, or is for another room, is refused without one.
//
// Thread safety: TokenSigner is immutable after construction apart from its caches, which
// are internally locked; use it from any thread.
#pragma once

#include <atomic>
#include <boost/json/object.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "engine/status.h"
#include "server/app/jws.h"
#include "server/app/token_keys.h"

namespace anteroom {

struct TokenClaims {
  std::string ticket;
  std::string room;
  std::string user;  // empty: not in the token
  // A bound admission: hex SHA-256 of the client's key, claim
  // "cnf": {"kh": ...}; empty: not bound.
  std::string key_hash;
  int64_t issued_at = 0;
  int64_t expires_at = 0;
};

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
  // Signatures checked so far (cache hits and early refusals check none).
  uint64_t signature_checks() const { return signature_checks_->load(std::memory_order_relaxed); }
  // The claims, if the token is well formed, signed with the configured algorithm (and
  // nothing else: "none" and every other algorithm are refused) under a key we know (its kid
  // one of ours; an HS256 token may have none), not expired at `now_s`, and for `room`. An
  // HS256 signature is compared in constant time.
  std::optional<TokenClaims> verify(std::string_view token, std::string_view room, int64_t now_s,
                                    TokenError* why = nullptr) const;
  // verify() when it costs no signature check (HS256, or an ES256 token in the verified
  // cache); else nullopt, with *needs_check true unless the token is a cached refusal.
  std::optional<TokenClaims> verify_if_cheap(std::string_view token, std::string_view room,
                                             int64_t now_s, bool* needs_check) const;

 private:
  // The claims of a token whose header and signature are good; nothing else checked.
  std::optional<TokenClaims> verify_signature(std::string_view token, TokenError* why) const;

  TokenAlg alg_ = TokenAlg::kHS256;
  std::string secret_;                       // HS256
  std::optional<EcKey> current_, previous_;  // ES256
  std::string kid_;
  std::string header_;  // base64url of the JOSE header
  std::string jwks_;
  std::unique_ptr<class TokenCache> caches_;  // ES256 only
  // Signatures checked (HMAC or ECDSA), for /metrics; lone counter: relaxed. Behind a pointer
  // so that the signer moves.
  std::unique_ptr<std::atomic<uint64_t>> signature_checks_ =
      std::make_unique<std::atomic<uint64_t>>(0);
};

// The claims a token states (sub, room, exp, cnf.kh), nothing verified: enough to refuse
// one that could not admit anyway (expired, another room, a key the request lacks, a ticket
// gone) before any signature is checked. A refusal needs no proof; nothing else may rest on
// these.
std::optional<TokenClaims> claims_unchecked(std::string_view token);

// The signer --token-alg asks for: HS256 under `secret`, or ES256 with the key in
// `key_file` (or DATA_DIR/token-key.pem, created once) and, while rotating, `previous_file`.
// Errors say which flag or file is wrong and why. *created_key: a key was generated.
Result<TokenSigner> load_token_signer(const std::string& alg, const std::string& data_dir,
                                      const std::string& key_file, const std::string& previous_file,
                                      std::string secret, bool* created_key = nullptr);

// A user assertion from the protected service: an HS256 JWT signed with `secret` (the
// --user-secret) whose `sub` is `user`, whose `exp` (required) has not passed, and whose
// `room`, if it has one, is `room`.
bool user_token_names(std::string_view token, std::string_view secret, std::string_view user,
                      std::string_view room, int64_t now_s);

// An invite to a room (docs/api.md, "Invites and lanes"): an HS256 JWT the protected service
// signed with `secret` (the --user-secret) whose `room` is `room`, whose `sub` (a user,
// valid_user) is who it invites, whose `exp` has not passed, and whose optional `lane` names
// the lane to wait in. nullopt with *why saying what is wrong.
struct Invite {
  std::string sub;
  std::string lane;  // empty: the room's last lane
};
std::optional<Invite> read_invite(std::string_view token, std::string_view secret,
                                  std::string_view room, int64_t now_s, std::string* why);

}  // namespace anteroom
