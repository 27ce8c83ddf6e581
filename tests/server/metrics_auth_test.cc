// /metrics tells room names and counts and costs O(rooms) to render: it answers only with
// the admin key, the verify key or --metrics-key, or on --admin-listen, unless
// --metrics-public opens it. It was open to anyone on the public listener.
#include "tests/server/harness.h"

namespace anteroom::testing {
namespace {

constexpr const char* kMetricsKey = "prometheus-scrape-key-0123";
constexpr const char* kVerifyKey = "service-verify-key-0123456";

Reply scrape(uint16_t port, const std::string& key) {
  HttpClient c(port);
  std::map<std::string, std::string> h;
  if (!key.empty()) h["Authorization"] = "Bearer " + key;
  return c.request("GET", "/metrics", "", h);
}

TEST(MetricsAuth, AKeyIsAskedOnThePublicListener) {
  Options o = test_options();
  o.metrics_key = kMetricsKey;
  o.verify_key = kVerifyKey;
  TestServer server(o);
  Reply anonymous = scrape(server.port(), "");
  EXPECT_EQ(anonymous.status, 401u);
  EXPECT_EQ(anonymous.header("www-authenticate"), "Bearer");
  EXPECT_EQ(anonymous.body.find("anteroom_"), std::string::npos) << "nothing of the metrics";
  EXPECT_EQ(scrape(server.port(), "a-wrong-key-0123456789").status, 401u);
  for (const char* key : {kMetricsKey, kVerifyKey, kAdminKey}) {
    Reply r = scrape(server.port(), key);
    EXPECT_EQ(r.status, 200u) << key;
    EXPECT_NE(r.body.find("anteroom_http_requests_total"), std::string::npos) << key;
  }
  // The metrics key opens /metrics and nothing else.
  HttpClient c(server.port());
  EXPECT_EQ(
      c.request("GET", "/v1/rooms", "", {{"Authorization", std::string("Bearer ") + kMetricsKey}})
          .status,
      401u);
}

TEST(MetricsAuth, TheOperatorListenerAsksNone) {
  Options o = test_options();
  o.admin_listen = "127.0.0.1:0";
  TestServer server(o);
  EXPECT_EQ(scrape(server.server().admin_port(), "").status, 200u);
  EXPECT_EQ(scrape(server.port(), kAdminKey).status, 404u) << "not on the public listener at all";
}

TEST(MetricsAuth, MetricsPublicOpensIt) {
  Options o = test_options();
  o.metrics_public = true;
  TestServer server(o);
  EXPECT_EQ(scrape(server.port(), "").status, 200u);
}

}  // namespace
}  // namespace anteroom::testing
