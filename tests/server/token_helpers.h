// What the token tests share: claims to sign, a JWT's parts and header, a fresh P-256 key,
// a JWT forged from any header and claims, and a JWK's RFC 7638 thumbprint.
#pragma once

#include <gtest/gtest.h>
#include <openssl/sha.h>

#include <boost/json.hpp>
#include <functional>
#include <string>
#include <vector>

#include "server/app/token.h"

namespace anteroom::testing {

inline TokenClaims claims(int64_t now) {
  TokenClaims c;
  c.ticket = "T";
  c.room = "r";
  c.user = "user_1";
  c.issued_at = now;
  c.expires_at = now + 60;
  return c;
}

inline std::vector<std::string> parts(const std::string& jwt) {
  size_t a = jwt.find('.'), b = jwt.find('.', a + 1);
  return {jwt.substr(0, a), jwt.substr(a + 1, b - a - 1), jwt.substr(b + 1)};
}

inline EcKey fresh_key() {
  auto k = EcKey::generate();
  EXPECT_TRUE(k.is_ok()) << k.status().message();
  return std::move(k).value();
}

inline boost::json::object header_of(const std::string& jwt) {
  return boost::json::parse(*base64url_decode(parts(jwt)[0])).as_object();
}

// A JWT with the given header and claims, signed by `sign` over header.payload.
inline std::string forge(const boost::json::object& header, const boost::json::object& claims,
                         const std::function<std::string(const std::string&)>& sign) {
  std::string input = base64url_encode(boost::json::serialize(header)) + "." +
                      base64url_encode(boost::json::serialize(claims));
  return input + "." + base64url_encode(sign(input));
}

// The JWK's RFC 7638 thumbprint, computed here from the JWKS alone.
inline std::string thumbprint(const boost::json::object& jwk) {
  std::string members = R"({"crv":")" + std::string(jwk.at("crv").as_string()) + R"(","kty":")" +
                        std::string(jwk.at("kty").as_string()) + R"(","x":")" +
                        std::string(jwk.at("x").as_string()) + R"(","y":")" +
                        std::string(jwk.at("y").as_string()) + R"("})";
  unsigned char d[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(members.data()), members.size(), d);
  return base64url_encode(std::string(reinterpret_cast<char*>(d), sizeof d));
}

}  // namespace anteroom::testing
