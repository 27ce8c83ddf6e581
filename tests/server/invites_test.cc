// Invite-only rooms and lanes over HTTP and the WebSocket (docs/api.md, "Invites and
// lanes"): an invite the service signed with --user-secret names the visitor and the lane;
// a bad one gets nobody a ticket; places follow the lanes' turns.
#include <boost/json.hpp>

#include "server/app/api.h"
#include "server/app/jws.h"
#include "tests/server/harness.h"

namespace anteroom::testing {
namespace {

namespace json = boost::json;
constexpr const char* kUserSecret = "invites-test-user-secret-0123456789";

std::string invite(const std::string& sub, const std::string& lane = "",
                   const std::string& room = "sale", int64_t exp_in_s = 3600,
                   const char* secret = kUserSecret) {
  json::object c{{"room", room}, {"sub", sub}, {"exp", unix_now_s() + exp_in_s}};
  if (!lane.empty()) c["lane"] = lane;
  return sign_hs256(c, secret);
}

class Invites : public ::testing::Test {
 protected:
  void SetUp() override {
    Options o = test_options();
    o.user_secret = kUserSecret;
    server_ = std::make_unique<TestServer>(o);
    c_ = std::make_unique<HttpClient>(server_->port());
    ASSERT_EQ(c_->admin("PUT", "/v1/rooms/sale",
                        R"({"capacity":0,"admission":"manual","join_requires":"invite",
                            "lanes":[{"name":"members","weight":3},{"name":"public","weight":1}]})")
                  .status,
              201u);
  }
  Reply join(const std::string& body) {
    return c_->request("POST", "/v1/rooms/sale/tickets", body);
  }
  std::string refusal(const std::string& body) {
    const Reply r = join(body);
    EXPECT_EQ(r.status, 403u) << body;
    return json_field(json_field(r.body, "error"), "code");
  }

  std::unique_ptr<TestServer> server_;
  std::unique_ptr<HttpClient> c_;
};

TEST_F(Invites, WithoutAValidInviteNobodyGetsATicket) {
  EXPECT_EQ(refusal("{}"), "invite_invalid");
  EXPECT_EQ(refusal(R"({"invite":"not-a-jwt"})"), "invite_invalid");
  EXPECT_EQ(refusal(R"({"invite":")" +
                    invite("ann", "", "sale", 3600, "another-secret-0123456789") + R"("})"),
            "invite_invalid");
  EXPECT_EQ(refusal(R"({"invite":")" + invite("ann", "", "sale", -5) + R"("})"), "invite_invalid");
  EXPECT_EQ(refusal(R"({"invite":")" + invite("ann", "", "other") + R"("})"), "invite_invalid");
  EXPECT_EQ(refusal(R"({"invite":")" + invite("ann", "vip") + R"("})"), "invite_invalid");
  EXPECT_EQ(refusal(R"({"user":"bob","invite":")" + invite("ann") + R"("})"), "invite_invalid");
  const Reply room = c_->admin("GET", "/v1/rooms/sale");
  EXPECT_NE(room.body.find(R"("joined":0)"), std::string::npos) << room.body;
}

TEST_F(Invites, AnInviteNamesTheVisitorAndTheLaneAndGivesOnePlace) {
  const std::string ann = invite("ann", "members");
  const Reply first = join(R"({"invite":")" + ann + R"("})");
  ASSERT_EQ(first.status, 201u) << first.body;
  EXPECT_EQ(json_field(first.body, "lane"), "members");
  const Reply again = join(R"({"invite":")" + ann + R"("})");  // one live ticket per invitee
  EXPECT_EQ(again.status, 200u);
  EXPECT_EQ(json_field(again.body, "ticket"), json_field(first.body, "ticket"));
  // The public lane waits behind the members' turns: 3 members' turns to 1 of the public's.
  std::vector<std::string> pub, mem;
  for (int i = 0; i < 3; ++i) {
    pub.push_back(json_field(
        join(R"({"invite":")" + invite("p" + std::to_string(i)) + R"("})").body, "ticket"));
    mem.push_back(json_field(
        join(R"({"invite":")" + invite("m" + std::to_string(i), "members") + R"("})").body,
        "ticket"));
  }
  auto position = [&](const std::string& t) {
    return json_field(c_->request("GET", "/v1/rooms/sale/tickets/" + t).body, "position");
  };
  EXPECT_EQ(position(json_field(first.body, "ticket")), "1");
  EXPECT_EQ(position(mem[0]), "2");
  EXPECT_EQ(position(pub[0]), "3");  // its turn comes after the members' first two
  EXPECT_EQ(position(mem[1]), "4");
  EXPECT_EQ(position(mem[2]), "5");
  EXPECT_EQ(position(pub[1]), "6");
  EXPECT_EQ(json_field(c_->request("GET", "/v1/rooms/sale/tickets/" + pub[2]).body, "lane"),
            "public");
  const Reply room = c_->admin("GET", "/v1/rooms/sale");
  EXPECT_NE(room.body.find(R"("lanes":[{"name":"members","weight":3})"), std::string::npos);
}

// A room that sets nothing about the gate or lanes refuses an invite's lane as a room with
// other lanes does: never a place in some lane the service did not mean.
TEST_F(Invites, AnInvitesLaneMustBeTheRooms) {
  ASSERT_EQ(c_->admin("PUT", "/v1/rooms/plain", R"({"capacity":0,"admission":"manual"})").status,
            201u);
  const Reply laned = c_->request("POST", "/v1/rooms/plain/tickets",
                                  R"({"invite":")" + invite("ann", "members", "plain") + R"("})");
  EXPECT_EQ(laned.status, 403u) << laned.body;
  EXPECT_NE(laned.body.find("a lane the room has not"), std::string::npos) << laned.body;
  const Reply plain = c_->request("POST", "/v1/rooms/plain/tickets",
                                  R"({"invite":")" + invite("ann", "", "plain") + R"("})");
  EXPECT_EQ(plain.status, 201u) << plain.body;
}

TEST_F(Invites, TheWebSocketTakesAnInviteToo) {
  WsClient ws(server_->port(), "/v1/rooms/sale/ws");
  ws.send(R"({"type":"ENTER","userId":"zoe"})");
  auto no = ws.next_of("ERROR");
  ASSERT_TRUE(no.has_value());
  EXPECT_NE(no->find("invite_invalid"), std::string::npos) << *no;
  ws.send(R"({"type":"ENTER","userId":"zoe","invite":")" + invite("zoe", "members") + R"("})");
  auto queued = ws.next_of("QUEUE");
  ASSERT_TRUE(queued.has_value());
  EXPECT_EQ(json_field(*queued, "position"), "1");
  WsClient other(server_->port(), "/v1/rooms/sale/ws");  // an invite for someone else
  other.send(R"({"type":"ENTER","userId":"eve","invite":")" + invite("zoe") + R"("})");
  auto refused = other.next_of("ERROR");
  ASSERT_TRUE(refused.has_value());
  EXPECT_NE(refused->find("another user"), std::string::npos) << *refused;
}

}  // namespace
}  // namespace anteroom::testing
