// The JOSE pieces admission tokens, user assertions and invites are made of: base64url
// (RFC 4648 section 5, no padding), HMAC-SHA256, a compact JWS (RFC 7515) split and decoded,
// and HS256 verification pinned to that algorithm.
//
// Thread safety: free functions, no shared state.
#pragma once

#include <boost/json/object.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace anteroom {

enum class TokenError {
  kMalformed,
  kBadAlgorithm,
  kUnknownKey,
  kBadSignature,
  kExpired,
  kWrongRoom
};
const char* token_error_text(TokenError e);

std::string base64url_encode(std::string_view bytes);
std::optional<std::string> base64url_decode(std::string_view text);
std::string hmac_sha256(std::string_view key, std::string_view input);

// A JWS in compact form, split and decoded (nothing verified).
struct Jws {
  boost::json::object header;
  std::string_view signing_input;  // header.payload, as signed
  std::string payload;
  std::string signature;
};
// kMalformed unless three base64url parts, the header a JSON object.
std::optional<Jws> split_jws(std::string_view token, TokenError* why);
bool alg_is(const boost::json::object& header, std::string_view alg);
// Constant time in the signature's content.
bool same_hmac(std::string_view signature, const std::string& expected);
// A claim of the given type, or null / nullopt.
const boost::json::string* string_claim(const boost::json::object& o, const char* k);
std::optional<int64_t> number_claim(const boost::json::object& o, const char* k);

// The claims of an HS256 JWT signed with `secret` (and nothing else: "none" and every other
// algorithm are refused; the signature is compared in constant time); no claim is checked.
std::optional<boost::json::object> verify_hs256(std::string_view token, std::string_view secret,
                                                TokenError* why);
// An HS256 JWT of these claims under `secret` (header {"alg":"HS256","typ":"JWT"}).
std::string sign_hs256(const boost::json::object& claims, std::string_view secret);

}  // namespace anteroom
