// The answers the transport writes outside an HttpSession (a refused connection, a stream
// over its ticket's limit that raced past the route's check, the SSE head) are well-formed
// HTTP: Beast's own parser reads each whole, its Content-Length matching its body. The
// raced 429 once said Content-Length: 100 for a 95-byte body, and its client waited for
// bytes that never came.
#include <thread>

#include "server/transport/response_head.h"
#include "server/transport/sessions.h"
#include "tests/server/harness_sockets.h"

namespace anteroom::testing {
namespace {

// Parses `bytes` as one whole response; the parse error if it is not.
beast::error_code parse_whole(const std::string& bytes, http::response<http::string_body>* out) {
  http::response_parser<http::string_body> p;
  p.eager(true);
  beast::error_code ec;
  const size_t used = p.put(net::buffer(bytes), ec);
  if (!ec && !p.is_done()) p.put_eof(ec);
  if (!ec && used != bytes.size()) ec = http::error::unexpected_body;
  if (!ec) *out = p.release();
  return ec;
}

TEST(FixedAnswers, ClosingAnswersParseWhole) {
  const auto a =
      closing_answer(429, "application/json", R"({"error":{"code":"x"}})", {{"Retry-After", "5"}});
  http::response<http::string_body> m;
  ASSERT_FALSE(parse_whole(*a, &m)) << *a;
  EXPECT_EQ(m.result_int(), 429u);
  EXPECT_EQ(m.body(), R"({"error":{"code":"x"}})");
  EXPECT_EQ(m[http::field::retry_after], "5");
  EXPECT_FALSE(m.keep_alive());
}

TEST(FixedAnswers, ARefusedConnectionGetsAWhole503) {
  Options o = test_options();
  o.max_connections = 2;
  o.operator_reserve = 1;
  TestServer server(o);
  RawClient first(server.port());
  RawClient second(server.port());
  RawClient third(server.port());  // over the limit
  const auto answer = third.until_closed(std::chrono::seconds(5));
  ASSERT_TRUE(answer);
  http::response<http::string_body> m;
  ASSERT_FALSE(parse_whole(*answer, &m)) << *answer;
  EXPECT_EQ(m.result_int(), 503u);
  EXPECT_NE(m.body().find("overloaded"), std::string::npos);
  EXPECT_EQ(m[http::field::retry_after], "5");
}

// What the push hub's refusal sends a stream that raced past the route's check (a race
// too narrow to bring about on purpose, so its bytes are read here).
TEST(FixedAnswers, TheRacedStreamRefusalParsesWhole) {
  const auto a = too_many_streams_answer();
  http::response<http::string_body> m;
  ASSERT_FALSE(parse_whole(*a, &m)) << *a;
  EXPECT_EQ(m.result_int(), 429u);
  EXPECT_NE(m.body().find("too_many_streams"), std::string::npos);
  EXPECT_FALSE(m.keep_alive());
}

TEST(FixedAnswers, TheSseHeadIsAStreamWithoutALength) {
  TestServer server;
  HttpClient c(server.port());
  ASSERT_EQ(c.admin("PUT", "/v1/rooms/r", R"({"capacity":0,"admission":"manual"})").status, 201u);
  const std::string ticket = json_field(c.request("POST", "/v1/rooms/r/tickets").body, "ticket");
  net::io_context ioc;
  tcp::socket socket(ioc);
  socket.connect({net::ip::make_address("127.0.0.1"), server.port()});
  net::write(socket, net::buffer("GET /v1/rooms/r/tickets/" + ticket +
                                 "/events HTTP/1.1\r\nHost: x\r\n\r\n"));
  std::string got;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (got.find("event: status") == std::string::npos &&
         read_available(socket, &got, deadline).value_or(false)) {
  }
  http::response_parser<http::empty_body> p;
  beast::error_code ec;
  p.put(net::buffer(got), ec);
  ASSERT_FALSE(ec) << got;
  ASSERT_TRUE(p.is_header_done()) << got;
  EXPECT_EQ(p.get().result_int(), 200u);
  EXPECT_EQ(p.get()[http::field::content_type], "text/event-stream");
  EXPECT_FALSE(p.content_length()) << "a stream has no length";
  EXPECT_NE(got.find("retry: 2000"), std::string::npos);
}

TEST(FixedAnswers, AnHttpDateIsRfc9110s) {
  EXPECT_EQ(http_date(0), "Thu, 01 Jan 1970 00:00:00 GMT");
  EXPECT_EQ(http_date(1796322600), "Thu, 03 Dec 2026 18:30:00 GMT");
  EXPECT_EQ(http_date(1796322600 + 86400 * 3 + 5), "Sun, 06 Dec 2026 18:30:05 GMT");
}

// The fixed answers built once and sent to many (the SSE head, the refusals) are built
// again when the second changes: their Date stayed that of the first one sent.
TEST(FixedAnswers, AFixedAnswerIsBuiltAgainEachSecond) {
  int builds = 0;
  PerSecondAnswer answer([&] {
    ++builds;
    return std::make_shared<const std::string>(std::to_string(builds));
  });
  EXPECT_EQ(*answer.get(100), "1");
  EXPECT_EQ(*answer.get(100), "1");
  EXPECT_EQ(*answer.get(101), "2");
  EXPECT_EQ(builds, 2);
}

// A ticket's status carries a token once admitted: no shared cache may keep it. Every
// answer is no-store unless its route says otherwise (the JWKS may be cached), and dated.
TEST(FixedAnswers, AnswersAreDatedAndNotStoredUnlessTheRouteSays) {
  TestServer server;
  HttpClient c(server.port());
  ASSERT_EQ(c.admin("PUT", "/v1/rooms/r", R"({"capacity":5})").status, 201u);
  const auto joined = c.request("POST", "/v1/rooms/r/tickets");
  const std::string ticket = json_field(joined.body, "ticket");
  const auto status = c.request("GET", "/v1/rooms/r/tickets/" + ticket);
  ASSERT_NE(status.body.find("\"token\""), std::string::npos) << status.body;
  for (const auto* r : {&joined, &status}) {
    EXPECT_EQ(r->header("cache-control"), "no-store");
    const std::string date = r->header("date");
    EXPECT_EQ(date.size(), 29u) << date;
    EXPECT_TRUE(date.ends_with(" GMT")) << date;
  }
  EXPECT_EQ(c.request("GET", "/v1/nope").header("cache-control"), "no-store");
  EXPECT_EQ(c.request("GET", "/.well-known/jwks.json").header("cache-control"),
            "public, max-age=300");
}

}  // namespace
}  // namespace anteroom::testing
