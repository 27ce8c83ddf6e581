// Every route of docs/api.md over real HTTP: status codes, the error body, the status
// object.
#include <boost/json.hpp>
#include <set>

#include "tests/server/harness.h"

namespace anteroom::testing {
namespace {

class HttpApi : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<TestServer>();
    client_ = std::make_unique<HttpClient>(server_->port());
  }
  Reply room(const std::string& name, const std::string& body) {
    return client_->admin("PUT", "/v1/rooms/" + name, body);
  }
  std::unique_ptr<TestServer> server_;
  std::unique_ptr<HttpClient> client_;
};

std::set<std::string> keys(const std::string& json) {
  std::set<std::string> k;
  boost::json::value v = boost::json::parse(json);
  for (const auto& kv : v.as_object()) k.insert(std::string(kv.key()));
  return k;
}

void expect_error(const Reply& r, unsigned status, const std::string& code) {
  EXPECT_EQ(r.status, status) << r.body;
  EXPECT_EQ(r.header("content-type"), "application/json");
  auto v = boost::json::parse(r.body);
  ASSERT_TRUE(v.is_object() && v.as_object().contains("error")) << r.body;
  const auto& e = v.as_object().at("error").as_object();
  EXPECT_EQ(e.at("code").as_string(), code) << r.body;
  EXPECT_FALSE(e.at("message").as_string().empty());
}

TEST_F(HttpApi, HealthReadinessAndMetrics) {
  EXPECT_EQ(client_->request("GET", "/healthz").status, 200u);
  EXPECT_EQ(client_->request("GET", "/readyz").status, 200u);
  ASSERT_EQ(room("m", R"({"capacity":1})").status, 201u);
  client_->request("POST", "/v1/rooms/m/tickets");
  // Admissions are counted from the engine's events, which the pump drains every tick.
  Reply m;
  EXPECT_TRUE(eventually([&] {
    m = client_->admin("GET", "/metrics");
    return m.body.find("anteroom_admissions_total 1") != std::string::npos;
  }));
  EXPECT_EQ(m.status, 200u);
  EXPECT_NE(m.header("content-type").find("text/plain"), std::string::npos);
  for (const char* name :
       {"anteroom_http_requests_total{route=\"join\",code=\"201\"} 1",
        "anteroom_joins_total{created=\"true\"} 1", "anteroom_admissions_total 1",
        "anteroom_expiries_total{reason=\"abandoned\"} 0", "anteroom_room_waiting{room=\"m\"} 0",
        "anteroom_room_active{room=\"m\"} 1", "anteroom_open_connections{kind=\"http\"} 1",
        "anteroom_dropped_slow_consumers_total 0", "anteroom_storage_up 1",
        "anteroom_room_joins_total{room=\"m\"} 1",
        "anteroom_http_request_duration_seconds_bucket{le=\"+Inf\"}"}) {
    EXPECT_NE(m.body.find(name), std::string::npos) << name << "\n" << m.body;
  }
}

