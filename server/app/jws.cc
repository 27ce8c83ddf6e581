// JOSE pieces every token here is made of: base64url, HMAC-SHA256, a compact JWS split and
// decoded, and HS256 verification.
#include "server/app/jws.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <boost/json.hpp>

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

std::string sign_hs256(const json::object& claims, std::string_view secret) {
  std::string out = base64url_encode(R"({"alg":"HS256","typ":"JWT"})");
  out += '.';
  out += base64url_encode(json::serialize(claims));
  const std::string mac = hmac_sha256(secret, out);
  out += '.';
  out += base64url_encode(mac);
  return out;
}

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

}  // namespace anteroom
