// The per-address join limit (server/app/join_limiter.h): exact for one address among few,
// never past the limit in any 60 s window, bounded memory whatever the number of addresses;
// and over HTTP: 429 rate_limited with Retry-After, X-Forwarded-For believed only from a
// trusted proxy, one limited address not limiting another.
#include "server/app/join_limiter.h"

#include <boost/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "tests/server/harness.h"

namespace anteroom::testing {
namespace {

std::string addr(uint32_t i) { return std::string(reinterpret_cast<const char*>(&i), 4); }

TEST(JoinLimiter, AnAddressGetsItsLimitAndNoMore) {
  JoinLimiter l;
  uint32_t retry = 0;
  const int64_t t0 = 600'000;  // the start of a bucket
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(l.allow("r", addr(1), 5, t0 + i, &retry)) << i;
  EXPECT_FALSE(l.allow("r", addr(1), 5, t0 + 10, &retry));
  EXPECT_GE(retry, 60u);
  EXPECT_LE(retry, 75u);  // the window looks back 60 to 75 s
  EXPECT_TRUE(l.allow("r", addr(2), 5, t0 + 10, &retry)) << "another address";
  EXPECT_TRUE(l.allow("other", addr(1), 5, t0 + 10, &retry)) << "another room";
}

// The finding: 10 joins at :57.5, then 9 more within 60 s of them, passed a limit of 10 (the
// window slid over two whole minutes as if last minute's joins were spread evenly).
TEST(JoinLimiter, NoSixtySecondWindowHoldsMoreThanTheLimit) {
  JoinLimiter l;
  uint32_t retry = 0;
  const int64_t t0 = 600'000 + 57'500;
  int first = 0, later = 0;
  for (int i = 0; i < 10; ++i) first += l.allow("r", addr(1), 10, t0, &retry);
  for (int s = 3; s < 60; s += 3) later += l.allow("r", addr(1), 10, t0 + s * 1000, &retry);
  EXPECT_EQ(first, 10);
  EXPECT_EQ(later, 0) << "joins within 60 s of the first ten";
}

// Random tries of one address over ten minutes: the accepted never exceed the limit in any
// 60 s window, and the address is not starved (it gets at least a limit each 75 s).
TEST(JoinLimiter, RandomJoinsStayWithinEveryWindow) {
  for (uint32_t limit : {1u, 3u, 10u}) {
    JoinLimiter l;
    uint32_t retry = 0;
    std::mt19937_64 rng(limit);
    std::vector<int64_t> accepted;
    int64_t t = 1'000'000;
    while (t < 1'000'000 + 600'000) {
      t += static_cast<int64_t>(rng() % 4000);
      if (l.allow("r", addr(9), limit, t, &retry)) accepted.push_back(t);
    }
    for (size_t i = 0; i < accepted.size(); ++i) {
      size_t n = 0;
      while (i + n < accepted.size() && accepted[i + n] < accepted[i] + 60'000) ++n;
      ASSERT_LE(n, limit) << "a 60 s window from " << accepted[i] << " holds " << n;
    }
    EXPECT_GE(accepted.size(), static_cast<size_t>(limit * 600 / 75 - limit)) << limit;
  }
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
    for (int k = 0; k < 3; ++k)
      refused += l.allow("r", addr(i), 10, t0 + i * 6 / 10, &retry) ? 0 : 1;
  }
  EXPECT_EQ(refused, 0u) << "an address under its limit refused";
  EXPECT_EQ(l.bytes(),
            size_t{JoinLimiter::kTables} * 4 * JoinLimiter::kBlocks * JoinLimiter::kBlock);
  // However many others joined, a hammering address is stopped at its limit.
  int passed = 0;
  for (int k = 0; k < 50; ++k) passed += l.allow("r", addr(7'000'000), 10, t0 + 59'000, &retry);
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
