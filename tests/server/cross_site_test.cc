// A browser request from another site that would change state is refused 403 cross_site
// and changes nothing: a plain form elsewhere could POST a join for its visitors (burning
// their address's quota, taking names). Requests without Origin or Sec-Fetch-Site (curl,
// services) and same-site pages are unaffected; --allow-origin names other sites that may.
#include "server/app/cross_site.h"

#include <boost/json.hpp>

#include "tests/server/harness.h"

namespace anteroom::testing {
namespace {

class CrossSite : public ::testing::Test {
 protected:
  void start(std::vector<std::string> allow = {}, std::vector<std::string> proxies = {}) {
    Options o = test_options();
    o.allow_origins = std::move(allow);
    o.trusted_proxies = std::move(proxies);
    server_ = std::make_unique<TestServer>(o);
    HttpClient c(server_->port());
    ASSERT_EQ(c.admin("PUT", "/v1/rooms/r", R"({"capacity":0,"admission":"manual"})").status, 201u);
  }
  Reply join(const std::map<std::string, std::string>& headers) {
    HttpClient c(server_->port());
    return c.request("POST", "/v1/rooms/r/tickets", "{}", headers);
  }
  uint64_t joined() {
    HttpClient c(server_->port());
    auto o = boost::json::parse(c.admin("GET", "/v1/rooms/r").body).as_object();
    return o.at("totals").at("joined").to_number<uint64_t>();
  }
  std::string here() { return "127.0.0.1:" + std::to_string(server_->port()); }
  std::unique_ptr<TestServer> server_;
};

TEST_F(CrossSite, AFormOnAnotherSiteCannotJoin) {
  start();
  Reply r = join({{"Origin", "https://evil.example"}, {"Sec-Fetch-Site", "cross-site"}});
  EXPECT_EQ(r.status, 403u);
  EXPECT_EQ(json_field(json_field(r.body, "error"), "code"), "cross_site");
  EXPECT_EQ(join({{"Sec-Fetch-Site", "cross-site"}}).status, 403u) << "the header alone";
  // Plain HTTP: browsers send no Sec-Fetch-* to other hosts, only Origin.
  EXPECT_EQ(join({{"Origin", "http://evil.example"}}).status, 403u);
  EXPECT_EQ(join({{"Origin", "null"}}).status, 403u);
  EXPECT_EQ(joined(), 0u) << "nothing changed";
}

TEST_F(CrossSite, ThisSiteAndNonBrowsersStillJoin) {
  start();
  EXPECT_EQ(join({}).status, 201u) << "curl sends neither header";
  EXPECT_EQ(join({{"Sec-Fetch-Site", "same-origin"}, {"Origin", "http://" + here()}}).status, 201u);
  EXPECT_EQ(join({{"Origin", "http://" + here()}}).status, 201u) << "Origin names this host";
  EXPECT_EQ(join({{"Origin", "HTTP://127.0.0.1:" + std::to_string(server_->port())},
                  {"Sec-Fetch-Site", "same-site"}})
                .status,
            201u)
      << "case aside";
  EXPECT_EQ(joined(), 4u);
}

// The review's finding: Sec-Fetch-Site: same-site passed, so a sibling subdomain's page (user
// content, a marketing site) or another port's could join for its visitors. Now the Origin
// decides, and must name this site exactly.
TEST_F(CrossSite, ASiblingSubdomainOrAnotherPortIsAnotherSite) {
  start();
  EXPECT_EQ(join({{"Origin", "http://127.0.0.1:1"}, {"Sec-Fetch-Site", "same-site"}}).status, 403u)
      << "another port";
  EXPECT_EQ(join({{"Origin", "http://127.0.0.1:1"}}).status, 403u) << "another port, plain HTTP";
  EXPECT_EQ(join({{"Origin", "https://evil.queue.example"},
                  {"Host", "queue.example"},
                  {"Sec-Fetch-Site", "same-site"}})
                .status,
            403u)
      << "a sibling subdomain";
  EXPECT_EQ(join({{"Sec-Fetch-Site", "same-site"}}).status, 403u)
      << "a browser's write names its origin";
  EXPECT_EQ(joined(), 0u);
}

// With --public-url the site is that one alone: a Host header proves nothing (a page on a
// rebound DNS name sends its own).
TEST(CrossSitePublicUrl, OnlyThePublicUrlIsThisSite) {
  Options o = test_options();
  o.public_url = "https://queue.example";
  TestServer server(o);
  HttpClient c(server.port());
  ASSERT_EQ(c.admin("PUT", "/v1/rooms/r", "{}").status, 201u);
  auto join = [&](std::map<std::string, std::string> h) {
    return c.request("POST", "/v1/rooms/r/tickets", "{}", h).status;
  };
  EXPECT_EQ(join({{"Origin", "https://queue.example"}}), 201u);
  EXPECT_EQ(join({{"Origin", "https://queue.example:443"}}), 201u) << "the default port";
  EXPECT_EQ(join({{"Origin", "http://evil.example"}, {"Host", "evil.example"}}), 403u);
  EXPECT_EQ(join({{"Origin", "http://queue.example"}}), 403u) << "another scheme";
}

TEST_F(CrossSite, AllowedOriginsAndATrustedProxysHost) {
  start({"https://shop.example"}, {"127.0.0.1/32"});
  EXPECT_EQ(join({{"Origin", "https://shop.example"}, {"Sec-Fetch-Site", "cross-site"}}).status,
            201u);
  // Behind a proxy that sends the visitor's host as X-Forwarded-Host (its Host is its own).
  EXPECT_EQ(join({{"Origin", "http://queue.example"},
                  {"Host", "anteroom-upstream"},
                  {"X-Forwarded-Host", "queue.example"}})
                .status,
            201u);
  EXPECT_EQ(join({{"Origin", "http://evil.example"},
                  {"Host", "anteroom-upstream"},
                  {"X-Forwarded-Host", "queue.example"}})
                .status,
            403u);
}

// The third review's findings: an --allow-origin written with its default port never
// matched (browsers leave it out of Origin), and without --public-url an Origin of another
// scheme, or with a path, passed when its host matched.
TEST_F(CrossSite, OriginsCompareAsOrigins) {
  start({"https://shop.example:443"});
  EXPECT_EQ(join({{"Origin", "https://shop.example"}, {"Sec-Fetch-Site", "cross-site"}}).status,
            201u)
      << "443 is https's default";
  EXPECT_EQ(join({{"Origin", "http://shop.example"}, {"Sec-Fetch-Site", "cross-site"}}).status,
            403u)
      << "another scheme";
  const std::string port = std::to_string(server_->port());
  EXPECT_EQ(join({{"Origin", "ftp://127.0.0.1:" + port}}).status, 403u);
  EXPECT_EQ(join({{"Origin", "http://127.0.0.1:" + port + "/evil"}}).status, 403u);
  EXPECT_EQ(join({{"Origin", "http://127.0.0.1:" + port}}).status, 201u);
}

TEST_F(CrossSite, AnUntrustedPeersForwardedHostIsIgnored) {
  start();
  EXPECT_EQ(join({{"Origin", "http://evil.example"}, {"X-Forwarded-Host", "evil.example"}}).status,
            403u);
}

TEST_F(CrossSite, AWebSocketFromAnotherSiteIsRefused) {
  start();
  HttpClient c(server_->port());
  Reply r = c.request("GET", "/v1/rooms/r/ws", "",
                      {{"Upgrade", "websocket"},
                       {"Connection", "Upgrade"},
                       {"Sec-WebSocket-Version", "13"},
                       {"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="},
                       {"Origin", "https://evil.example"}});
  EXPECT_EQ(r.status, 403u) << r.body;
  EXPECT_EQ(json_field(json_field(r.body, "error"), "code"), "cross_site");
}

TEST(CrossSiteOrigins, WhatAnAllowOriginMayBe) {
  EXPECT_EQ(check_origin("https://shop.example.com"), "");
  EXPECT_EQ(check_origin("http://127.0.0.1:8000"), "");
  EXPECT_NE(check_origin("shop.example.com"), "");
  EXPECT_NE(check_origin("https://shop.example.com/"), "");
  EXPECT_NE(check_origin("ftp://shop.example.com"), "");
}

}  // namespace
}  // namespace anteroom::testing