TEST_F(HttpApi, JoinStatusAndLeaveWithTheStatusObject) {
  ASSERT_EQ(room("r", R"({"capacity":1})").status, 201u);
  Reply first = client_->request("POST", "/v1/rooms/r/tickets", R"({"user":"a"})");
  ASSERT_EQ(first.status, 201u) << first.body;
  EXPECT_EQ(field(first.body, "status"), "ALLOWED");  // a free slot in an auto room
  EXPECT_FALSE(field(first.body, "token").empty());

  Reply second = client_->request("POST", "/v1/rooms/r/tickets", R"({"user":"b","key":"b-key"})");
  ASSERT_EQ(second.status, 201u);
  EXPECT_EQ(keys(second.body),
            (std::set<std::string>{"room", "ticket", "status", "ref", "seq", "position", "waiting",
                                   "active", "capacity", "eta_seconds", "poll_after_ms"}));
  // seq is the join order: b joined right after a.
  EXPECT_EQ(std::stoull(field(second.body, "seq")), std::stoull(field(first.body, "seq")) + 1);
  EXPECT_EQ(field(second.body, "room"), "r");
  EXPECT_EQ(field(second.body, "status"), "WAITING");
  EXPECT_EQ(field(second.body, "position"), "1");
  EXPECT_EQ(field(second.body, "waiting"), "1");
  EXPECT_EQ(field(second.body, "active"), "1");
  EXPECT_EQ(field(second.body, "capacity"), "1");
  EXPECT_GE(std::stoi(field(second.body, "poll_after_ms")), 1000);

  // The same visitor (its key) keeps the same ticket; the name alone does not get it.
  Reply again = client_->request("POST", "/v1/rooms/r/tickets", R"({"user":"b","key":"b-key"})");
  EXPECT_EQ(again.status, 200u);
  EXPECT_EQ(field(again.body, "ticket"), field(second.body, "ticket"));
  expect_error(client_->request("POST", "/v1/rooms/r/tickets", R"({"user":"b"})"), 409,
               "user_in_line");

  const std::string t = field(second.body, "ticket");
  Reply st = client_->request("GET", "/v1/rooms/r/tickets/" + t);
  EXPECT_EQ(st.status, 200u);
  EXPECT_EQ(field(st.body, "position"), "1");

  // The first leaves: its slot goes to the second at once.
  Reply leave = client_->request("DELETE", "/v1/rooms/r/tickets/" + field(first.body, "ticket"));
  EXPECT_EQ(leave.status, 204u);
  EXPECT_TRUE(leave.body.empty());
  st = client_->request("GET", "/v1/rooms/r/tickets/" + t);
  EXPECT_EQ(field(st.body, "status"), "ALLOWED");
  EXPECT_EQ(field(st.body, "position"), "0");
  EXPECT_FALSE(field(st.body, "token").empty());
  st = client_->request("GET", "/v1/rooms/r/tickets/" + field(first.body, "ticket"));
  EXPECT_EQ(field(st.body, "status"), "LEFT");
  EXPECT_TRUE(field(st.body, "token").empty());

  EXPECT_EQ(client_->request("POST", "/v1/rooms/r/tickets").status, 201u);  // anonymous, no body
  EXPECT_EQ(client_->request("POST", "/v1/rooms/r/tickets", "{}").status, 201u);
}

TEST_F(HttpApi, ErrorsHaveTheirCodesAndChangeNothing) {
  ASSERT_EQ(room("r", R"({"capacity":1,"admission":"manual"})").status, 201u);
  expect_error(client_->request("GET", "/nope"), 404, "not_found");
  expect_error(client_->request("GET", "/v1/rooms/r/tickets/x/other"), 404, "not_found");
  Reply wrong = client_->request("PATCH", "/v1/rooms/r/tickets");
  expect_error(wrong, 405, "method_not_allowed");
  EXPECT_EQ(wrong.header("allow"), "POST");
  expect_error(client_->request("PUT", "/v1/rooms/r/tickets/abc"), 405, "method_not_allowed");
  expect_error(client_->request("POST", "/v1/rooms/r/tickets", "{bad"), 400, "invalid_json");
  expect_error(client_->request("POST", "/v1/rooms/r/tickets", R"({"user":5})"), 400,
               "invalid_field");
  expect_error(client_->request("POST", "/v1/rooms/r/tickets", R"([1,2])"), 400, "invalid_field");
  expect_error(client_->request("POST", "/v1/rooms/r/tickets", R"({"usr":"a"})"), 400,
               "invalid_field");
  expect_error(client_->request("POST", "/v1/rooms/r/tickets", R"({"user":""})"), 400,
               "invalid_field");
  expect_error(client_->request("POST", "/v1/rooms/bad.name/tickets"), 400, "invalid_room_name");
  expect_error(client_->request("POST", "/v1/rooms/" + std::string(65, 'a') + "/tickets"), 400,
               "invalid_room_name");
  expect_error(client_->request("POST", "/v1/rooms/missing/tickets"), 404, "room_not_found");
  expect_error(client_->request("GET", "/v1/rooms/r/tickets/AAAAAAAAAAAAAAAAAAAAAAAAAAA"), 404,
               "ticket_not_found");
  expect_error(client_->request("DELETE", "/v1/rooms/r/tickets/short"), 404, "ticket_not_found");
  expect_error(client_->admin("PUT", "/v1/rooms/r", R"({"capacity":-1})"), 400, "invalid_field");
  expect_error(client_->admin("PUT", "/v1/rooms/r", R"({"capacity":"ten"})"), 400, "invalid_field");
  expect_error(client_->admin("PUT", "/v1/rooms/r", R"({"admission":"sometimes"})"), 400,
               "invalid_field");
  expect_error(client_->admin("PUT", "/v1/rooms/r", R"({"allowed_ttl_seconds":0})"), 400,
               "invalid_field");
  expect_error(client_->admin("PUT", "/v1/rooms/r", R"({"colour":"red"})"), 400, "invalid_field");
  expect_error(client_->admin("POST", "/v1/rooms/r/admit", R"({"count":"1"})"), 400,
               "invalid_field");
  expect_error(client_->admin("POST", "/v1/rooms/r/admit", "{}"), 400, "invalid_field");
  // None of that changed the room.
  Reply info = client_->admin("GET", "/v1/rooms/r");
  EXPECT_EQ(field(info.body, "capacity"), "1");
  EXPECT_EQ(field(info.body, "admission"), "manual");
  EXPECT_EQ(field(boost::json::serialize(boost::json::parse(info.body).at("totals")), "joined"),
            "0");
}

