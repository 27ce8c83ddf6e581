// Seed 000's scenario end to end over WebSocket: capacity 10; 20 users enter (10 visitors,
// 10 waiting); user_10000 enters, gets QUEUE and position 11; another user enters and
// user_10000 is still 11 while the queue count grows; visitors leave one by one and
// user_10000's position falls step by step until ALLOWED is pushed to it.
#include "tests/server/harness.h"

namespace anteroom::testing {
namespace {

std::string msg(const char* type, const std::string& user) {
  return std::string(R"({"type":")") + type + R"(","userId":")" + user + "\"}";
}

// Reads QUEUE_STATUS messages (answers to CHECK and pushes alike) until one says `want`;
// none may show a position below it on the way.
void expect_position(WsClient& ws, int want) {
  for (;;) {
    auto m = ws.next_of("QUEUE_STATUS");
    ASSERT_TRUE(m) << "no QUEUE_STATUS with position " << want;
    int got = std::stoi(field(*m, "position"));
    ASSERT_GE(got, want) << *m;
    if (got == want) return;
  }
}

TEST(SeedWebSocket, Seed000ScenarioEndToEnd) {
  TestServer server;
  HttpClient admin(server.port());
  ASSERT_EQ(admin.admin("PUT", "/v1/rooms/blog", R"({"capacity":10})").status, 201u);
  const std::string path = "/v1/rooms/blog/ws";

  std::vector<std::unique_ptr<WsClient>> users;
  for (int i = 0; i < 20; ++i) {
    users.push_back(std::make_unique<WsClient>(server.port(), path));
    users.back()->send(msg("ENTER", "user_" + std::to_string(i)));
    auto reply = users.back()->next_of(i < 10 ? "ALLOWED" : "QUEUE");
    ASSERT_TRUE(reply) << "user_" << i;
    if (i >= 10) {
      EXPECT_EQ(field(*reply, "position"), std::to_string(i - 9));
    }
  }

  WsClient me(server.port(), path);
  me.send(msg("ENTER", "user_10000"));
  auto queued = me.next_of("QUEUE");
  ASSERT_TRUE(queued);
  EXPECT_EQ(field(*queued, "position"), "11");

  WsClient other(server.port(), path);
  other.send(msg("ENTER", "user_20000"));
  auto other_q = other.next_of("QUEUE");
  ASSERT_TRUE(other_q);
  EXPECT_EQ(field(*other_q, "position"), "12");
  // The queue count grows on every socket of the room; user_10000 stays 11.
  bool saw_12 = false;
  for (int i = 0; i < 20 && !saw_12; ++i) {
    auto vc = me.next_of("VISITOR_COUNT");
    ASSERT_TRUE(vc);
    EXPECT_EQ(field(*vc, "maxCount"), "10");
    EXPECT_EQ(field(*vc, "count"), "10");
    saw_12 = field(*vc, "queueCount") == "12";
  }
  EXPECT_TRUE(saw_12);
  me.send(msg("CHECK_QUEUE_STATUS", "user_10000"));
  auto check = me.next_of("QUEUE_STATUS");
  ASSERT_TRUE(check);
  EXPECT_EQ(field(*check, "allowed"), "false");
  EXPECT_EQ(field(*check, "position"), "11");
  EXPECT_EQ(field(*check, "visitorCount"), "10");
  EXPECT_EQ(field(*check, "queueCount"), "12");
  EXPECT_EQ(field(*check, "maxCount"), "10");

  // Visitors leave one by one (then the first one admitted after them).
  for (int i = 0; i <= 10; ++i) {
    users[i]->send(msg("LEAVE", "user_" + std::to_string(i)));
    if (i < 10) {
      // The next in line is told at once...
      ASSERT_TRUE(users[10 + i]->next_of("ALLOWED")) << "user_" << 10 + i;
      // ...and user_10000 has moved up by exactly one.
      me.send(msg("CHECK_QUEUE_STATUS", "user_10000"));
      SCOPED_TRACE("after " + std::to_string(i + 1) + " left");
      expect_position(me, 10 - i);
    }
  }
  auto allowed = me.next_of("ALLOWED");  // pushed, not asked for
  ASSERT_TRUE(allowed);
  EXPECT_FALSE(field(*allowed, "token").empty());
  // user_20000 is now first in line (pushes it got on the way may be read first).
  other.send(msg("CHECK_QUEUE_STATUS", "user_20000"));
  expect_position(other, 1);
}

TEST(SeedWebSocket, MalformedMessagesGetErrorAndTheSocketStaysOpen) {
  TestServer server;
  HttpClient admin(server.port());
  admin.admin("PUT", "/v1/rooms/blog", R"({"capacity":1})");
  WsClient ws(server.port(), "/v1/rooms/blog/ws");
  for (const char* bad :
       {"not json", "[1]", R"({"type":"ENTER"})", R"({"type":"DANCE","userId":"u"})",
        R"({"type":5,"userId":"u"})", R"({"type":"LEAVE","userId":"never-entered"})"}) {
    ws.send(bad);
    auto e = ws.next_of("ERROR");
    ASSERT_TRUE(e) << bad;
    EXPECT_FALSE(field(*e, "message").empty());
  }
  ws.send(msg("ENTER", "u"));
  EXPECT_TRUE(ws.next_of("ALLOWED"));
}

// The server reads messages in small pieces: one longer than a piece still arrives whole,
// and one over the body limit ends the socket instead of growing a buffer without bound.
TEST(SeedWebSocket, LongMessagesArriveWholeAndOversizedOnesCloseTheSocket) {
  TestServer server;
  HttpClient admin(server.port());
  admin.admin("PUT", "/v1/rooms/blog", R"({"capacity":1})");
  WsClient ws(server.port(), "/v1/rooms/blog/ws");
  std::string user(120, 'u');
  std::string padded =
      R"({"type":"ENTER","userId":")" + user + R"(","note":")" + std::string(3000, 'x') + "\"}";
  ws.send(padded);
  auto allowed = ws.next_of("ALLOWED");
  ASSERT_TRUE(allowed);
  EXPECT_FALSE(field(*allowed, "ticket").empty());

  WsClient big(server.port(), "/v1/rooms/blog/ws");
  ASSERT_TRUE(big.next_of("VISITOR_COUNT"));  // sent on connect
  try {
    big.send(std::string(64 * 1024, ' '));  // over the 16 KiB body limit
  } catch (const std::exception&) {         // the server may close before all of it is sent
  }
  // The server closed the socket: an ENTER that a live socket answers with QUEUE (the one
  // slot is taken) gets nothing.
  try {
    big.send(msg("ENTER", "late"));
  } catch (const std::exception&) {  // the reset may already have arrived
  }
  EXPECT_FALSE(big.next_of("QUEUE", std::chrono::seconds(2)));
  WsClient live(server.port(), "/v1/rooms/blog/ws");
  live.send(msg("ENTER", "late"));
  EXPECT_TRUE(live.next_of("QUEUE"));
}

}  // namespace
}  // namespace anteroom::testing
