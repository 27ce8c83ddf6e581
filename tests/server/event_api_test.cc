// The event routes over real HTTP: PUT, GET and DELETE .../event, its
// draw, modes by PUT, and bad input answered 400 naming the field with nothing changed. The
// engine runs on a manual clock, so the start comes when the test says.
#include <openssl/evp.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cstdio>
#include <ctime>

#include "engine/engine.h"
#include "engine/sharded_engine.h"
#include "tests/server/harness.h"
#include "tests/support/hex.h"

namespace anteroom::testing {
namespace {

namespace json = boost::json;

std::string rfc3339_in(int seconds) {
  const time_t t = time(nullptr) + seconds;
  struct tm tm {};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string sha256_hex(const std::string& bytes) {
  unsigned char d[32];
  unsigned n = 0;
  EVP_Digest(bytes.data(), bytes.size(), d, &n, EVP_sha256(), nullptr);
  return hex_of(d, n);
}

std::string unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

class EventApi : public ::testing::Test {
 protected:
  void SetUp() override {
    clock_ = std::make_shared<ManualClock>();
    EngineOptions eo;
    eo.clock = clock_;
    eo.shards = 1;
    server_ = std::make_unique<TestServer>(test_options(), make_sharded_engine(eo));
    client_ = std::make_unique<HttpClient>(server_->port());
    ASSERT_EQ(client_->admin("PUT", "/v1/rooms/r", R"({"capacity":1})").status, 201u);
  }
  json::object get(const std::string& target) {
    Reply r = client_->request("GET", target);
    EXPECT_EQ(r.status, 200u) << r.body;
    return json::parse(r.body).as_object();
  }
  void expect_400(const std::string& body, const std::string& field) {
    const std::string before = client_->request("GET", "/v1/rooms/r/event").body;
    Reply r = client_->admin("PUT", "/v1/rooms/r/event", body);
    EXPECT_EQ(r.status, 400u) << body;
    EXPECT_NE(r.body.find(field), std::string::npos) << r.body;
    EXPECT_EQ(client_->request("GET", "/v1/rooms/r/event").body, before) << "changed by " << body;
  }
  std::shared_ptr<ManualClock> clock_;
  std::unique_ptr<TestServer> server_;
  std::unique_ptr<HttpClient> client_;
};

TEST_F(EventApi, BadEventsAreRefusedNamingTheField) {
  const std::string pre = rfc3339_in(60), start = rfc3339_in(120);
  expect_400(R"({"start_at":")" + start + R"("})", "prequeue_at");
  expect_400(R"({"prequeue_at":")" + start + R"(","start_at":")" + pre + R"("})", "start_at");
  expect_400(R"({"prequeue_at":"2020-01-01T00:00:00Z","start_at":"2020-01-02T00:00:00Z"})",
             "start_at");
  expect_400(R"({"prequeue_at":"tomorrow","start_at":")" + start + R"("})", "prequeue_at");
  for (const char* t :
       {"2030-02-30T00:00:00Z", "2030-01-01T10:00:00+1x:0y", " 2030-01-01T10:00:00Z",
        "2030-1-1T1:0:0Z", "2030-01-01T23:59:60Z", "2030-01-01T10:00:00"}) {
    expect_400(R"({"prequeue_at":")" + std::string(t) + R"(","start_at":")" + start + R"("})",
               "prequeue_at");
  }
  expect_400(
      R"({"prequeue_at":")" + pre + R"(","start_at":")" + start + R"(","end_at":")" + pre + R"("})",
      "end_at");
  expect_400(R"({"prequeue_at":")" + pre + R"(","start_at":")" + start + R"(","mode":"lottery"})",
             "mode");
  expect_400(R"({"prequeue_at":")" + pre + R"(","start_at":")" + start + R"(","colour":1})",
             "colour");
  EXPECT_EQ(client_->request("GET", "/v1/rooms/r/event").status, 404u);
  Reply bad_mode = client_->admin("PUT", "/v1/rooms/r", R"({"mode":"nope"})");
  EXPECT_EQ(bad_mode.status, 400u);
  EXPECT_NE(bad_mode.body.find("mode"), std::string::npos);
  Reply room = client_->admin("GET", "/v1/rooms/r");
  EXPECT_EQ(json::parse(room.body).at("mode").as_string(), "fifo");  // unchanged
}

TEST_F(EventApi, PreQueueDrawAndTheSeedCommitment) {
  Reply put = client_->admin("PUT", "/v1/rooms/r/event",
                             R"({"prequeue_at":")" + rfc3339_in(-1) + R"(","start_at":")" +
                                 rfc3339_in(60) + R"(","shuffle":true})");
  ASSERT_EQ(put.status, 201u) << put.body;
  const std::string commitment(json::parse(put.body).at("seed_sha256").as_string());
  EXPECT_EQ(commitment.size(), 64u);
  // Under way: no change without a DELETE first.
  Reply again = client_->admin(
      "PUT", "/v1/rooms/r/event",
      R"({"prequeue_at":")" + rfc3339_in(10) + R"(","start_at":")" + rfc3339_in(20) + R"("})");
  EXPECT_EQ(again.status, 400u);
  EXPECT_NE(again.body.find("under way"), std::string::npos);
  EXPECT_EQ(client_->request("GET", "/v1/rooms/r/event/draw").status, 404u);
  server_->engine().run_all();
  std::vector<std::string> refs;
  for (int i = 0; i < 5; ++i) {
    Reply j = client_->request("POST", "/v1/rooms/r/tickets");
    ASSERT_EQ(j.status, 201u);
    json::object s = json::parse(j.body).as_object();
    EXPECT_TRUE(s.at("position").is_null());
    EXPECT_TRUE(s.contains("opens_at"));
    const std::string id(s.at("ticket").as_string());
    EXPECT_EQ(std::string(s.at("ref").as_string()), sha256_hex(id).substr(0, 16));
    refs.emplace_back(s.at("ref").as_string());
  }
  clock_->advance_s(61);
  server_->engine().run_all();
  json::object draw = get("/v1/rooms/r/event/draw");
  EXPECT_EQ(std::string(draw.at("seed_sha256").as_string()), commitment);
  EXPECT_EQ(sha256_hex(unhex(std::string(draw.at("seed").as_string()))), commitment);
  std::vector<std::string> order;
  for (const auto& v : draw.at("order").as_array()) order.emplace_back(v.as_string());
  std::vector<std::string> a = order, b = refs;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  EXPECT_EQ(a, b);
  EXPECT_EQ(get("/v1/rooms/r/event").at("phase").as_string(), "started");
  ASSERT_EQ(client_->admin("DELETE", "/v1/rooms/r/event").status, 204u);
  EXPECT_EQ(client_->request("GET", "/v1/rooms/r/event").status, 404u);
  // The old draw's places stand, but it is no event's draw now; and a new event's seed
  // never shows before its start.
  EXPECT_EQ(client_->request("GET", "/v1/rooms/r/event/draw").status, 404u);
  Reply next = client_->admin("PUT", "/v1/rooms/r/event",
                              R"({"prequeue_at":")" + rfc3339_in(100) + R"(","start_at":")" +
                                  rfc3339_in(200) + R"(","shuffle":true})");
  ASSERT_EQ(next.status, 201u) << next.body;
  Reply leak = client_->request("GET", "/v1/rooms/r/event/draw");
  EXPECT_EQ(leak.status, 404u) << leak.body;
  EXPECT_EQ(leak.body.find("seed\""), std::string::npos);
}

