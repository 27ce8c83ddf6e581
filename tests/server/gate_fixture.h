// The forward-auth gate's test fixture (forward_auth_test.cc, fast_pass_test.cc,
// gate_floods_test.cc): a server on a manual clock whose peer 127.0.0.1 is a trusted proxy,
// asked as Traefik and as nginx ask.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "tests/server/harness.h"

namespace anteroom::testing {

using Headers = std::map<std::string, std::string>;

// The cookie a Set-Cookie sets, as a request would carry it ("name=value").
inline std::string cookie_of(const Reply& r) {
  const std::string set = r.header("set-cookie");
  return set.substr(0, set.find(';'));
}

class ForwardAuth : public ::testing::Test {
 protected:
  void SetUp() override { start(); }
  // More options, for a fixture of its own.
  virtual void adjust(Options&) {}
  void start(bool trusted = true) {
    Options o = test_options();
    if (trusted) o.trusted_proxies = {"127.0.0.1/32"};
    adjust(o);
    server_ = std::make_unique<TestServer>(o, engine_on(clock_));
    c_ = std::make_unique<HttpClient>(server_->port());
  }
  // The proxy's question about a visitor's request, Traefik's way.
  Reply traefik(const std::string& uri, const std::string& cookie = "", bool browser = true,
                const std::string& method = "GET") {
    Headers h{{"X-Forwarded-Uri", uri},
              {"X-Forwarded-Host", "shop.example"},
              {"X-Forwarded-Proto", "https"},
              {"X-Forwarded-Method", method},
              {"X-Forwarded-For", "203.0.113.7"}};
    if (browser) h["Accept"] = "text/html,application/xhtml+xml";
    if (!cookie.empty()) h["Cookie"] = cookie;
    return c_->request("GET", "/v1/gate", "", h);
  }
  Reply nginx(const std::string& uri, const std::string& cookie = "") {
    Headers h{
        {"X-Original-URI", uri}, {"X-Forwarded-Host", "shop.example"}, {"Accept", "text/html"}};
    if (!cookie.empty()) h["Cookie"] = cookie;
    return c_->request("GET", "/v1/gate", "", h);
  }
  void put_room(const std::string& body) {
    const unsigned status = c_->admin("PUT", "/v1/rooms/shop", body).status;
    ASSERT_TRUE(status == 200u || status == 201u) << status << " " << body;
  }

  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
  std::unique_ptr<TestServer> server_;
  std::unique_ptr<HttpClient> c_;
};

}  // namespace anteroom::testing