TEST_F(HttpApi, OversizedBodyIs413AndOversizedHeaderIs431) {
  ASSERT_EQ(room("r", "{}").status, 201u);
  expect_error(client_->request("POST", "/v1/rooms/r/tickets", std::string(17 * 1024, ' ')), 413,
               "body_too_large");
  HttpClient other(server_->port());
  expect_error(other.request("GET", "/healthz", "", {{"X-Big", std::string(9 * 1024, 'x')}}), 431,
               "header_too_large");
  HttpClient fresh(server_->port());  // the server goes on serving
  EXPECT_EQ(fresh.request("GET", "/healthz").status, 200u);
  // Refused before routing: counted as such, not as a route that does not exist.
  const std::string m = fresh.admin("GET", "/metrics").body;
  EXPECT_NE(m.find("anteroom_http_requests_total{route=\"unrouted\",code=\"413\"} 1"),
            std::string::npos);
  EXPECT_NE(m.find("anteroom_http_requests_total{route=\"unrouted\",code=\"431\"} 1"),
            std::string::npos);
  EXPECT_EQ(m.find("route=\"not_found\""), std::string::npos);
}

TEST_F(HttpApi, WebSocketRouteWithoutUpgradeIs400AndCountedOnce) {
  ASSERT_EQ(room("r", "{}").status, 201u);
  expect_error(client_->request("GET", "/v1/rooms/r/ws"), 400, "websocket_required");
  HttpClient fresh(server_->port());
  const std::string m = fresh.admin("GET", "/metrics").body;
  EXPECT_NE(m.find("anteroom_http_requests_total{route=\"websocket\",code=\"400\"} 1"),
            std::string::npos);
  EXPECT_EQ(m.find("route=\"websocket\",code=\"other\""), std::string::npos);  // not as 101
}

TEST_F(HttpApi, OperatorRoutesNeedTheAdminKey) {
  expect_error(client_->request("PUT", "/v1/rooms/r", "{}"), 401, "unauthorized");
  expect_error(client_->request("GET", "/v1/rooms", "", {{"Authorization", "Bearer wrong"}}), 401,
               "unauthorized");
  expect_error(client_->request("POST", "/v1/rooms/r/admit", R"({"count":1})"), 401,
               "unauthorized");
  expect_error(client_->request("POST", "/v1/rooms/r/clear"), 401, "unauthorized");
  expect_error(client_->request("POST", "/v1/rooms/r/verify", R"({"token":"x"})"), 401,
               "unauthorized");
  expect_error(client_->request("DELETE", "/v1/rooms/r"), 401, "unauthorized");
  EXPECT_EQ(client_->admin("GET", "/v1/rooms/r").status, 404u);  // and nothing was created
}

