// Admission tokens: standard HS256 and ES256 JWTs; every kind of bad token is refused, by the
// signer and over HTTP (verify route and gate); ES256 keys, their kid, the JWKS and rotation.
#include "server/app/token.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>

#include "server/app/api.h"
#include "tests/server/harness.h"
#include "tests/server/token_helpers.h"

namespace anteroom::testing {
namespace {

TEST(Token, IsAStandardHs256JwtWithTheSpecClaims) {
  TokenSigner s("secret");
  std::string jwt = s.sign(claims(1000));
  auto p = parts(jwt);
  auto header = boost::json::parse(*base64url_decode(p[0])).as_object();
  EXPECT_EQ(header.at("alg").as_string(), "HS256");
  EXPECT_EQ(header.at("typ").as_string(), "JWT");
  auto body = boost::json::parse(*base64url_decode(p[1])).as_object();
  EXPECT_EQ(body.at("iss").as_string(), "anteroom");
  EXPECT_EQ(body.at("sub").as_string(), "T");
  EXPECT_EQ(body.at("room").as_string(), "r");
  EXPECT_EQ(body.at("usr").as_string(), "user_1");
  EXPECT_EQ(body.at("iat").as_int64(), 1000);
  EXPECT_EQ(body.at("exp").as_int64(), 1060);
  // The signature, recomputed here straight from OpenSSL as any JWT library would.
  std::string input = p[0] + "." + p[1];
  unsigned char md[32];
  unsigned int len = 0;
  HMAC(EVP_sha256(), "secret", 6, reinterpret_cast<const unsigned char*>(input.data()),
       input.size(), md, &len);
  EXPECT_EQ(p[2], base64url_encode(std::string(reinterpret_cast<char*>(md), len)));
  EXPECT_TRUE(s.verify(jwt, "r", 1001).has_value());
}

TEST(Token, RefusesTamperedWrongKeyWrongRoomExpiredAndAlgNone) {
  TokenSigner s("secret");
  const int64_t now = 5000;
  std::string good = s.sign(claims(now));
  auto p = parts(good);
  TokenError why{};

  auto body = boost::json::parse(*base64url_decode(p[1])).as_object();
  body["sub"] = "SOMEONE_ELSE";
  std::string tampered = p[0] + "." + base64url_encode(boost::json::serialize(body)) + "." + p[2];
  EXPECT_FALSE(s.verify(tampered, "r", now, &why));
  EXPECT_EQ(why, TokenError::kBadSignature);

  // Another secret: its kid differs; under our kid (or none) its signature does not match.
  std::string other = TokenSigner("other").sign(claims(now));
  EXPECT_FALSE(s.verify(other, "r", now, &why));
  EXPECT_EQ(why, TokenError::kUnknownKey);
  std::string other_our_kid = p[0] + "." + parts(other)[1] + "." + parts(other)[2];
  EXPECT_FALSE(s.verify(other_our_kid, "r", now, &why));
  EXPECT_EQ(why, TokenError::kBadSignature);

  EXPECT_FALSE(s.verify(good, "other-room", now, &why));
  EXPECT_EQ(why, TokenError::kWrongRoom);

  EXPECT_FALSE(s.verify(good, "r", now + 60, &why));
  EXPECT_EQ(why, TokenError::kExpired);

  std::string none = base64url_encode(R"({"alg":"none","typ":"JWT"})") + "." + p[1] + ".";
  EXPECT_FALSE(s.verify(none, "r", now, &why));
  EXPECT_EQ(why, TokenError::kBadAlgorithm);

  for (const char* junk : {"", "a.b", "a.b.c.d", "!!.!!.!!"})
    EXPECT_FALSE(s.verify(junk, "r", now)) << junk;
}

TEST(Token, Base64UrlRoundTripsAndRejectsJunk) {
  for (const std::string& s :
       std::vector<std::string>{"", "f", "fo", "foo", "foob", std::string("\0\xff\x10", 3)}) {
    EXPECT_EQ(base64url_decode(base64url_encode(s)), s);
  }
  EXPECT_FALSE(base64url_decode("a"));
  EXPECT_FALSE(base64url_decode("ab+/"));
}

// Every bad token is a 401 through the verify route and through the gate.
TEST(TokenHttp, BadTokensAre401) {
  TestServer server;
  HttpClient c(server.port());
  c.admin("PUT", "/v1/rooms/r", R"({"capacity":5})");
  c.admin("PUT", "/v1/rooms/other", R"({"capacity":5})");
  std::string good =
      field(c.request("POST", "/v1/rooms/r/tickets", R"({"user":"u"})").body, "token");
  std::string elsewhere = field(c.request("POST", "/v1/rooms/other/tickets").body, "token");
  ASSERT_FALSE(good.empty());
  auto p = parts(good);
  auto body = boost::json::parse(*base64url_decode(p[1])).as_object();
  body["usr"] = "admin";
  std::string tampered = p[0] + "." + base64url_encode(boost::json::serialize(body)) + "." + p[2];
  std::string wrong_sig = p[0] + "." + p[1] + "." + base64url_encode(std::string(32, 'x'));
  TokenClaims old;
  old.ticket = field(c.request("POST", "/v1/rooms/r/tickets").body, "ticket");
  old.room = "r";
  old.issued_at = unix_now_s() - 100;
  old.expires_at = unix_now_s() - 10;
  std::string expired = TokenSigner(kSecret).sign(old);
  std::string none = base64url_encode(R"({"alg":"none","typ":"JWT"})") + "." + p[1] + ".";
  for (const std::string& bad : {tampered, wrong_sig, elsewhere, expired, none}) {
    Reply v = c.admin("POST", "/v1/rooms/r/verify", R"({"token":")" + bad + "\"}");
    EXPECT_EQ(v.status, 401u) << bad;
    EXPECT_EQ(c.request("GET", "/v1/gate/r", "", {{"Cookie", "anteroom_r=" + bad}}).status, 401u)
        << bad;
  }
  EXPECT_EQ(c.admin("POST", "/v1/rooms/r/verify", R"({"token":")" + good + "\"}").status, 200u);
}

