#include "server/app/token_cache.h"

#include <openssl/sha.h>

#include <cstring>
#include <functional>
#include <mutex>
#include <vector>

namespace anteroom {
namespace {

constexpr size_t kSlots = size_t{1} << 14;
constexpr size_t kLocks = 64;

size_t slot_of(const TokenDigest& d) {
  uint64_t index = 0;
  std::memcpy(&index, d.data(), sizeof index);
  return index & (kSlots - 1);
}

}  // namespace

TokenDigest token_digest(std::string_view token) {
  TokenDigest d{};
  SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(), d.data());
  return d;
}

struct TokenCache::Tables {
  struct Signed {
    std::string claims;  // the payload without iat
    std::string token;
  };
  struct Verified {
    bool used = false;
    TokenDigest digest{};
    TokenClaims claims;
  };
  struct Refused {
    bool used = false;
    TokenDigest digest{};
    TokenError why = TokenError::kMalformed;
  };
  mutable std::array<std::mutex, kLocks> sign_mu, verify_mu, refuse_mu;
  std::vector<Signed> signed_tokens = std::vector<Signed>(kSlots);
  std::vector<Verified> verified = std::vector<Verified>(kSlots);
  std::vector<Refused> refused = std::vector<Refused>(kSlots);
};

TokenCache::TokenCache() : t_(std::make_unique<Tables>()) {}
TokenCache::~TokenCache() = default;

std::optional<std::string> TokenCache::signed_token(const std::string& claims_without_iat) const {
  const size_t slot = std::hash<std::string>{}(claims_without_iat) & (kSlots - 1);
  std::lock_guard lock(t_->sign_mu[slot % kLocks]);
  const Tables::Signed& s = t_->signed_tokens[slot];
  if (s.claims != claims_without_iat) return std::nullopt;
  return s.token;
}

void TokenCache::store_signed(const std::string& claims_without_iat, const std::string& token) {
  const size_t slot = std::hash<std::string>{}(claims_without_iat) & (kSlots - 1);
  std::lock_guard lock(t_->sign_mu[slot % kLocks]);
  t_->signed_tokens[slot] = {claims_without_iat, token};
}

std::optional<TokenClaims> TokenCache::verified(const TokenDigest& d) const {
  const size_t slot = slot_of(d);
  std::lock_guard lock(t_->verify_mu[slot % kLocks]);
  const Tables::Verified& v = t_->verified[slot];
  if (!v.used || v.digest != d) return std::nullopt;
  return v.claims;
}

void TokenCache::store_verified(const TokenDigest& d, const TokenClaims& c) {
  const size_t slot = slot_of(d);
  std::lock_guard lock(t_->verify_mu[slot % kLocks]);
  t_->verified[slot] = {true, d, c};
}

std::optional<TokenError> TokenCache::refused(const TokenDigest& d) const {
  const size_t slot = slot_of(d);
  std::lock_guard lock(t_->refuse_mu[slot % kLocks]);
  const Tables::Refused& r = t_->refused[slot];
  if (!r.used || r.digest != d) return std::nullopt;
  return r.why;
}

void TokenCache::store_refused(const TokenDigest& d, TokenError why) {
  const size_t slot = slot_of(d);
  std::lock_guard lock(t_->refuse_mu[slot % kLocks]);
  t_->refused[slot] = {true, d, why};
}

}  // namespace anteroom
