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

namespace anteroom {
namespace json = boost::json;

namespace {
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
}  // namespace

const char* token_error_text(TokenError e) {
  switch (e) {
    case TokenError::kMalformed:
      return "the token is not a well-formed JWT";
    case TokenError::kBadAlgorithm:
      return "the token is not signed with the server's algorithm";
    case TokenError::kUnknownKey:
      return "the token's kid names no key of this server";
    case TokenError::kBadSignature:
      return "the token's signature does not match";
    case TokenError::kExpired:
      return "the token has expired";
    case TokenError::kWrongRoom:
      return "the token is for another room";
  }
  return "invalid token";
}

std::string base64url_encode(std::string_view in) {
  std::string out;
  out.reserve((in.size() * 4 + 2) / 3);
  size_t i = 0;
  for (; i + 3 <= in.size(); i += 3) {
    uint32_t v = (uint32_t{static_cast<uint8_t>(in[i])} << 16) |
                 (uint32_t{static_cast<uint8_t>(in[i + 1])} << 8) | static_cast<uint8_t>(in[i + 2]);
    for (int k = 3; k >= 0; --k) out += kAlphabet[(v >> (6 * k)) & 63];
  }
  size_t rest = in.size() - i;
  if (rest != 0) {
    uint32_t v = uint32_t{static_cast<uint8_t>(in[i])} << 16;
    if (rest == 2) v |= uint32_t{static_cast<uint8_t>(in[i + 1])} << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    if (rest == 2) out += kAlphabet[(v >> 6) & 63];
  }
  return out;
}

std::optional<std::string> base64url_decode(std::string_view in) {
  if (in.size() % 4 == 1) return std::nullopt;
  std::string out;
  out.reserve(in.size() * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    const char* p = std::char_traits<char>::find(kAlphabet, 64, c);
    if (p == nullptr) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(p - kAlphabet);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  if ((acc & ((1u << bits) - 1)) != 0) return std::nullopt;  // non-canonical trailing bits
  return out;
}

std::string hmac_sha256(std::string_view key, std::string_view input) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(input.data()), input.size(), md, &len);
  return std::string(reinterpret_cast<const char*>(md), len);
}

namespace {

// A JWS in compact form, split and decoded.
struct Jws {
  json::object header;
  std::string_view signing_input;  // header.payload, as signed
  std::string payload;
  std::string signature;
};

std::optional<Jws> split_jws(std::string_view token, TokenError* why) {
  auto fail = [&](TokenError e) -> std::optional<Jws> {
    if (why != nullptr) *why = e;
    return std::nullopt;
  };
  size_t dot1 = token.find('.');
  size_t dot2 = dot1 == std::string_view::npos ? dot1 : token.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos || token.find('.', dot2 + 1) != std::string_view::npos) {
    return fail(TokenError::kMalformed);
  }
  auto header = base64url_decode(token.substr(0, dot1));
  auto payload = base64url_decode(token.substr(dot1 + 1, dot2 - dot1 - 1));
  auto signature = base64url_decode(token.substr(dot2 + 1));
  if (!header || !payload || !signature) return fail(TokenError::kMalformed);
  boost::system::error_code ec;
  json::value h = json::parse(*header, ec);
  if (ec || !h.is_object()) return fail(TokenError::kMalformed);
  Jws j;
  j.header = std::move(h.as_object());
  j.signing_input = token.substr(0, dot2);
  j.payload = std::move(*payload);
  j.signature = std::move(*signature);
  return j;
}

bool alg_is(const json::object& header, std::string_view alg) {
  const json::value* a = header.if_contains("alg");
  return a != nullptr && a->is_string() && a->as_string() == alg;
}

bool same_hmac(std::string_view signature, const std::string& expected) {
  return signature.size() == expected.size() &&
         CRYPTO_memcmp(signature.data(), expected.data(), expected.size()) == 0;
}

const json::string* string_claim(const json::object& o, const char* k) {
  const json::value* v = o.if_contains(k);
  return v != nullptr && v->is_string() ? &v->as_string() : nullptr;
}
std::optional<int64_t> number_claim(const json::object& o, const char* k) {
  const json::value* v = o.if_contains(k);
  if (v == nullptr || !v->is_int64()) return std::nullopt;
  return v->as_int64();
}

}  // namespace

