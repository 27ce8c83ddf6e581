// A Server-Sent Events stream hears its ticket's position changes, then ALLOWED with a
// token, and then ends.
#include "tests/server/harness.h"

namespace anteroom::testing {
namespace {

TEST(Sse, StreamGetsPositionChangesThenAllowedWithToken) {
  TestServer server;
  HttpClient c(server.port());
  c.admin("PUT", "/v1/rooms/r", R"({"capacity":5,"admission":"manual"})");
  std::vector<std::string> t;
  for (int i = 0; i < 4; ++i)
    t.push_back(field(c.request("POST", "/v1/rooms/r/tickets").body, "ticket"));

  SseClient sse(server.port(), "/v1/rooms/r/tickets/" + t[3] + "/events");
  ASSERT_EQ(sse.status(), 200u);
  auto first = sse.next();
  ASSERT_TRUE(first);
  EXPECT_EQ(field(*first, "status"), "WAITING");
  EXPECT_EQ(field(*first, "position"), "4");

  c.admin("POST", "/v1/rooms/r/admit", R"({"count":1})");
  auto moved = sse.next();
  ASSERT_TRUE(moved);
  EXPECT_EQ(field(*moved, "position"), "3");

  c.request("DELETE", "/v1/rooms/r/tickets/" + t[2]);  // someone ahead leaves
  moved = sse.next();
  ASSERT_TRUE(moved);
  EXPECT_EQ(field(*moved, "position"), "2");

  c.admin("POST", "/v1/rooms/r/admit", R"({"count":2})");
  auto allowed = sse.next();
  ASSERT_TRUE(allowed);
  EXPECT_EQ(field(*allowed, "status"), "ALLOWED");
  EXPECT_FALSE(field(*allowed, "token").empty());
  EXPECT_FALSE(sse.next(std::chrono::seconds(2)));  // and the stream has ended
}

TEST(Sse, UnknownTicketIs404AndEndedTicketEndsAtOnce) {
  TestServer server;
  HttpClient c(server.port());
  c.admin("PUT", "/v1/rooms/r", R"({"capacity":1,"admission":"manual"})");
  EXPECT_EQ(c.request("GET", "/v1/rooms/r/tickets/AAAAAAAAAAAAAAAAAAAAAAAAAAA/events").status,
            404u);
  std::string t = field(c.request("POST", "/v1/rooms/r/tickets").body, "ticket");
  c.request("DELETE", "/v1/rooms/r/tickets/" + t);
  SseClient sse(server.port(), "/v1/rooms/r/tickets/" + t + "/events");
  auto last = sse.next();
  ASSERT_TRUE(last);
  EXPECT_EQ(field(*last, "status"), "LEFT");
  EXPECT_FALSE(sse.next(std::chrono::seconds(2)));
}

TEST(Sse, ServerShutdownTellsStreamsToReconnect) {
  auto server = std::make_unique<TestServer>();
  HttpClient c(server->port());
  c.admin("PUT", "/v1/rooms/r", R"({"capacity":1,"admission":"manual"})");
  std::string t = field(c.request("POST", "/v1/rooms/r/tickets").body, "ticket");
  SseClient sse(server->port(), "/v1/rooms/r/tickets/" + t + "/events");
  ASSERT_TRUE(sse.next());
  server->server().stop(1000);
  EXPECT_FALSE(sse.next(std::chrono::seconds(3)));  // closed, not left hanging
}

}  // namespace
}  // namespace anteroom::testing
