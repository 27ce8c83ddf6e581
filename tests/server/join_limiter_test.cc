// The per-address join limit (server/app/join_limiter.h): exact for one address among few,
// never past the limit, a sliding window, bounded memory whatever the number of addresses;
// and over HTTP: 429 rate_limited with Retry-After, X-Forwarded-For believed only from a
// trusted proxy, one limited address not limiting another.
#include "server/app/join_limiter.h"

#include <boost/json.hpp>
#include <string>

#include "engine/engine.h"
#include "tests/server/harness.h"

namespace anteroom::testing {
namespace {

std::string addr(uint32_t i) { return std::string(reinterpret_cast<const char*>(&i), 4); }

TEST(JoinLimiter, AnAddressGetsItsLimitAndNoMore) {
  JoinLimiter l;
  uint32_t retry = 0;
  const int64_t t0 = 600'000;  // the start of a minute
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(l.allow("r", addr(1), 5, t0 + i, &retry)) << i;
  EXPECT_FALSE(l.allow("r", addr(1), 5, t0 + 10, &retry));
  EXPECT_GE(retry, 1u);
  EXPECT_LE(retry, 120u);  // the window covers two minutes
  EXPECT_TRUE(l.allow("r", addr(2), 5, t0 + 10, &retry)) << "another address";
  EXPECT_TRUE(l.allow("other", addr(1), 5, t0 + 10, &retry)) << "another room";
}

TEST(JoinLimiter, TheWindowSlides) {
  JoinLimiter l;
  uint32_t retry = 0;
  const int64_t t0 = 600'000;
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(l.allow("r", addr(1), 5, t0, &retry));
  EXPECT_FALSE(l.allow("r", addr(1), 5, t0 + 60'000, &retry)) << "last minute's five still count";
  // Half way into the next minute half of last minute's count is left: 2.5 + 2 fits 5.
  EXPECT_TRUE(l.allow("r", addr(1), 5, t0 + 90'000, &retry));
  EXPECT_TRUE(l.allow("r", addr(1), 5, t0 + 90'000, &retry));
  EXPECT_FALSE(l.allow("r", addr(1), 5, t0 + 90'000, &retry));
  // Two minutes on, only the minute before counts (2 joins, a quarter of it left).
  EXPECT_TRUE(l.allow("r", addr(1), 5, t0 + 165'000, &retry));
}

// Retry-After is the real wait: coming back then gets in, a little earlier does not.
TEST(JoinLimiter, RetryAfterIsWhenTheWindowHasRoom) {
  for (int64_t offset : {0, 20'000, 53'100}) {
    JoinLimiter l;
    uint32_t retry = 0;
    const int64_t t0 = 600'000 + offset;
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(l.allow("r", addr(1), 5, t0, &retry));
    ASSERT_FALSE(l.allow("r", addr(1), 5, t0, &retry));
    const int64_t back = t0 + int64_t{retry} * 1000;
    uint32_t again = 0;
    EXPECT_FALSE(l.allow("r", addr(1), 5, back - 2'000, &again)) << offset << " " << retry;
    EXPECT_TRUE(l.allow("r", addr(1), 5, back, &again)) << offset << " " << retry;
  }
}

TEST(JoinLimiter, ManyAddressesBoundedMemoryNoneLetPast) {
  JoinLimiter l;
  uint32_t retry = 0;
  const int64_t t0 = 600'000;
  uint64_t refused = 0;
  for (uint32_t i = 0; i < 100'000; ++i) {  // 300,000 joins in a minute from 100,000 addresses
    for (int k = 0; k < 3; ++k) refused += l.allow("r", addr(i), 10, t0 + i / 10, &retry) ? 0 : 1;
  }
  EXPECT_EQ(refused, 0u) << "an address under its limit refused";
  EXPECT_EQ(l.bytes(), size_t{2} * 4 * JoinLimiter::kBlocks * JoinLimiter::kBlock);
  // However many others joined, a hammering address is stopped at its limit.
  int passed = 0;
  for (int k = 0; k < 50; ++k) passed += l.allow("r", addr(7'000'000), 10, t0 + 20'000, &retry);
  EXPECT_LE(passed, 10);
  EXPECT_GE(passed, 8) << "overestimated by more than the bound";
}

class JoinLimitHttp : public ::testing::Test {
 protected:
  void start(std::vector<std::string> proxies) {
    Options o = test_options();
    o.trusted_proxies = std::move(proxies);
    server_ = std::make_unique<TestServer>(o);
    client_ = std::make_unique<HttpClient>(server_->port());
    ASSERT_EQ(
        client_->admin("PUT", "/v1/rooms/r", R"({"capacity":0,"ip_joins_per_minute":3})").status,
        201u);
  }
  Reply join(const std::string& forwarded = "") {
    std::map<std::string, std::string> h;
    if (!forwarded.empty()) h["X-Forwarded-For"] = forwarded;
    return client_->request("POST", "/v1/rooms/r/tickets", "", h);
  }
  std::unique_ptr<TestServer> server_;
  std::unique_ptr<HttpClient> client_;
};

TEST_F(JoinLimitHttp, TheFourthJoinOfAMinuteIsRateLimited) {
  start({});
  for (int i = 0; i < 3; ++i) EXPECT_EQ(join().status, 201u);
  Reply r = join();
  EXPECT_EQ(r.status, 429u);
  EXPECT_NE(r.body.find("rate_limited"), std::string::npos);
  EXPECT_FALSE(r.header("retry-after").empty());
  // Untrusted peer: X-Forwarded-For is ignored, the peer is still limited.
  EXPECT_EQ(join("203.0.113.9").status, 429u);
  auto info = boost::json::parse(client_->admin("GET", "/v1/rooms/r").body).as_object();
  EXPECT_EQ(info.at("totals").as_object().at("joined").as_int64(), 3) << "a refused join counted";
}

TEST_F(JoinLimitHttp, BehindATrustedProxyEachVisitorHasItsOwnLimit) {
  start({"127.0.0.0/8"});
  for (int i = 0; i < 3; ++i) EXPECT_EQ(join("198.51.100.1").status, 201u);
  EXPECT_EQ(join("198.51.100.1").status, 429u);
  // Another visitor through the same proxy is not limited by the first.
  EXPECT_EQ(join("198.51.100.2").status, 201u);
  // The rightmost untrusted address counts: a spoofed left part does not help.
  EXPECT_EQ(join("10.9.9.9, 198.51.100.1").status, 429u);
  // A trusted hop on the right is skipped.
  EXPECT_EQ(join("198.51.100.1, 127.0.0.5").status, 429u);
  // IPv6 clients count by /64: a subscriber's many addresses are one client.
  for (const char* a : {"2001:db8:0:1::1", "2001:db8:0:1::2", "2001:db8:0:1:ffff::9"}) {
    EXPECT_EQ(join(a).status, 201u) << a;
  }
  EXPECT_EQ(join("2001:db8:0:1::77").status, 429u);
  EXPECT_EQ(join("2001:db8:0:2::1").status, 201u) << "another /64";
}

// Only a join that reaches the room counts: a bad body is refused without using the quota.
TEST_F(JoinLimitHttp, ABadBodyIsNotCounted) {
  start({});
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(client_->request("POST", "/v1/rooms/r/tickets", R"({"bogus":1})").status, 400u);
  }
  for (int i = 0; i < 3; ++i) EXPECT_EQ(join().status, 201u);
}

// Seed 000's ENTER is a join too: held to the same limit, counted with HTTP joins.
TEST_F(JoinLimitHttp, WebSocketEntersCountAsJoins) {
  start({});
  EXPECT_EQ(join().status, 201u);
  EXPECT_EQ(join().status, 201u);
  WsClient ws(server_->port(), "/v1/rooms/r/ws");
  ws.send(R"({"type":"ENTER","userId":"u1"})");
  auto first = ws.next_of("ALLOWED");
  ASSERT_TRUE(first.has_value()) << "the third join of the minute";
  ws.send(R"({"type":"ENTER","userId":"u2"})");
  auto refused = ws.next_of("ERROR");
  ASSERT_TRUE(refused.has_value());
  EXPECT_NE(refused->find("too many joins"), std::string::npos) << *refused;
  EXPECT_EQ(join().status, 429u);
}

}  // namespace
}  // namespace anteroom::testing
