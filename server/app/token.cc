#include "server/app/token.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <array>
#include <boost/json.hpp>
#include <cstring>
#include <functional>
#include <mutex>
#include <vector>

#include "server/app/keys.h"
#include "server/app/token_cache.h"

namespace anteroom {
namespace json = boost::json;

namespace {

std::string header_of(const char* alg, const std::string& kid) {
  json::object h;
  h["alg"] = alg;
  h["typ"] = "JWT";
  h["kid"] = kid;
  return base64url_encode(json::serialize(h));
}

}  // namespace

TokenSigner::TokenSigner(std::string secret)
    : alg_(TokenAlg::kHS256),
      secret_(std::move(secret)),
      kid_(base64url_encode(hmac_sha256(secret_, "anteroom token kid").substr(0, 12))),
      header_(header_of("HS256", kid_)),
      jwks_(R"({"keys":[]})") {}

TokenSigner::TokenSigner(EcKey current, std::optional<EcKey> previous, bool caches)
    : alg_(TokenAlg::kES256),
      current_(std::move(current)),
      previous_(std::move(previous)),
      kid_(current_->kid()),
      header_(header_of("ES256", kid_)),
      caches_(caches ? std::make_unique<TokenCache>() : nullptr) {
  if (previous_ && previous_->kid() == kid_) previous_.reset();
  json::array keys;
  keys.push_back(current_->jwk());
  if (previous_) keys.push_back(previous_->jwk());
  json::object o;
  o["keys"] = std::move(keys);
  jwks_ = json::serialize(o);
}

TokenSigner::TokenSigner(TokenSigner&&) noexcept = default;
TokenSigner& TokenSigner::operator=(TokenSigner&&) noexcept = default;
TokenSigner::~TokenSigner() = default;

std::string TokenSigner::sign(const TokenClaims& c) const {
  json::object claims;
  claims["iss"] = "anteroom";
  claims["sub"] = c.ticket;
  claims["room"] = c.room;
  if (!c.user.empty()) claims["usr"] = c.user;
  if (!c.key_hash.empty()) claims["cnf"] = json::object{{"kh", c.key_hash}};
  claims["exp"] = c.expires_at;
  const std::string without_iat = json::serialize(claims);
  auto payload = [&] {
    std::string p = without_iat;
    p.pop_back();  // '}'
    p += R"(,"iat":)" + std::to_string(c.issued_at) + "}";
    return p;
  };
  if (alg_ == TokenAlg::kHS256) {
    std::string input = header_ + "." + base64url_encode(payload());
    return input + "." + base64url_encode(hmac_sha256(secret_, input));
  }
  // ES256: the token already signed for these claims, if any (see token.h).
  if (caches_) {
    if (auto t = caches_->signed_token(without_iat)) return *t;
  }
  std::string input = header_ + "." + base64url_encode(payload());
  const std::string signature = current_->sign(input);
  if (signature.empty()) return {};  // OpenSSL failed: no token rather than a bad one
  std::string token = input + "." + base64url_encode(signature);
  if (!caches_) return token;
  caches_->store_signed(without_iat, token);
  // We made it, so it verifies: the gate's next request, carrying this token in its cookie,
  // is a cache hit instead of an ECDSA verification.
  caches_->store_verified(token_digest(token), c);
  return token;
}

std::optional<TokenClaims> TokenSigner::verify_signature(std::string_view token,
                                                         TokenError* why) const {
  auto fail = [&](TokenError e) -> std::optional<TokenClaims> {
    if (why != nullptr) *why = e;
    return std::nullopt;
  };
  auto jws = split_jws(token, why);
  if (!jws) return std::nullopt;
  // Pinned: only the configured algorithm, never what the token asks for.
  if (!alg_is(jws->header, alg_ == TokenAlg::kES256 ? "ES256" : "HS256")) {
    return fail(TokenError::kBadAlgorithm);
  }
  const json::value* kid = jws->header.if_contains("kid");
  if (alg_ == TokenAlg::kES256) {
    const EcKey* key = nullptr;
    if (kid != nullptr && kid->is_string()) {
      if (kid->as_string() == current_->kid()) {
        key = &*current_;
      } else if (previous_ && kid->as_string() == previous_->kid()) {
        key = &*previous_;
      }
    }
    if (key == nullptr) return fail(TokenError::kUnknownKey);
    signature_checks_->fetch_add(1, std::memory_order_relaxed);
    if (!key->verify(jws->signing_input, jws->signature)) return fail(TokenError::kBadSignature);
  } else {
    // Tokens from before kids were written have none; any kid must be ours.
    if (kid != nullptr && (!kid->is_string() || kid->as_string() != kid_)) {
      return fail(TokenError::kUnknownKey);
    }
    signature_checks_->fetch_add(1, std::memory_order_relaxed);
    if (!same_hmac(jws->signature, hmac_sha256(secret_, jws->signing_input))) {
      return fail(TokenError::kBadSignature);
    }
  }
  boost::system::error_code ec;
  json::value p = json::parse(jws->payload, ec);
  if (ec || !p.is_object()) return fail(TokenError::kMalformed);
  const json::object& o = p.as_object();
  const json::string* sub = string_claim(o, "sub");
  const json::string* r = string_claim(o, "room");
  auto iat = number_claim(o, "iat");
  auto exp = number_claim(o, "exp");
  if (sub == nullptr || r == nullptr || !iat || !exp) return fail(TokenError::kMalformed);
  TokenClaims c;
  c.ticket = std::string(*sub);
  c.room = std::string(*r);
  if (const json::string* u = string_claim(o, "usr")) c.user = std::string(*u);
  if (const json::value* cnf = o.if_contains("cnf")) {
    const json::value* kh = cnf->is_object() ? cnf->as_object().if_contains("kh") : nullptr;
    if (kh == nullptr || !kh->is_string() || !parse_key_hash(kh->as_string())) {
      return fail(TokenError::kMalformed);
    }
    c.key_hash = std::string(kh->as_string());
  }
  c.issued_at = *iat;
  c.expires_at = *exp;
  return c;
}

std::optional<TokenClaims> claims_unchecked(std::string_view token) {
  const size_t dot1 = token.find('.');
  const size_t dot2 = dot1 == std::string_view::npos ? dot1 : token.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos) return std::nullopt;
  auto payload = base64url_decode(token.substr(dot1 + 1, dot2 - dot1 - 1));
  if (!payload) return std::nullopt;
  boost::system::error_code ec;
  json::value p = json::parse(*payload, ec);
  if (ec || !p.is_object()) return std::nullopt;
  const json::object& o = p.as_object();
  const json::string* sub = string_claim(o, "sub");
  const json::string* r = string_claim(o, "room");
  auto exp = number_claim(o, "exp");
  if (sub == nullptr || r == nullptr || !exp) return std::nullopt;
  TokenClaims c;
  c.ticket = std::string(*sub);
  c.room = std::string(*r);
  c.expires_at = *exp;
  if (const json::value* cnf = o.if_contains("cnf"); cnf != nullptr && cnf->is_object()) {
    if (const json::value* kh = cnf->as_object().if_contains("kh");
        kh != nullptr && kh->is_string())
      c.key_hash = std::string(kh->as_string());
  }
  return c;
}

