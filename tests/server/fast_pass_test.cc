// nginx's fast pass (server/app/fast_pass.h) as the gate gives it: on an admitted answer
// asked the nginx way by a config that asks for one, for a host one room alone protects;
// its value is what nginx's secure_link_md5 computes (tests/nginx/fast_pass.sh checks the
// same against a real nginx).
#include <openssl/evp.h>

#include <string>

#include "server/app/fast_pass.h"
#include "server/app/jws.h"
#include "tests/server/gate_fixture.h"

namespace anteroom::testing {
namespace {

constexpr char kSecret[] = "fast-pass-secret-of-the-test-0123456789";

class FastPass : public ForwardAuth {
 protected:
  void adjust(Options& o) override {
    o.fast_pass_secret = kSecret;
    o.fast_pass_seconds = 3;
  }
  Reply nginx(const std::string& host, const std::string& fast_host, const std::string& cookie) {
    Headers h{{"X-Original-URI", "/"}, {"X-Forwarded-Host", host}, {"Accept", "text/html"}};
    if (!fast_host.empty()) h["X-Anteroom-Fast-Host"] = fast_host;
    if (!cookie.empty()) h["Cookie"] = cookie;
    return c_->request("GET", "/v1/gate", "", h);
  }
  void put_room(const std::string& name, const std::string& body) {
    const unsigned status = c_->admin("PUT", "/v1/rooms/" + name, body).status;
    ASSERT_TRUE(status == 200u || status == 201u) << status << " " << body;
  }
};

// MD5 of EXPIRES, space, host, space, secret, unpadded base64url: nginx's secure_link_md5.
std::string md5_b64url(const std::string& text) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(text.data(), text.size(), md, &len, EVP_md5(), nullptr);
  return base64url_encode(std::string_view(reinterpret_cast<const char*>(md), len));
}

TEST_F(FastPass, AnAdmittedVisitorGetsOneForTheHostNginxNames) {
  put_room("shop", R"({"capacity":5,"match":[{"host":"shop.example"}]})");
  const int64_t before = static_cast<int64_t>(std::time(nullptr));
  Reply r = nginx("Shop.Example:8443", "shop.example", "");
  ASSERT_EQ(r.status, 200u);
  const std::string set = r.header("x-anteroom-fast-pass");
  ASSERT_EQ(set.rfind("anteroom_fast=", 0), 0u) << set;
  EXPECT_NE(set.find("; Max-Age=3;"), std::string::npos) << set;
  EXPECT_NE(set.find("HttpOnly"), std::string::npos) << set;
  const std::string value = set.substr(14, set.find(';') - 14);
  const size_t dot = value.find('.');
  ASSERT_NE(dot, std::string::npos) << value;
  const std::string exp = value.substr(dot + 1);
  const int64_t expires = std::stoll(exp);
  EXPECT_GE(expires, before + 3);
  EXPECT_LE(expires, static_cast<int64_t>(std::time(nullptr)) + 3);
  EXPECT_EQ(value.substr(0, dot), md5_b64url(exp + " shop.example " + kSecret));
  EXPECT_EQ(value.substr(0, dot).size(), 22u);
  // Again with the admission cookie it was given: another fast pass.
  const std::string cookie = r.header("set-cookie").substr(0, r.header("set-cookie").find(';'));
  Reply again = nginx("shop.example", "shop.example", cookie);
  ASSERT_EQ(again.status, 200u);
  EXPECT_FALSE(again.header("x-anteroom-fast-pass").empty());
}

TEST_F(FastPass, NoneUnlessNginxAsksForItAndTheHostIsOneRooms) {
  put_room("shop", R"({"capacity":5,"match":[{"host":"shop.example","path_prefix":"/"}]})");
  EXPECT_TRUE(nginx("shop.example", "", "").header("x-anteroom-fast-pass").empty());
  EXPECT_TRUE(nginx("shop.example", "shop.example/x", "").header("x-anteroom-fast-pass").empty());
  // Traefik's way never gets one (only nginx's config checks it).
  Reply t = c_->request("GET", "/v1/gate", "",
                        {{"X-Forwarded-Uri", "/"},
                         {"X-Forwarded-Host", "shop.example"},
                         {"X-Anteroom-Fast-Host", "shop.example"}});
  EXPECT_TRUE(t.header("x-anteroom-fast-pass").empty());
  // A second room on the same host (another path, or any host): the pass would name both.
  put_room("tickets",
           R"({"capacity":5,"match":[{"host":"shop.example:8443","path_prefix":"/t/"}]})");
  EXPECT_TRUE(nginx("shop.example", "shop.example", "").header("x-anteroom-fast-pass").empty());
  put_room("tickets", R"({"capacity":5,"match":[{"path_prefix":"/t/"}]})");
  EXPECT_TRUE(nginx("shop.example", "shop.example", "").header("x-anteroom-fast-pass").empty());
  put_room("tickets", R"({"capacity":5,"match":[{"host":"other.example"}]})");
  EXPECT_FALSE(nginx("shop.example", "shop.example", "").header("x-anteroom-fast-pass").empty());
  // Not admitted: nothing.
  put_room("shop", R"({"capacity":5,"match":[{"host":"shop.example"}],"gate_admits":false})");
  Reply no = nginx("shop.example", "shop.example", "");
  EXPECT_EQ(no.status, 401u);
  EXPECT_TRUE(no.header("x-anteroom-fast-pass").empty());
}

TEST(FastPassOptions, TheSecretMustBeStrongAndQuotableAndTheSecondsBounded) {
  auto parse = [](std::vector<std::string> args) {
    args.insert(args.begin(), "anteroom");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    std::string exit_now;
    return parse_options(static_cast<int>(argv.size()), argv.data(), &exit_now);
  };
  EXPECT_TRUE(parse({"--fast-pass-secret", "abcdefghijklmnopqrstuvwxyz0123456789"}).is_ok());
  EXPECT_FALSE(parse({"--fast-pass-secret", "short-0123456789"}).is_ok());
  EXPECT_FALSE(parse({"--fast-pass-secret", "abcdefghijklmnopqrstuvwxyz012345678\"9"}).is_ok());
  EXPECT_FALSE(parse({"--fast-pass-seconds", "0"}).is_ok());
  EXPECT_FALSE(parse({"--fast-pass-seconds", "61"}).is_ok());
  EXPECT_EQ(parse({"--fast-pass-seconds", "60"})->fast_pass_seconds, 60u);
}

}  // namespace
}  // namespace anteroom::testing