// ---- ES256 ----

TEST(TokenEs256, IsAStandardJwtWithTheKeysThumbprintAsKid) {
  EcKey key = fresh_key();
  TokenSigner s(key);
  EXPECT_EQ(s.alg(), TokenAlg::kES256);
  std::string jwt = s.sign(claims(1000));
  auto header = header_of(jwt);
  EXPECT_EQ(header.at("alg").as_string(), "ES256");
  EXPECT_EQ(header.at("typ").as_string(), "JWT");
  EXPECT_EQ(header.at("kid").as_string(), key.kid());
  EXPECT_EQ(base64url_decode(parts(jwt)[2])->size(), 64u);  // raw R || S, not DER
  auto jwks = boost::json::parse(s.jwks()).as_object();
  ASSERT_EQ(jwks.at("keys").as_array().size(), 1u);
  const auto& jwk = jwks.at("keys").as_array()[0].as_object();
  EXPECT_EQ(jwk.at("kty").as_string(), "EC");
  EXPECT_EQ(jwk.at("crv").as_string(), "P-256");
  EXPECT_EQ(jwk.at("alg").as_string(), "ES256");
  EXPECT_EQ(jwk.at("kid").as_string(), thumbprint(jwk));
  EXPECT_FALSE(jwk.contains("d"));  // never the private part
  auto c = s.verify(jwt, "r", 1001);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->ticket, "T");
  EXPECT_EQ(c->user, "user_1");
  EXPECT_EQ(c->expires_at, 1060);
}

// The refusals, each for its own reason; `good` is verified first so the cache holds it.
TEST(TokenEs256, RefusesForgedExpiredOtherRoomOtherKeyAlgNoneConfusionAndUnknownKid) {
  EcKey key = fresh_key();
  TokenSigner s(key);
  const int64_t now = 5000;
  std::string good = s.sign(claims(now));
  ASSERT_TRUE(s.verify(good, "r", now));
  auto p = parts(good);
  auto header = header_of(good);
  auto body = boost::json::parse(*base64url_decode(p[1])).as_object();
  TokenError why{};
  auto refused = [&](const std::string& token, TokenError want, const char* what) {
    EXPECT_FALSE(s.verify(token, "r", now, &why)) << what;
    EXPECT_EQ(why, want) << what;
  };

  auto other_body = body;
  other_body["sub"] = "SOMEONE_ELSE";
  refused(p[0] + "." + base64url_encode(boost::json::serialize(other_body)) + "." + p[2],
          TokenError::kBadSignature, "forged claims");
  std::string sig = *base64url_decode(p[2]);
  sig[10] ^= 1;
  refused(p[0] + "." + p[1] + "." + base64url_encode(sig), TokenError::kBadSignature,
          "flipped signature bit");
  refused(p[0] + "." + p[1] + "." + base64url_encode(std::string(64, '\0')),
          TokenError::kBadSignature, "zero signature");
  refused(p[0] + "." + p[1] + "." + base64url_encode(std::string(72, 'x')),
          TokenError::kBadSignature, "signature of the wrong length");

  // Expired and other room come from the cache here (good was verified above).
  EXPECT_FALSE(s.verify(good, "r", now + 60, &why));
  EXPECT_EQ(why, TokenError::kExpired);
  EXPECT_FALSE(s.verify(good, "other-room", now, &why));
  EXPECT_EQ(why, TokenError::kWrongRoom);

  // Another key: its own kid is unknown; with our kid its signature fails.
  EcKey other = fresh_key();
  refused(TokenSigner(other).sign(claims(now)), TokenError::kUnknownKey, "other key");
  refused(forge(header, body, [&](const std::string& in) { return other.sign(in); }),
          TokenError::kBadSignature, "other key under our kid");

  auto none = header;
  none["alg"] = "none";
  refused(base64url_encode(boost::json::serialize(none)) + "." + p[1] + ".",
          TokenError::kBadAlgorithm, "alg none");
  auto es384 = header;
  es384["alg"] = "ES384";
  refused(forge(es384, body, [&](const std::string& in) { return key.sign(in); }),
          TokenError::kBadAlgorithm, "alg ES384 with our key");

  // Algorithm confusion: HS256 with what an attacker knows of the public key as the secret.
  auto hs = header;
  hs["alg"] = "HS256";
  const std::string jwk_text =
      boost::json::serialize(boost::json::parse(s.jwks()).as_object().at("keys").as_array()[0]);
  const std::string pub_pem = key.public_pem();
  ASSERT_NE(pub_pem.find("BEGIN PUBLIC KEY"), std::string::npos);
  for (const std::string& secret : {pub_pem, jwk_text, key.kid()}) {
    refused(forge(hs, body, [&](const std::string& in) { return hmac_sha256(secret, in); }),
            TokenError::kBadAlgorithm, "HS256 with the public key");
  }

  auto unknown = header;
  unknown["kid"] = "no-such-key";
  refused(forge(unknown, body, [&](const std::string& in) { return key.sign(in); }),
          TokenError::kUnknownKey, "unknown kid");
  auto no_kid = header;
  no_kid.erase("kid");
  refused(forge(no_kid, body, [&](const std::string& in) { return key.sign(in); }),
          TokenError::kUnknownKey, "no kid");
  auto number_kid = header;
  number_kid["kid"] = 7;
  refused(forge(number_kid, body, [&](const std::string& in) { return key.sign(in); }),
          TokenError::kUnknownKey, "kid not a string");

  // After all of that the good token still verifies.
  EXPECT_TRUE(s.verify(good, "r", now));
}

