// Admission tokens: standard HS256 JWTs; every kind of bad token is refused, by the signer
// and over HTTP (verify route and gate).
#include "server/app/token.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <boost/json.hpp>

#include "server/app/api.h"
#include "tests/server/harness.h"

namespace anteroom::testing {
namespace {

TokenClaims claims(int64_t now) {
  TokenClaims c;
  c.ticket = "T";
  c.room = "r";
  c.user = "user_1";
  c.issued_at = now;
  c.expires_at = now + 60;
  return c;
}

std::vector<std::string> parts(const std::string& jwt) {
  size_t a = jwt.find('.'), b = jwt.find('.', a + 1);
  return {jwt.substr(0, a), jwt.substr(a + 1, b - a - 1), jwt.substr(b + 1)};
}

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

  EXPECT_FALSE(s.verify(TokenSigner("other").sign(claims(now)), "r", now, &why));
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

}  // namespace
}  // namespace anteroom::testing
