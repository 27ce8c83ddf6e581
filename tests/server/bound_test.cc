// Bound admissions (docs/security.md), the parts around the token: a bound admission counts only
// with its key (at the gate, at verify, for the cookie), and a refused try changes nothing; cookies
// are Secure behind an https --public-url; --admin-listen moves the operator routes to their own
// listener; the waiting page's security headers.
#include <boost/json.hpp>
#include <regex>
#include <string>

#include "server/app/api.h"
#include "server/app/keys.h"
#include "server/app/token.h"
#include "server/transport/server.h"
#include "tests/server/harness.h"

namespace anteroom::testing {
namespace {

namespace json = boost::json;

constexpr const char* kKey = "0123456789abcdef0123456789abcdef";

class Bound : public ::testing::Test {
 protected:
  void start(const Options& o = test_options()) {
    server_ = std::make_unique<TestServer>(o);
    client_ = std::make_unique<HttpClient>(server_->port());
    ASSERT_EQ(client_->admin("PUT", "/v1/rooms/r", R"({"capacity":5})").status, 201u);
    json::object body{{"key_sha256", key_hash_hex(hash_key(kKey))}};
    Reply j = client_->request("POST", "/v1/rooms/r/tickets", json::serialize(body));
    ASSERT_EQ(j.status, 201u) << j.body;
    auto s = json::parse(j.body).as_object();
    ASSERT_EQ(s.at("status").as_string(), "ALLOWED");
    ticket_ = std::string(s.at("ticket").as_string());
    token_ = std::string(s.at("token").as_string());
  }
  Reply verify(const std::string& key) {
    json::object body{{"token", token_}};
    if (!key.empty()) body["key"] = key;
    return client_->admin("POST", "/v1/rooms/r/verify", json::serialize(body));
  }
  Reply gate(const std::string& cookie) {
    return client_->request("GET", "/v1/gate/r", "", {{"Cookie", cookie}});
  }
  std::string state() {
    return std::string(json::parse(client_->request("GET", "/v1/rooms/r/tickets/" + ticket_).body)
                           .as_object()
                           .at("status")
                           .as_string());
  }
  std::unique_ptr<TestServer> server_;
  std::unique_ptr<HttpClient> client_;
  std::string ticket_, token_;
};

// The token says what it is bound to (cnf.kh), so a service checking it with the JWKS
// can ask for the key too.
TEST_F(Bound, TheTokenCarriesTheKeysHash) {
  start();
  TokenSigner signer(kSecret);
  auto claims = signer.verify(token_, "r", unix_now_s());
  ASSERT_TRUE(claims.has_value());
  EXPECT_EQ(claims->key_hash, key_hash_hex(hash_key(kKey)));
  const std::string payload = *base64url_decode(
      token_.substr(token_.find('.') + 1, token_.rfind('.') - token_.find('.') - 1));
  EXPECT_NE(payload.find(R"("cnf":{"kh":")" + key_hash_hex(hash_key(kKey)) + "\"}"),
            std::string::npos)
      << payload;
}

TEST_F(Bound, VerifyNeedsTheKey) {
  start();
  for (const std::string& key : {std::string(), std::string("another key")}) {
    Reply r = verify(key);
    EXPECT_EQ(r.status, 401u) << key << r.body;
    EXPECT_NE(r.body.find("bound"), std::string::npos) << r.body;
  }
  EXPECT_EQ(state(), "ALLOWED") << "a refused token changed the ticket";
  EXPECT_EQ(verify(kKey).status, 200u);
  EXPECT_EQ(state(), "ACTIVE");
}

TEST_F(Bound, TheGateNeedsTheKeyCookie) {
  start();
  const std::string token_cookie = "anteroom_r=" + token_;
  EXPECT_EQ(gate(token_cookie).status, 401u) << "a token copied without its key";
  EXPECT_EQ(gate(token_cookie + "; anteroom_r_key=wrong").status, 401u);
  EXPECT_EQ(state(), "ALLOWED");
  // Another room's cookie of the same name (room "r_key"'s token) does not get in the way.
  EXPECT_EQ(gate(token_cookie + "; anteroom_r_key=other; anteroom_r_key=" + kKey).status, 204u);
  EXPECT_EQ(state(), "ACTIVE");
}

// The finding: the gate renewed the token's cookie but never the key's, so a bound visitor
// using the site was locked out when the key cookie expired (11 s with 2 s TTLs; an hour
// at the defaults), and the request that hit the 401 was lost. A browser's jar is played
// here: each Set-Cookie replaces its cookie, and a cookie past its Max-Age is gone.
TEST(BoundRenewal, AVisitorUsingTheSiteKeepsItsKeyForAsLongAsItsSession) {
  auto clock = std::make_shared<ManualClock>();
  TestServer server(test_options(), engine_on(clock));
  HttpClient c(server.port());
  ASSERT_EQ(c.admin("PUT", "/v1/rooms/r",
                    R"({"capacity":5,"allowed_ttl_seconds":2,"session_ttl_seconds":2})")
                .status,
            201u);
  Reply j = c.request("POST", "/v1/rooms/r/tickets", std::string(R"({"key":")") + kKey + "\"}");
  ASSERT_EQ(j.status, 201u) << j.body;
  const std::string ticket = json_field(j.body, "ticket");
  struct Kept {
    std::string value;
    int64_t expires_ms;
  };
  std::map<std::string, Kept> jar;
  auto take = [&](const Reply& r) {
    std::string all = r.header("set-cookie");
    for (size_t at = 0; at < all.size();) {
      size_t end = all.find('\n', at);
      if (end == std::string::npos) end = all.size();
      const std::string line = all.substr(at, end - at);
      at = end + 1;
      const size_t eq = line.find('='), semi = line.find(';');
      const size_t age = line.find("Max-Age=");
      ASSERT_NE(age, std::string::npos) << line;
      jar[line.substr(0, eq)] = {line.substr(eq + 1, semi - eq - 1),
                                 clock->now_ms() + 1000 * std::stoll(line.substr(age + 8))};
    }
  };
  auto cookie_header = [&] {
    std::string h;
    for (const auto& [name, kept] : jar) {
      if (kept.expires_ms > clock->now_ms()) h += (h.empty() ? "" : "; ") + name + "=" + kept.value;
    }
    return h;
  };
  take(c.request("POST", "/v1/rooms/r/tickets/" + ticket + "/cookie",
                 std::string(R"({"key":")") + kKey + "\"}"));
  for (int i = 0; i < 60; ++i) {  // a minute of clicks, one a second (the TTLs are 2 s)
    clock->advance_ms(1000);
    Reply g = c.request("GET", "/v1/gate/r", "", {{"Cookie", cookie_header()}});
    ASSERT_EQ(g.status, 204u) << "locked out after " << i << " s; cookies: " << cookie_header();
    take(g);
  }
}

// One cookie carries the token and the key (TOKEN~KEY): proxies pass one Set-Cookie at most.
TEST_F(Bound, TheCookieRouteSetsOneCookieWithItsKeyOnly) {
  start();
  const std::string path = "/v1/rooms/r/tickets/" + ticket_ + "/cookie";
  Reply none = client_->request("POST", path);
  EXPECT_EQ(none.status, 401u);
  EXPECT_NE(none.body.find("key_required"), std::string::npos) << none.body;
  EXPECT_EQ(client_->request("POST", path, R"({"key":"wrong"})").status, 401u);
  EXPECT_EQ(client_->request("POST", path, R"({"key":"a;b"})").status, 400u);
  EXPECT_EQ(client_->request("POST", path, R"({"key":"k","x":1})").status, 400u);
  Reply ok = client_->request("POST", path, std::string(R"({"key":")") + kKey + "\"}");
  ASSERT_EQ(ok.status, 204u) << ok.body;
  const std::string cookies = ok.header("set-cookie");
  EXPECT_EQ(cookies.find('\n'), std::string::npos) << "one Set-Cookie: " << cookies;
  EXPECT_NE(cookies.find("anteroom_r=" + token_ + "~" + kKey + ";"), std::string::npos) << cookies;
  EXPECT_EQ(cookies.find("Secure"), std::string::npos) << "no https --public-url";
  EXPECT_NE(cookies.find("HttpOnly"), std::string::npos);
  EXPECT_NE(cookies.find("SameSite=Lax"), std::string::npos);
}

TEST_F(Bound, CookiesAreSecureBehindHttps) {
  Options o = test_options();
  o.public_url = "https://queue.example.com";
  start(o);
  Reply ok = client_->request("POST", "/v1/rooms/r/tickets/" + ticket_ + "/cookie",
                              std::string(R"({"key":")") + kKey + "\"}");
  ASSERT_EQ(ok.status, 204u);
  const std::string cookies = ok.header("set-cookie");
  EXPECT_EQ(std::count(cookies.begin(), cookies.end(), '\n'), 0) << cookies;
  EXPECT_NE(cookies.find("; Secure"), std::string::npos) << cookies;
  // A __Host- cookie (a sibling subdomain cannot set one), and the gate reads that name only.
  ASSERT_TRUE(cookies.starts_with("__Host-anteroom_r=")) << cookies;
  EXPECT_NE(cookies.find("Path=/;"), std::string::npos) << cookies;
  EXPECT_EQ(cookies.find("Domain"), std::string::npos) << cookies;
  const std::string value = cookies.substr(0, cookies.find(';'));
  EXPECT_EQ(client_->request("GET", "/v1/gate/r", "", {{"Cookie", value}}).status, 204u);
  const std::string tossed = "anteroom_r" + value.substr(value.find('='));
  EXPECT_EQ(client_->request("GET", "/v1/gate/r", "", {{"Cookie", tossed}}).status, 401u)
      << "a cookie without the prefix, as a sibling could plant it";
}

TEST(AdminListen, OperatorRoutesMoveToTheirOwnListener) {
  Options o = test_options();
  o.admin_listen = "127.0.0.1:0";
  TestServer server(o);
  ASSERT_NE(server.server().admin_port(), 0);
  HttpClient pub(server.port()), ops(server.server().admin_port());
  EXPECT_EQ(pub.admin("PUT", "/v1/rooms/r", "{}").status, 404u);
  EXPECT_EQ(pub.admin("GET", "/v1/rooms").status, 404u);
  EXPECT_EQ(pub.request("GET", "/metrics").status, 404u);
  EXPECT_EQ(ops.admin("PUT", "/v1/rooms/r", "{}").status, 201u);
  EXPECT_EQ(ops.request("PUT", "/v1/rooms/r", "{}").status, 401u) << "still needs the key";
  EXPECT_EQ(pub.admin("POST", "/v1/rooms/r/admit", R"({"count":1})").status, 404u);
  EXPECT_EQ(pub.admin("PUT", "/v1/rooms/r/event", "{}").status, 404u);
  // Visitors' routes are on the public listener only.
  Reply j = pub.request("POST", "/v1/rooms/r/tickets");
  EXPECT_EQ(j.status, 201u);
  EXPECT_EQ(ops.request("POST", "/v1/rooms/r/tickets").status, 404u);
  EXPECT_EQ(pub.request("GET", "/v1/rooms/r/event").status, 404u) << "no event: the room's 404";
  EXPECT_EQ(ops.request("GET", "/metrics").status, 200u);
  for (HttpClient* c : {&pub, &ops}) EXPECT_EQ(c->request("GET", "/healthz").status, 200u);
  // Only /v1/rooms/{room}/verify is on both: not a room named "verify", not a ticket.
  EXPECT_EQ(pub.admin("PUT", "/v1/rooms/verify", "{}").status, 404u);
  EXPECT_EQ(ops.request("GET", "/v1/rooms/r/tickets/verify").status, 404u);
  EXPECT_EQ(pub.admin("POST", "/v1/rooms/r/verify", R"({"token":"x"})").status, 401u);
  EXPECT_EQ(ops.admin("POST", "/v1/rooms/r/verify", R"({"token":"x"})").status, 401u);
}

// Whether `anteroom FLAG` parses.
bool parses(std::string flag) {
  std::string name = "anteroom", out;
  char* argv[] = {name.data(), flag.data()};
  return parse_options(2, argv, &out).is_ok();
}

TEST(AdminListen, BadValuesAreRefusedAtStart) {
  for (const char* bad : {"nowhere", "127.0.0.1:99999", "127.0.0.1:"}) {
    EXPECT_FALSE(parses(std::string("--admin-listen=") + bad)) << bad;
  }
  EXPECT_TRUE(parses("--admin-listen=127.0.0.1:9001"));
  EXPECT_FALSE(parses("--public-url=ftp://x"));
  EXPECT_TRUE(parses("--public-url=https://q.example.com"));
}

TEST(PageHeaders, TheWaitingPageRunsOnlyItsOwnScriptAndIsNeverFramed) {
  TestServer server;
  HttpClient c(server.port());
  Reply a = c.request("GET", "/wait/r"), b = c.request("GET", "/wait/r");
  ASSERT_EQ(a.status, 200u);
  const std::string csp = a.header("content-security-policy");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(csp, m, std::regex("script-src 'nonce-([A-Za-z0-9_-]{22})'")))
      << csp;
  EXPECT_NE(a.body.find("<script nonce=\"" + m[1].str() + "\">"), std::string::npos);
  EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos);
  EXPECT_NE(csp.find("default-src 'none'"), std::string::npos);
  EXPECT_NE(b.header("content-security-policy"), csp) << "the nonce is new each time";
  EXPECT_EQ(a.header("x-frame-options"), "DENY");
  EXPECT_EQ(a.header("x-content-type-options"), "nosniff");
  EXPECT_FALSE(a.header("referrer-policy").empty());
}

}  // namespace
}  // namespace anteroom::testing
