// --access-log on a real server: one line per request with its client (after trusted
// proxies), method, path without the query, status, bytes, time and room; upgrades too; and
// hostile paths make valid lines.
#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <regex>
#include <set>

#include "server/app/access_log.h"
#include "tests/server/access_log_files.h"
#include "tests/server/harness.h"

namespace anteroom::testing {
namespace {
namespace json = boost::json;

// The server's lines: one per request with its client (after trusted proxies), method, path
// without the query, status, bytes, time and room; upgrades too; and hostile paths.
class AccessLogServer : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = temp_path(std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) +
                      ".log");
    std::filesystem::remove(path_);
    Options o = test_options();
    o.access_log = path_.string();
    o.trusted_proxies = {"127.0.0.1/32"};
    server_ = std::make_unique<TestServer>(o);
  }
  void TearDown() override { std::filesystem::remove(path_); }
  // Stops the server (which flushes the log) and reads the lines.
  std::vector<json::object> stop_and_read() {
    server_->server().stop(200);
    return read_lines(path_);
  }
  // The one line with this method and path.
  static json::object line(const std::vector<json::object>& lines, const std::string& method,
                           const std::string& path) {
    json::object found;
    int n = 0;
    for (const auto& o : lines) {
      if (o.at("method") == method.c_str() && o.at("path") == path.c_str()) {
        found = o;
        ++n;
      }
    }
    EXPECT_EQ(n, 1) << method << " " << path;
    return found;
  }

  std::filesystem::path path_;
  std::unique_ptr<TestServer> server_;
};