TEST(TokenEs256, RotationAcceptsThePreviousKeyUntilItIsDropped) {
  EcKey old_key = fresh_key();
  EcKey new_key = fresh_key();
  const int64_t now = 7000;
  std::string old_token = TokenSigner(old_key).sign(claims(now));
  // The previous key may be given by its public half only.
  auto old_public = EcKey::from_pem(old_key.public_pem(), "old", false);
  ASSERT_TRUE(old_public.is_ok()) << old_public.status().message();
  EXPECT_FALSE(old_public->has_private());
  EXPECT_EQ(old_public->kid(), old_key.kid());

  TokenSigner rotating(new_key, old_public.value());
  EXPECT_EQ(header_of(rotating.sign(claims(now))).at("kid").as_string(), new_key.kid());
  EXPECT_TRUE(rotating.verify(old_token, "r", now));
  EXPECT_TRUE(rotating.verify(rotating.sign(claims(now)), "r", now));
  auto keys = boost::json::parse(rotating.jwks()).as_object().at("keys").as_array();
  ASSERT_EQ(keys.size(), 2u);
  EXPECT_EQ(keys[0].as_object().at("kid").as_string(), new_key.kid());
  EXPECT_EQ(keys[1].as_object().at("kid").as_string(), old_key.kid());

  TokenSigner rotated(new_key);
  TokenError why{};
  EXPECT_FALSE(rotated.verify(old_token, "r", now, &why));
  EXPECT_EQ(why, TokenError::kUnknownKey);
}

TEST(TokenEs256, SignsOnceForTheSameClaimsAndAgainWhenExpChanges) {
  TokenSigner s(fresh_key());
  TokenClaims c = claims(100);
  std::string a = s.sign(c);
  c.issued_at = 101;  // a later status read of the same admission
  EXPECT_EQ(s.sign(c), a);
  c.expires_at += 1;  // the session moved on
  std::string b = s.sign(c);
  EXPECT_NE(b, a);
  EXPECT_EQ(boost::json::parse(*base64url_decode(parts(b)[1])).as_object().at("iat").as_int64(),
            101);
  c.room = "other";
  EXPECT_EQ(s.verify(s.sign(c), "other", 102)->room, "other");
  EXPECT_NE(s.sign(c), b);
}

TEST(TokenHs256, CarriesAKidAndRefusesAnotherOne) {
  TokenSigner s("secret");
  std::string jwt = s.sign(claims(1000));
  auto header = header_of(jwt);
  EXPECT_EQ(header.at("kid").as_string(), s.kid());
  EXPECT_EQ(s.jwks(), R"({"keys":[]})");  // a shared secret is never published
  auto body = boost::json::parse(*base64url_decode(parts(jwt)[1])).as_object();
  auto hmac = [](const std::string& in) { return hmac_sha256("secret", in); };
  TokenError why{};
  auto other = header;
  other["kid"] = "someone-else";
  EXPECT_FALSE(s.verify(forge(other, body, hmac), "r", 1001, &why));
  EXPECT_EQ(why, TokenError::kUnknownKey);
  // Tokens issued before kids were written have none, and still count.
  auto legacy = header;
  legacy.erase("kid");
  EXPECT_TRUE(s.verify(forge(legacy, body, hmac), "r", 1001));
  // An ES256 token at an HS256 server: refused by algorithm.
  EcKey key = fresh_key();
  EXPECT_FALSE(s.verify(TokenSigner(key).sign(claims(1000)), "r", 1001, &why));
  EXPECT_EQ(why, TokenError::kBadAlgorithm);
}

}  // namespace
}  // namespace anteroom::testing