// A started event's draw never changes: a CDN may keep it for good (immutable, an ETag,
// 304 to a revalidation), and the event's link names its commitment so that a later event
// in the same room has a URL of its own.
TEST_F(EventApi, TheDrawIsCacheableForGood) {
  Reply put = client_->admin("PUT", "/v1/rooms/r/event",
                             R"({"prequeue_at":")" + rfc3339_in(-1) + R"(","start_at":")" +
                                 rfc3339_in(60) + R"(","shuffle":true})");
  ASSERT_EQ(put.status, 201u) << put.body;
  server_->engine().run_all();
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(client_->request("POST", "/v1/rooms/r/tickets").status, 201u);
  // Asked before the start (the commitment is public): a cache must not keep the 404.
  const std::string early_commitment(json::parse(put.body).at("seed_sha256").as_string());
  Reply early = client_->request("GET", "/v1/rooms/r/event/draw?commitment=" + early_commitment);
  EXPECT_EQ(early.status, 404u);
  EXPECT_EQ(early.header("cache-control"), "no-store");
  EXPECT_EQ(client_->request("GET", "/v1/rooms/r/event").header("cache-control"), "no-cache");
  clock_->advance_s(61);
  server_->engine().run_all();
  const std::string link(get("/v1/rooms/r/event").at("draw").as_string());
  const std::string commitment(json::parse(put.body).at("seed_sha256").as_string());
  EXPECT_EQ(link, "/v1/rooms/r/event/draw?commitment=" + commitment);
  Reply draw = client_->request("GET", link);
  ASSERT_EQ(draw.status, 200u) << draw.body;
  EXPECT_EQ(draw.header("cache-control"), "public, max-age=31536000, immutable");
  const std::string etag = draw.header("etag");
  ASSERT_GE(etag.size(), 3u);
  EXPECT_EQ(etag.front(), '"');
  // The bare URL names whichever event the room has now: caches ask again (the ETag: 304).
  Reply bare = client_->request("GET", "/v1/rooms/r/event/draw");
  EXPECT_EQ(bare.header("etag"), etag);
  EXPECT_EQ(bare.header("cache-control"), "public, no-cache");
  Reply again = client_->request("GET", link, "", {{"If-None-Match", "\"other\", " + etag}});
  EXPECT_EQ(again.status, 304u);
  EXPECT_TRUE(again.body.empty());
  EXPECT_EQ(again.header("etag"), etag);
  EXPECT_EQ(client_->request("GET", link, "", {{"If-None-Match", "\"other\""}}).status, 200u);
  Reply wrong =
      client_->request("GET", "/v1/rooms/r/event/draw?commitment=" + std::string(64, '0'));
  EXPECT_EQ(wrong.status, 404u) << wrong.body;
  EXPECT_EQ(wrong.header("cache-control"), "no-store");
  std::string upper = commitment;
  for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  EXPECT_EQ(client_->request("GET", "/v1/rooms/r/event/draw?commitment=" + upper).status, 200u)
      << "hex in either case";
}