TEST_F(AccessLogServer, LinesCarryTheRequestsFields) {
  const auto before = std::chrono::system_clock::now();
  std::string ticket;
  {
    HttpClient c(server_->port());
    ASSERT_EQ(c.admin("PUT", "/v1/rooms/sale", R"({"capacity":0,"admission":"manual"})").status,
              201u);
    Reply join = c.request("POST", "/v1/rooms/sale/tickets?utm_source=mail", "",
                           {{"X-Forwarded-For", "198.51.100.1, 203.0.113.7"}});
    ASSERT_EQ(join.status, 201u);
    ticket = json_field(join.body, "ticket");
    ASSERT_EQ(c.request("GET", "/v1/rooms/sale/tickets/" + ticket + "?x=1").status, 200u);
    ASSERT_EQ(c.request("GET", "/no/such/route").status, 404u);
    ASSERT_EQ(c.admin("GET", "/v1/rooms/sale").status, 200u);
    ASSERT_EQ(c.request("GET", "/v1/rooms/nowhere/tickets/abc").status, 404u);
  }
  {
    SseClient sse(server_->port(), "/v1/rooms/sale/tickets/" + ticket + "/events");
    ASSERT_EQ(sse.status(), 200u);
    ASSERT_TRUE(sse.next());
  }
  WsClient ws(server_->port(), "/v1/rooms/sale/ws");
  // The exact bytes of one answer, read whole.
  RawClient raw(server_->port());
  raw.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  const auto answer = raw.until_closed(std::chrono::seconds(5));
  ASSERT_TRUE(answer);
  const auto lines = stop_and_read();
  const auto after = std::chrono::system_clock::now();
  ASSERT_EQ(lines.size(), 9u);

  const json::object put = line(lines, "PUT", "/v1/rooms/sale");
  EXPECT_EQ(put.at("status"), 201);
  EXPECT_EQ(put.at("route"), "put_room");
  EXPECT_EQ(put.at("room"), "sale");
  EXPECT_EQ(put.at("client"), "127.0.0.1");

  const json::object join = line(lines, "POST", "/v1/rooms/sale/tickets");
  EXPECT_EQ(join.at("status"), 201);
  EXPECT_EQ(join.at("route"), "join");
  EXPECT_EQ(join.at("room"), "sale");
  EXPECT_EQ(join.at("client"), "203.0.113.7");  // behind the trusted proxy

  const json::object status = line(lines, "GET", "/v1/rooms/sale/tickets/-");
  EXPECT_EQ(status.at("status"), 200);
  EXPECT_EQ(status.at("route"), "status");
  EXPECT_EQ(status.at("room"), "sale");

  const json::object missing = line(lines, "GET", "/no/such/route");
  EXPECT_EQ(missing.at("status"), 404);
  EXPECT_FALSE(missing.contains("room"));

  const json::object admin = line(lines, "GET", "/v1/rooms/sale");
  EXPECT_EQ(admin.at("status"), 200);
  EXPECT_EQ(admin.at("route"), "get_room");
  EXPECT_EQ(admin.at("room"), "sale");
  EXPECT_EQ(line(lines, "GET", "/v1/rooms/nowhere/tickets/-").at("status"), 404);

  const json::object events = line(lines, "GET", "/v1/rooms/sale/tickets/-/events");
  EXPECT_EQ(events.at("status"), 200);
  EXPECT_EQ(events.at("route"), "events");
  EXPECT_EQ(events.at("bytes"), 0);  // the stream's bytes are not counted
  const json::object upgrade = line(lines, "GET", "/v1/rooms/sale/ws");
  EXPECT_EQ(upgrade.at("status"), 101);
  EXPECT_EQ(upgrade.at("room"), "sale");

  const json::object health = line(lines, "GET", "/healthz");
  EXPECT_EQ(health.at("bytes"), answer->size());
  EXPECT_GT(answer->size(), 0u);

  const std::regex rfc3339(R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$)");
  const auto us = [](auto t) {
    return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  };
  for (const auto& o : lines) {
    const std::string time(o.at("time").as_string());
    EXPECT_TRUE(std::regex_match(time, rfc3339)) << time;
    EXPECT_TRUE(o.at("duration_us").is_number());
    EXPECT_LT(o.at("duration_us").to_number<int64_t>(), 5'000'000);
    const bool stream = o.at("route") == "events" || o.at("route") == "websocket";
    EXPECT_EQ(o.at("bytes").to_number<int64_t>() > 0, !stream) << json::serialize(o);
  }
  // Times within the test, to the second ("YYYY-MM-DDTHH:MM:SS" sorts as text).
  const auto text_of = [](int64_t unix_us) {
    AccessRecord r;
    r.unix_us = unix_us;
    std::string l;
    append_access_line(r, &l);
    return std::string(json::parse(l).as_object().at("time").as_string()).substr(0, 19);
  };
  for (const auto& o : lines) {
    const std::string t(o.at("time").as_string());
    EXPECT_GE(t.substr(0, 19), text_of(us(before)));
    EXPECT_LE(t.substr(0, 19), text_of(us(after)));
  }
}

TEST_F(AccessLogServer, HostilePathsMakeValidLines) {
  // Quotes, backslashes, invalid UTF-8: the parser takes these, the route is not found.
  const std::string taken = "/a\"b\\c/\xFF\xFE/\xC3\xA9/\xED\xA0\x80";
  // Control bytes: HTTP refuses the request line (400); its line still says what came.
  const std::string refused = "/x\x01y\x1f\"\\\x7f\xFF";
  for (const std::string& target : {taken + "?q=\"1\"", refused}) {
    RawClient raw(server_->port());
    raw.send("GET " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    ASSERT_TRUE(raw.until_closed(std::chrono::seconds(5)));
  }
  const auto lines = stop_and_read();  // every line parsed as JSON (read_lines)
  ASSERT_EQ(lines.size(), 2u);
  const std::string fffd = "\xEF\xBF\xBD";
  const json::object a =
      line(lines, "GET", "/a\"b\\c/" + fffd + fffd + "/\xC3\xA9/" + fffd + fffd + fffd);
  EXPECT_EQ(a.at("status"), 404);
  const json::object b = line(lines, "GET", "/x\x01y\x1f\"\\\x7f" + fffd);
  EXPECT_EQ(b.at("status"), 400);
}

}  // namespace
}  // namespace anteroom::testing