std::optional<TokenClaims> TokenSigner::verify_if_cheap(std::string_view token,
                                                        std::string_view room, int64_t now_s,
                                                        bool* needs_check) const {
  *needs_check = false;
  if (!caches_) return verify(token, room, now_s);  // HS256: an HMAC is cheap
  const TokenDigest digest = token_digest(token);
  std::optional<TokenClaims> c = caches_->verified(digest);
  if (!c) {
    *needs_check = !caches_->refused(digest);
    return std::nullopt;
  }
  if (c->expires_at <= now_s || c->room != room) return std::nullopt;
  return c;
}

std::optional<TokenClaims> TokenSigner::verify(std::string_view token, std::string_view room,
                                               int64_t now_s, TokenError* why) const {
  auto fail = [&](TokenError e) -> std::optional<TokenClaims> {
    if (why != nullptr) *why = e;
    return std::nullopt;
  };
  std::optional<TokenClaims> c;
  if (caches_) {
    const TokenDigest digest = token_digest(token);
    c = caches_->verified(digest);
    if (!c) {
      // A token whose signature failed once fails again: forged cookies replayed cost a hash.
      if (auto no = caches_->refused(digest)) return fail(*no);
      if (auto said = claims_unchecked(token)) {
        if (said->expires_at <= now_s) return fail(TokenError::kExpired);
        if (said->room != room) return fail(TokenError::kWrongRoom);
      }
      TokenError e = TokenError::kMalformed;
      c = verify_signature(token, &e);
      if (!c) {
        caches_->store_refused(digest, e);
        return fail(e);
      }
      caches_->store_verified(digest, *c);
    }
  } else {
    c = verify_signature(token, why);
    if (!c) return std::nullopt;
  }
  if (c->expires_at <= now_s) return fail(TokenError::kExpired);
  if (c->room != room) return fail(TokenError::kWrongRoom);
  return c;
}