TEST_F(HttpApi, RoomsAreCreatedUpdatedListedAndDeleted) {
  Reply created =
      room("r", R"({"capacity":3,"admission":"manual","heartbeat_timeout_seconds":30})");
  EXPECT_EQ(created.status, 201u);
  EXPECT_EQ(field(created.body, "capacity"), "3");
  EXPECT_EQ(field(created.body, "admission"), "manual");
  EXPECT_EQ(field(created.body, "heartbeat_timeout_seconds"), "30");
  Reply updated = room("r", R"({"capacity":5})");
  EXPECT_EQ(updated.status, 200u);
  EXPECT_EQ(field(updated.body, "capacity"), "5");
  EXPECT_EQ(field(updated.body, "admission"), "manual");  // fields left out keep their value
  room("s", "{}");
  Reply list = client_->admin("GET", "/v1/rooms");
  EXPECT_EQ(list.status, 200u);
  EXPECT_EQ(boost::json::parse(list.body).at("rooms").as_array().size(), 2u);
  EXPECT_EQ(client_->admin("DELETE", "/v1/rooms/s").status, 204u);
  expect_error(client_->admin("GET", "/v1/rooms/s"), 404, "room_not_found");
  expect_error(client_->admin("DELETE", "/v1/rooms/s"), 404, "room_not_found");
}

TEST_F(HttpApi, AdmitAndClearInAManualRoom) {
  room("r", R"({"capacity":2,"admission":"manual"})");
  std::vector<std::string> t;
  for (int i = 0; i < 4; ++i)
    t.push_back(field(client_->request("POST", "/v1/rooms/r/tickets").body, "ticket"));
  Reply admitted = client_->admin("POST", "/v1/rooms/r/admit", R"({"count":5})");
  EXPECT_EQ(admitted.status, 200u);
  EXPECT_EQ(field(admitted.body, "admitted"), "2");  // capacity
  EXPECT_EQ(field(client_->request("GET", "/v1/rooms/r/tickets/" + t[1]).body, "status"),
            "ALLOWED");
  EXPECT_EQ(field(client_->request("GET", "/v1/rooms/r/tickets/" + t[2]).body, "position"), "1");
  // Numbers as people write them: two admissions within the first second, "2" (not "2E0").
  const std::string info = client_->admin("GET", "/v1/rooms/r").body;
  EXPECT_NE(info.find(R"("admit_rate_per_second":2})"), std::string::npos) << info;
  Reply cleared = client_->admin("POST", "/v1/rooms/r/clear");
  EXPECT_EQ(field(cleared.body, "cleared"), "2");
  EXPECT_EQ(field(client_->request("GET", "/v1/rooms/r/tickets/" + t[3]).body, "status"), "LEFT");
}

TEST_F(HttpApi, FullLineIs503WithRetryAfter) {
  room("r", R"({"capacity":1,"admission":"manual","max_waiting":1})");
  client_->request("POST", "/v1/rooms/r/tickets");
  Reply full = client_->request("POST", "/v1/rooms/r/tickets");
  expect_error(full, 503, "room_full");
  EXPECT_FALSE(full.header("retry-after").empty());
}

TEST_F(HttpApi, VerifyActivatesAndTheGateLetsTheCookieThrough) {
  room("r", R"({"capacity":1})");
  Reply j = client_->request("POST", "/v1/rooms/r/tickets", R"({"user":"user_1"})");
  const std::string token = field(j.body, "token");
  ASSERT_FALSE(token.empty());
  Reply v = client_->admin("POST", "/v1/rooms/r/verify", R"({"token":")" + token + "\"}");
  EXPECT_EQ(v.status, 200u) << v.body;
  EXPECT_EQ(field(v.body, "ticket"), field(j.body, "ticket"));
  EXPECT_EQ(field(v.body, "user"), "user_1");
  EXPECT_EQ(field(v.body, "status"), "ACTIVE");
  EXPECT_EQ(
      client_->request("GET", "/v1/gate/r", "", {{"Cookie", "a=b; anteroom_r=" + token}}).status,
      204u);
  expect_error(client_->request("GET", "/v1/gate/r"), 401, "no_admission");
  expect_error(client_->request("GET", "/v1/gate/r", "", {{"Cookie", "anteroom_r=nonsense"}}), 401,
               "no_admission");
  // Once the ticket is gone, its token no longer opens anything.
  client_->request("DELETE", "/v1/rooms/r/tickets/" + field(j.body, "ticket"));
  expect_error(client_->admin("POST", "/v1/rooms/r/verify", R"({"token":")" + token + "\"}"), 401,
               "invalid_token");
  EXPECT_EQ(client_->request("GET", "/v1/gate/r", "", {{"Cookie", "anteroom_r=" + token}}).status,
            401u);
}

