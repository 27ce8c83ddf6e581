// The operator's dashboard: the per-room history ring and the frame (unit), and its routes
// on a real server: the page, the stream, a room's history, the key, the operator listener.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <regex>

#include "server/app/dashboard_feed.h"
#include "server/app/room_history.h"
#include "tests/server/harness_sockets.h"

namespace anteroom {
namespace {

namespace json = boost::json;
using testing::HttpClient;
using testing::kAdminKey;
using testing::TestServer;

RoomInfo room(const std::string& name, uint64_t waiting, uint64_t joined, uint64_t admitted,
              uint64_t abandoned = 0) {
  RoomInfo r;
  r.name = name;
  r.counters.waiting = waiting;
  r.counters.active = admitted;
  r.counters.joined_total = joined;
  r.counters.admitted_total = admitted;
  r.counters.expired_abandoned = abandoned;
  return r;
}

TEST(RoomHistory, ASampleHoldsTheCountsAndWhatMovedSinceTheOneBefore) {
  RoomHistory h;
  h.record(10'000, {room("a", 5, 5, 0)});
  h.record(12'000, {room("a", 9, 25, 4, 3)});  // two seconds later
  const auto s = h.samples("a");
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].span_ms, 0u);  // nothing to compare the first with
  EXPECT_EQ(s[0].per_second(s[0].joins), 0.0);
  EXPECT_EQ(s[1].unix_ms, 12'000);
  EXPECT_EQ(s[1].waiting, 9u);
  EXPECT_EQ(s[1].joins, 20u);
  EXPECT_DOUBLE_EQ(s[1].per_second(s[1].joins), 10.0);
  EXPECT_DOUBLE_EQ(s[1].per_second(s[1].admissions), 2.0);
  EXPECT_EQ(s[1].expiries[2], 3u);
}

TEST(RoomHistory, KeepsTheLastFifteenMinutesOldestFirst) {
  RoomHistory h;
  for (int64_t i = 0; i < 1000; ++i) h.record(i * 1000, {room("a", i, i, 0)});
  const auto s = h.samples("a");
  ASSERT_EQ(s.size(), RoomHistory::kSamples);
  EXPECT_EQ(s.front().unix_ms, 100'000);
  EXPECT_EQ(s.back().unix_ms, 999'000);
  HistorySample last;
  ASSERT_TRUE(h.latest("a", &last));
  EXPECT_EQ(last.waiting, 999u);
}

TEST(RoomHistory, ForgetsDeletedRoomsAndStartsOverWhenTotalsGoDown) {
  RoomHistory h;
  h.record(1000, {room("a", 1, 100, 0), room("b", 0, 0, 0)});
  h.record(2000, {room("a", 1, 3, 0)});  // b deleted; a deleted and made again
  EXPECT_TRUE(h.samples("b").empty());
  EXPECT_EQ(h.rooms(), 1u);
  // The room made again starts a history of its own (not the old one's, not 2^32 - 97 joins).
  ASSERT_EQ(h.samples("a").size(), 1u);
  EXPECT_EQ(h.samples("a").back().joins, 0u);
  h.record(3000, {room("a", 1, 5, 0)});
  EXPECT_EQ(h.samples("a").back().joins, 2u);
}

TEST(RoomHistory, HoldsAtMostMaxRooms) {
  RoomHistory h;
  std::vector<RoomInfo> many;
  for (size_t i = 0; i < RoomHistory::kMaxRooms + 5; ++i)
    many.push_back(room("r" + std::to_string(i), 0, 0, 0));
  h.record(1000, many);
  EXPECT_EQ(h.rooms(), RoomHistory::kMaxRooms);
}

TEST(DashboardFeed, NoFrameIsBuiltWhileNoDashboardWatches) {
  DashboardFeed feed;
  feed.tick(1'000, {room("a", 0, 0, 0)});
  ASSERT_NE(feed.frame(), nullptr);
  feed.tick(2'000, {room("a", 1, 1, 0)}, false);
  EXPECT_EQ(feed.frame(), nullptr);
  EXPECT_EQ(feed.history().samples("a").size(), 2u);  // the history is kept all the same
}

TEST(DashboardFeed, LastInLineEta) {
  RoomCounters c;
  EXPECT_EQ(last_in_line_eta(c), 0.0);  // nobody waiting
  c.waiting = 100;
  EXPECT_EQ(last_in_line_eta(c), std::nullopt);  // pace unknown
  c.admit_rate_per_second = 4;
  EXPECT_EQ(last_in_line_eta(c), 25.0);
  c.admit_rate_per_second = 0;
  EXPECT_EQ(last_in_line_eta(c), std::nullopt);
}

TEST(DashboardFeed, TheFrameCarriesEveryRoomWithItsRates) {
  DashboardFeed feed;
  feed.tick(1'000, {room("a", 0, 0, 0), room("b", 2, 2, 0)});
  feed.tick(2'000, {room("a", 10, 10, 0), room("b", 2, 2, 0)});
  const std::string& bytes = *feed.frame();
  ASSERT_TRUE(bytes.starts_with("event: rooms\ndata: "));
  ASSERT_TRUE(bytes.ends_with("\n\n"));
  json::object f = json::parse(bytes.substr(19)).as_object();
  EXPECT_EQ(f["time"].as_string(), "1970-01-01T00:00:02.000Z");
  const json::array& rooms = f["rooms"].as_array();
  ASSERT_EQ(rooms.size(), 2u);
  const json::object& a = rooms[0].as_object();
  EXPECT_EQ(a.at("room").as_string(), "a");
  EXPECT_EQ(a.at("waiting").as_int64(), 10);
  EXPECT_EQ(a.at("per_second").at("joins").to_number<double>(), 10.0);
  EXPECT_TRUE(a.at("eta_last_seconds").is_null());
  EXPECT_TRUE(a.at("event").is_null());
  auto hist = feed.history_json("a");
  ASSERT_TRUE(hist);
  json::object h = json::parse(*hist).as_object();
  EXPECT_EQ(h["waiting"].as_array().size(), 2u);
  EXPECT_EQ(h["joins_per_second"].as_array()[1].to_number<double>(), 10.0);
  EXPECT_FALSE(feed.history_json("nope"));
}

// The dashboard's SSE frames of a stream: reads until `frames` "event: rooms" blocks came.
std::vector<json::object> read_frames(tcp::socket& s, size_t frames, std::string* head) {
  std::string got;
  std::vector<json::object> out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (out.size() < frames) {
    auto more = testing::read_available(s, &got, deadline);
    if (!more || !*more) break;
    size_t at;
    while ((at = got.find("event: rooms\ndata: ")) != std::string::npos) {
      const size_t end = got.find("\n\n", at);
      if (end == std::string::npos) break;
      if (head->empty()) *head = got.substr(0, at);
      out.push_back(json::parse(got.substr(at + 19, end - at - 19)).as_object());
      got.erase(0, end + 2);
    }
  }
  return out;
}

TEST(DashboardRoutes, TheStreamSendsEveryRoomEachSecondToTheAdminKeyOnly) {
  TestServer server;
  HttpClient c(server.port());
  ASSERT_EQ(c.admin("PUT", "/v1/rooms/sale", R"({"capacity":1})").status, 201u);
  ASSERT_EQ(c.request("POST", "/v1/rooms/sale/tickets", "{}").status, 201u);
  ASSERT_EQ(c.request("POST", "/v1/rooms/sale/tickets", "{}").status, 201u);
  EXPECT_EQ(c.request("GET", "/v1/admin/stream").status, 401u);
  EXPECT_EQ(
      c.request("GET", "/v1/admin/stream", "", {{"Authorization", "Bearer wrong-key-0123456789"}})
          .status,
      401u);
  EXPECT_EQ(c.admin("POST", "/v1/admin/stream").status, 405u);

  net::io_context ioc;
  tcp::socket s(ioc);
  s.connect({net::ip::make_address("127.0.0.1"), server.port()});
  const std::string req =
      std::string("GET /v1/admin/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ") +
      kAdminKey + "\r\n\r\n";
  net::write(s, net::buffer(req));
  std::string head;
  auto frames = read_frames(s, 2, &head);
  ASSERT_EQ(frames.size(), 2u) << head;
  EXPECT_NE(head.find("200 OK"), std::string::npos);
  EXPECT_NE(head.find("text/event-stream"), std::string::npos);
  const json::object& sale = frames[1]["rooms"].as_array()[0].as_object();
  EXPECT_EQ(sale.at("room").as_string(), "sale");
  EXPECT_EQ(sale.at("waiting").as_int64(), 1);
  EXPECT_EQ(sale.at("active").as_int64(), 1);
  EXPECT_NE(frames[0]["time"].as_string(), frames[1]["time"].as_string());
}

TEST(DashboardRoutes, HistoryOfARoom) {
  TestServer server;
  HttpClient c(server.port());
  ASSERT_EQ(c.admin("PUT", "/v1/rooms/sale", "{}").status, 201u);
  EXPECT_EQ(c.request("GET", "/v1/admin/rooms/sale/history").status, 401u);
  EXPECT_EQ(c.admin("GET", "/v1/admin/rooms/nope/history").status, 404u);
  EXPECT_EQ(c.admin("GET", "/v1/admin/rooms/b%20d/history").status, 400u);
  testing::Reply r = c.admin("GET", "/v1/admin/rooms/sale/history");
  ASSERT_EQ(r.status, 200u) << r.body;
  json::object h = json::parse(r.body).as_object();
  EXPECT_EQ(h["room"].as_string(), "sale");
  EXPECT_EQ(h["waiting"].as_array().size(), h["unix_ms"].as_array().size());
  EXPECT_TRUE(h["expiries_per_second"].as_object().contains("abandoned"));
}

TEST(DashboardRoutes, ThePageRunsOnlyItsOwnScriptAndCannotBeFramed) {
  TestServer server;
  HttpClient c(server.port());
  testing::Reply r = c.request("GET", "/admin", "", {{"Accept-Language", "ko-KR,ko;q=0.9"}});
  ASSERT_EQ(r.status, 200u);
  EXPECT_EQ(r.header("content-type"), "text/html; charset=utf-8");
  EXPECT_NE(r.body.find("<html lang=\"ko\">"), std::string::npos);
  std::smatch m;
  const std::string csp = r.header("content-security-policy");
  ASSERT_TRUE(std::regex_search(csp, m, std::regex("script-src 'nonce-([A-Za-z0-9_-]+)'")));
  EXPECT_NE(r.body.find("<script nonce=\"" + m[1].str() + "\">"), std::string::npos);
  EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos);
  EXPECT_NE(csp.find("connect-src 'self'"), std::string::npos);
  EXPECT_EQ(r.header("x-frame-options"), "DENY");
  EXPECT_EQ(r.body.find("%NONCE%"), std::string::npos);
  testing::Reply again = c.request("GET", "/admin");
  EXPECT_NE(again.header("content-security-policy"), csp);  // a new nonce every time
  EXPECT_NE(again.body.find("<html lang=\"en\">"), std::string::npos);
  EXPECT_EQ(c.request("POST", "/admin").status, 405u);
}

TEST(DashboardRoutes, WithAnOperatorListenerTheDashboardIsServedThereOnly) {
  Options o = testing::test_options();
  o.admin_listen = "127.0.0.1:0";
  TestServer server(o);
  HttpClient pub(server.port()), ops(server.server().admin_port());
  EXPECT_EQ(pub.request("GET", "/admin").status, 404u);
  EXPECT_EQ(pub.admin("GET", "/v1/admin/stream").status, 404u);
  EXPECT_EQ(ops.request("GET", "/admin").status, 200u);
  ASSERT_EQ(ops.admin("PUT", "/v1/rooms/sale", "{}").status, 201u);
  EXPECT_EQ(ops.admin("GET", "/v1/admin/rooms/sale/history").status, 200u);
}

}  // namespace
}  // namespace anteroom