bool user_token_names(std::string_view token, std::string_view secret, std::string_view user,
                      std::string_view room, int64_t now_s) {
  if (secret.empty()) return false;
  auto o = verify_hs256(token, secret, nullptr);
  if (!o) return false;
  const json::string* sub = string_claim(*o, "sub");
  if (sub == nullptr || *sub != user) return false;
  // A room claim, if there is one, must name this room.
  if (o->contains("room")) {
    const json::string* r = string_claim(*o, "room");
    if (r == nullptr || *r != room) return false;
  }
  auto exp = number_claim(*o, "exp");
  return exp && *exp > now_s;  // an assertion without an end would be good for ever
}

std::optional<Invite> read_invite(std::string_view token, std::string_view secret,
                                  std::string_view room, int64_t now_s, std::string* why) {
  if (secret.empty()) {
    *why = "this server takes no invites (no --user-secret)";
    return std::nullopt;
  }
  TokenError e = TokenError::kMalformed;
  auto o = verify_hs256(token, secret, &e);
  if (!o) {
    *why = std::string("the invite is not one: ") + token_error_text(e);
    return std::nullopt;
  }
  const json::string* r = string_claim(*o, "room");
  const json::string* sub = string_claim(*o, "sub");
  const json::string* lane = string_claim(*o, "lane");
  auto exp = number_claim(*o, "exp");
  if (r == nullptr || *r != room) {
    *why = "the invite is for another room";
  } else if (sub == nullptr || !valid_user(*sub)) {
    *why = "the invite names no valid user (sub)";
  } else if (!exp || *exp <= now_s) {
    *why = "the invite has expired";
  } else if (o->contains("lane") && (lane == nullptr || lane->empty())) {
    *why = "the invite's lane must be a lane's name";
  } else {
    return Invite{std::string(*sub), lane != nullptr ? std::string(*lane) : std::string()};
  }
  return std::nullopt;
}

Result<TokenSigner> load_token_signer(const std::string& alg, const std::string& data_dir,
                                      const std::string& key_file, const std::string& previous_file,
                                      std::string secret, bool* created_key) {
  if (created_key != nullptr) *created_key = false;
  if (alg == "HS256") {
    if (!key_file.empty() || !previous_file.empty()) {
      return Status(Code::kInvalidArgument,
                    "--token-key and --token-key-previous need --token-alg ES256");
    }
    return TokenSigner(std::move(secret));
  }
  if (alg != "ES256") {
    return Status(Code::kInvalidArgument, "--token-alg must be HS256 or ES256, not '" + alg + "'");
  }
  auto current = key_file.empty() ? load_or_create_token_key(data_dir, created_key)
                                  : EcKey::read_file(key_file, true);
  if (!current.is_ok()) {
    return Status(current.code(),
                  (key_file.empty() ? "" : "--token-key: ") + current.status().message());
  }
  std::optional<EcKey> previous;
  if (!previous_file.empty()) {
    auto p = EcKey::read_file(previous_file, false);
    if (!p.is_ok()) {
      return Status(p.code(), "--token-key-previous: " + p.status().message());
    }
    if (p->kid() == current->kid()) {
      return Status(Code::kInvalidArgument, "--token-key-previous " + previous_file +
                                                " is the current key itself (kid " + p->kid() +
                                                "); give the key being replaced");
    }
    previous = std::move(p).value();
  }
  return TokenSigner(std::move(current).value(), std::move(previous));
}

}  // namespace anteroom