TEST_F(HttpApi, WaitPageSpeaksKoreanOrEnglishAndNeverRedirectsOffSite) {
  room("r", "{}");
  Reply en = client_->request("GET", "/wait/r?return=%2Fshop%3Fitem%3D1", "",
                              {{"Accept-Language", "en-US,en"}});
  EXPECT_EQ(en.status, 200u);
  EXPECT_NE(en.header("content-type").find("text/html"), std::string::npos);
  EXPECT_NE(en.body.find("Your place in line"), std::string::npos);
  EXPECT_NE(en.body.find(R"("returnTo":"/shop?item=1")"), std::string::npos);
  Reply ko =
      client_->request("GET", "/wait/r", "", {{"Accept-Language", "ko-KR,ko;q=0.9,en;q=0.8"}});
  EXPECT_NE(ko.body.find("나의 대기 순번"), std::string::npos);
  for (const char* evil : {"https%3A%2F%2Fevil.example", "%2F%2Fevil.example", "%2F%5Cevil.example",
                           "javascript%3Aalert(1)"}) {
    Reply r = client_->request("GET", std::string("/wait/r?return=") + evil);
    EXPECT_NE(r.body.find(R"("returnTo":"/")"), std::string::npos) << evil;
  }
  Reply in_place =
      client_->request("GET", "/wait/r", "", {{"X-Anteroom-Return", "/tickets?show=7&seat=2"}});
  EXPECT_NE(in_place.body.find(R"("returnTo":"/tickets?show=7&seat=2")"), std::string::npos);
  Reply evil_header =
      client_->request("GET", "/wait/r", "", {{"X-Anteroom-Return", "//evil.example"}});
  EXPECT_NE(evil_header.body.find(R"("returnTo":"/")"), std::string::npos);
  Reply script = client_->request("GET", "/wait/r?return=%2F%3C%2Fscript%3E");
  EXPECT_EQ(script.body.find("</script>\""), std::string::npos);
}

}  // namespace
}  // namespace anteroom::testing

namespace anteroom::testing {
namespace {

TEST(HttpSnapshot, AdminRouteCompactsTheLogOrSaysPersistenceIsOff) {
  TestServer memory;  // --no-persistence
  HttpClient c(memory.port());
  EXPECT_EQ(c.request("POST", "/v1/admin/snapshot").status, 401u);
  Reply off = c.admin("POST", "/v1/admin/snapshot");
  EXPECT_EQ(off.status, 409u);
  EXPECT_EQ(field(boost::json::serialize(boost::json::parse(off.body).at("error")), "code"),
            "persistence_off");
  EXPECT_EQ(c.admin("GET", "/v1/admin/snapshot").status, 405u);
}

TEST(HttpCluster, ALoneServerSaysItIsNotClustered) {
  TestServer alone;
  HttpClient c(alone.port());
  EXPECT_EQ(c.request("POST", "/v1/cluster/reseed").status, 401u);
  for (const char* path : {"/v1/cluster", "/v1/cluster/reseed"}) {
    Reply r = c.admin(std::string(path) == "/v1/cluster" ? "GET" : "POST", path);
    EXPECT_EQ(r.status, 404u) << path;
    EXPECT_EQ(field(boost::json::serialize(boost::json::parse(r.body).at("error")), "code"),
              "not_clustered")
        << path;
  }
}

}  // namespace
}  // namespace anteroom::testing