std::optional<boost::json::object> verify_hs256(std::string_view token, std::string_view secret,
                                                TokenError* why) {
  auto fail = [&](TokenError e) -> std::optional<json::object> {
    if (why != nullptr) *why = e;
    return std::nullopt;
  };
  auto jws = split_jws(token, why);
  if (!jws) return std::nullopt;
  if (!alg_is(jws->header, "HS256")) return fail(TokenError::kBadAlgorithm);
  if (!same_hmac(jws->signature, hmac_sha256(secret, jws->signing_input))) {
    return fail(TokenError::kBadSignature);
  }
  boost::system::error_code ec;
  json::value p = json::parse(jws->payload, ec);
  if (ec || !p.is_object()) return fail(TokenError::kMalformed);
  return std::move(p.as_object());
}

namespace {
constexpr size_t kCacheSlots = size_t{1} << 14;  // per table: 16,384 tokens
}  // namespace

// Fixed-size, direct-mapped tables (a new entry replaces whatever held its slot), each slot
// under one of kLocks mutexes.
struct TokenSigner::Caches {
  static constexpr size_t kSlots = kCacheSlots;
  static constexpr size_t kLocks = 64;
  struct Signed {
    std::string claims;  // the payload without iat
    std::string token;
  };
  struct Verified {
    bool used = false;
    std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};  // of the whole token
    TokenClaims claims;
  };
  std::array<std::mutex, kLocks> sign_mu;
  std::array<std::mutex, kLocks> verify_mu;
  std::vector<Signed> signed_tokens = std::vector<Signed>(kSlots);
  std::vector<Verified> verified = std::vector<Verified>(kSlots);
};

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
      caches_(caches ? std::make_unique<Caches>() : nullptr) {
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
  const size_t slot = std::hash<std::string>{}(without_iat) & (Caches::kSlots - 1);
  if (caches_) {
    std::lock_guard lock(caches_->sign_mu[slot % Caches::kLocks]);
    const Caches::Signed& s = caches_->signed_tokens[slot];
    if (s.claims == without_iat) return s.token;
  }
  std::string input = header_ + "." + base64url_encode(payload());
  const std::string signature = current_->sign(input);
  if (signature.empty()) return {};  // OpenSSL failed: no token rather than a bad one
  std::string token = input + "." + base64url_encode(signature);
  if (!caches_) return token;
  {
    std::lock_guard lock(caches_->sign_mu[slot % Caches::kLocks]);
    Caches::Signed& s = caches_->signed_tokens[slot];
    s.claims = without_iat;
    s.token = token;
  }
  // We made it, so it verifies: the gate's next request, carrying this token in its cookie,
  // is a cache hit instead of an ECDSA verification.
  remember_verified(token, c);
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
    if (!key->verify(jws->signing_input, jws->signature)) return fail(TokenError::kBadSignature);
  } else {
    // Tokens from before kids were written have none; any kid must be ours.
    if (kid != nullptr && (!kid->is_string() || kid->as_string() != kid_)) {
      return fail(TokenError::kUnknownKey);
    }
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

namespace {

std::array<unsigned char, SHA256_DIGEST_LENGTH> token_digest(std::string_view token) {
  std::array<unsigned char, SHA256_DIGEST_LENGTH> d{};
  SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(), d.data());
  return d;
}

size_t verified_slot(const std::array<unsigned char, SHA256_DIGEST_LENGTH>& digest) {
  uint64_t index = 0;
  std::memcpy(&index, digest.data(), sizeof index);
  return index & (kCacheSlots - 1);
}

}  // namespace

void TokenSigner::remember_verified(std::string_view token, const TokenClaims& c) const {
  if (!caches_) return;
  const auto digest = token_digest(token);
  const size_t slot = verified_slot(digest);
  std::lock_guard lock(caches_->verify_mu[slot % Caches::kLocks]);
  Caches::Verified& v = caches_->verified[slot];
  v.used = true;
  v.digest = digest;
  v.claims = c;
}

std::optional<TokenClaims> TokenSigner::verify(std::string_view token, std::string_view room,
                                               int64_t now_s, TokenError* why) const {
  auto fail = [&](TokenError e) -> std::optional<TokenClaims> {
    if (why != nullptr) *why = e;
    return std::nullopt;
  };
  std::optional<TokenClaims> c;
  if (caches_) {
    // Only tokens whose signature verified (or that we signed) are ever stored, keyed by the
    // SHA-256 of the whole token: a hit is the very same bytes.
    const auto digest = token_digest(token);
    const size_t slot = verified_slot(digest);
    std::lock_guard lock(caches_->verify_mu[slot % Caches::kLocks]);
    const Caches::Verified& v = caches_->verified[slot];
    if (v.used && v.digest == digest) c = v.claims;
  }
  if (!c) {
    c = verify_signature(token, why);
    if (!c) return std::nullopt;
    remember_verified(token, *c);
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