// A mode switch reaches open streams at once: the waiting visitor's place disappears into
// the draw (random) and comes back when the room goes back to fifo.
TEST_F(EventApi, AModeSwitchIsPushedToOpenStreams) {
  ASSERT_EQ(client_->request("POST", "/v1/rooms/r/tickets").status, 201u);  // admitted
  Reply b = client_->request("POST", "/v1/rooms/r/tickets");
  ASSERT_EQ(b.status, 201u);
  const std::string id(json::parse(b.body).at("ticket").as_string());
  SseClient sse(server_->port(), "/v1/rooms/r/tickets/" + id + "/events");
  auto first = sse.next();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(json::parse(*first).at("position").as_int64(), 1);
  ASSERT_EQ(client_->admin("PUT", "/v1/rooms/r", R"({"mode":"random"})").status, 200u);
  auto drawn = sse.next();
  ASSERT_TRUE(drawn.has_value()) << "no push after the switch to random";
  EXPECT_TRUE(json::parse(*drawn).at("position").is_null()) << *drawn;
  EXPECT_EQ(json::parse(*drawn).at("mode").as_string(), "random");
  ASSERT_EQ(client_->admin("PUT", "/v1/rooms/r", R"({"mode":"fifo"})").status, 200u);
  auto back = sse.next();
  ASSERT_TRUE(back.has_value()) << "no push after the switch back";
  EXPECT_EQ(json::parse(*back).at("position").as_int64(), 1) << *back;
}

TEST_F(EventApi, RejectModeAnswersRoomClosed) {
  ASSERT_EQ(client_->admin("PUT", "/v1/rooms/r", R"({"mode":"reject"})").status, 200u);
  Reply r = client_->request("POST", "/v1/rooms/r/tickets");
  EXPECT_EQ(r.status, 503u);
  EXPECT_NE(r.body.find("room_closed"), std::string::npos);
  ASSERT_EQ(client_->admin("PUT", "/v1/rooms/r", R"({"mode":"fifo"})").status, 200u);
  EXPECT_EQ(client_->request("POST", "/v1/rooms/r/tickets").status, 201u);
}

}  // namespace
}  // namespace anteroom::testing
