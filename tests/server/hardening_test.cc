// Findings of the security review, each reproduced through the real server: a session that
// outlived its token, a user name that took over someone's place, and the smaller ones
// (paths, Bearer, cookies, admit 0, the verify-only key, metrics without room names).
#include <boost/json.hpp>

#include "server/app/api.h"
#include "server/app/token.h"
#include "tests/server/harness.h"

namespace anteroom::testing {
namespace {

std::string field(const std::string& body, const char* name) { return json_field(body, name); }

// The token in a Set-Cookie value "anteroom_r=<token>; Path=/; ...".
std::string cookie_token(const std::string& set_cookie, const std::string& room) {
  const std::string name = "anteroom_" + room + "=";
  if (!set_cookie.starts_with(name)) return {};
  return set_cookie.substr(name.size(), set_cookie.find(';') - name.size());
}

// Finding 1: the token's expiry was fixed at admission, so a visitor whose session the
// gate kept refreshing was refused once the first token expired. Now every refresh issues a
// fresh token valid to the session's new idle deadline.
TEST(Hardening, AVisitorUsingTheServiceIsNeverLockedOut) {
  auto clock = std::make_shared<ManualClock>();
  TestServer server(test_options(), engine_on(clock));
  HttpClient c(server.port());
  ASSERT_EQ(c.admin("PUT", "/v1/rooms/r",
                    R"({"capacity":5,"allowed_ttl_seconds":30,"session_ttl_seconds":60})")
                .status,
            201u);
  Reply joined = c.request("POST", "/v1/rooms/r/tickets");
  std::string token = field(joined.body, "token");
  ASSERT_FALSE(token.empty()) << joined.body;
  clock->advance_s(10);  // first use within the allowed TTL
  for (int minute = 1; minute <= 10; ++minute) {
    Reply g = c.request("GET", "/v1/gate/r", "", {{"Cookie", "anteroom_r=" + token}});
    ASSERT_EQ(g.status, 204u) << "locked out after " << minute - 1 << " minutes of use";
    const std::string fresh = cookie_token(g.header("set-cookie"), "r");
    ASSERT_FALSE(fresh.empty()) << g.header("set-cookie");
    EXPECT_NE(g.header("set-cookie").find("HttpOnly"), std::string::npos);
    token = fresh;
    clock->advance_s(45);  // used again within the 60 s idle limit
  }
  // verify refreshes too, and hands the service the fresh token.
  Reply v = c.admin("POST", "/v1/rooms/r/verify", R"({"token":")" + token + R"("})");
  ASSERT_EQ(v.status, 200u) << v.body;
  EXPECT_EQ(field(v.body, "status"), "ACTIVE");
  EXPECT_FALSE(field(v.body, "token").empty());
  // An idle session still ends: its last token dies with it.
  clock->advance_s(61);
  EXPECT_EQ(c.request("GET", "/v1/gate/r", "", {{"Cookie", "anteroom_r=" + token}}).status, 401u);
}

constexpr const char* kUserSecret = "the-protected-services-user-secret";

// Without --user-secret a name is proved by the ticket's key or the same socket; with it,
// by the service's assertion (user_token) alone.
class UserTakeover : public ::testing::Test {
 protected:
  void SetUp() override { start(false); }
  void start(bool user_secret) {
    Options o = test_options();
    if (user_secret) o.user_secret = kUserSecret;
    server_ = std::make_unique<TestServer>(o);
    client_ = std::make_unique<HttpClient>(server_->port());
    client_->admin("PUT", "/v1/rooms/r", R"({"capacity":0,"admission":"manual"})");
    client_->admin("PUT", "/v1/rooms/trusting",
                   R"({"capacity":0,"admission":"manual","trust_user":true})");
  }
  Reply join(const std::string& room, const std::string& body) {
    return client_->request("POST", "/v1/rooms/" + room + "/tickets", body);
  }
  std::unique_ptr<TestServer> server_;
  std::unique_ptr<HttpClient> client_;
};

// Finding 2: knowing a user's name used to return their ticket (and so let anyone leave it).
TEST_F(UserTakeover, ANameAloneGetsNothingAndRevealsNothing) {
  Reply alice = join("r", R"({"user":"alice","key":"alices-own-key"})");
  ASSERT_EQ(alice.status, 201u);
  const std::string ticket = field(alice.body, "ticket");
  Reply thief = join("r", R"({"user":"alice"})");
  EXPECT_EQ(thief.status, 409u);
  EXPECT_EQ(thief.body.find(ticket), std::string::npos);  // nothing of the ticket
  EXPECT_NE(thief.body.find("user_in_line"), std::string::npos);
  EXPECT_EQ(join("r", R"({"user":"alice","key":"a-guess"})").status, 409u);
  // Alice is still in line, and her own key gets her place back.
  EXPECT_EQ(field(client_->request("GET", "/v1/rooms/r/tickets/" + ticket).body, "status"),
            "WAITING");
  Reply back = join("r", R"({"user":"alice","key":"alices-own-key"})");
  EXPECT_EQ(back.status, 200u);
  EXPECT_EQ(field(back.body, "ticket"), ticket);
}

TEST_F(UserTakeover, AnAssertionFromTheServiceOrATrustingRoomProvesTheUser) {
  start(true);
  TokenSigner service(kUserSecret);
  // An assertion is a JWT with sub = the user; the signer's room claim is ignored here.
  TokenClaims claims{"bob", "r", "", "", 0, unix_now_s() + 600};
  const std::string assertion = service.sign(claims);
  Reply bob = join("r", R"({"user":"bob","user_token":")" + assertion + R"("})");
  ASSERT_EQ(bob.status, 201u) << bob.body;
  Reply proved = join("r", R"({"user":"bob","user_token":")" + assertion + R"("})");
  EXPECT_EQ(proved.status, 200u) << proved.body;
  EXPECT_EQ(field(proved.body, "ticket"), field(bob.body, "ticket"));
  // Anything but bob's own, unexpired assertion for this room is refused before the room.
  TokenClaims other{"mallory", "r", "", "", 0, unix_now_s() + 600};
  TokenClaims forever{"bob", "r", "", "", 0, 0};  // no usable exp: an assertion good for ever
  TokenClaims other_room{"bob", "elsewhere", "", "", 0, unix_now_s() + 600};
  TokenSigner forger("not-the-service-secret-at-all-0000");
  for (const std::string& t : {service.sign(other), TokenSigner(kUserSecret).sign(forever),
                               service.sign(other_room), forger.sign(claims)}) {
    Reply r = join("r", R"({"user":"bob","user_token":")" + t + R"("})");
    EXPECT_EQ(r.status, 403u) << r.body;
    EXPECT_NE(r.body.find("user_token_required"), std::string::npos) << r.body;
  }
  // A room that trusts names (authenticated upstream) hands the ticket back on the name.
  Reply first = join("trusting", R"({"user":"carol"})");
  Reply again = join("trusting", R"({"user":"carol"})");
  EXPECT_EQ(again.status, 200u);
  EXPECT_EQ(field(again.body, "ticket"), field(first.body, "ticket"));
}

// The finding: with --user-secret, proof was asked only of a return, so an attacker joined
// first as alice with a key of its own, the real alice's proven join got the attacker's
// ticket, and verify named alice for it. Now a named join needs the name's assertion.
TEST_F(UserTakeover, WithAUserSecretANameCannotBeSquatted) {
  start(true);
  Reply squat = join("r", R"({"user":"alice@example.com","key":"the-attackers-key"})");
  EXPECT_EQ(squat.status, 403u) << squat.body;
  EXPECT_NE(squat.body.find("user_token_required"), std::string::npos);
  WsClient ws(server_->port(), "/v1/rooms/r/ws");
  ws.send(R"({"type":"ENTER","userId":"alice@example.com"})");
  auto refused = ws.next_of("ERROR");
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->find("user_token_required"), std::string::npos) << *refused;
  const std::string assertion =
      TokenSigner(kUserSecret).sign({"alice@example.com", "r", "", "", 0, unix_now_s() + 600});
  Reply alice = join("r", R"({"user":"alice@example.com","key":"alices-key","user_token":")" +
                              assertion + R"("})");
  EXPECT_EQ(alice.status, 201u) << "her place is new, and hers: " << alice.body;
  auto info = boost::json::parse(client_->admin("GET", "/v1/rooms/r").body).as_object();
  EXPECT_EQ(info.at("totals").at("joined").as_int64(), 1) << "the squat made no ticket";
  // The waiting page's join names no user, and still joins.
  EXPECT_EQ(join("r", R"({"key":"a-page-key"})").status, 201u);
  // A room that trusts names upstream opts out.
  EXPECT_EQ(join("trusting", R"({"user":"alice@example.com"})").status, 201u);
}

TEST_F(UserTakeover, AnotherWebSocketCannotEnterAsTheSameUser) {
  WsClient mine(server_->port(), "/v1/rooms/r/ws");
  mine.send(R"({"type":"ENTER","userId":"dave"})");
  auto entered = mine.next_of("QUEUE");
  ASSERT_TRUE(entered) << "no QUEUE";
  WsClient other(server_->port(), "/v1/rooms/r/ws");
  other.send(R"({"type":"ENTER","userId":"dave"})");
  auto refused = other.next_of("ERROR");
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->find("user_in_line"), std::string::npos) << *refused;
  other.send(R"({"type":"LEAVE","userId":"dave"})");
  EXPECT_TRUE(other.next_of("ERROR"));
  // The same socket may ENTER again; dave is still in line.
  mine.send(R"({"type":"ENTER","userId":"dave"})");
  auto again = mine.next_of("QUEUE");
  ASSERT_TRUE(again);
  EXPECT_EQ(field(*again, "ticket"), field(*entered, "ticket"));
}

// Finding 9, the smaller ones.
TEST(Hardening, PathsBearerCookiesAndAdmitZero) {
  Options o = test_options();
  o.verify_key = "a-verify-only-key-000";
  TestServer server(o);
  HttpClient c(server.port());
  c.admin("PUT", "/v1/rooms/r", R"({"capacity":5,"admission":"manual"})");
  // A target without a leading slash is no route of ours.
  EXPECT_EQ(c.request("POST", "Xv1/rooms/r/tickets").status, 404u);
  // The Bearer scheme in any case.
  for (const char* scheme : {"Bearer ", "bearer ", "BEARER ", "bEaReR  "}) {
    EXPECT_EQ(
        c.request("GET", "/v1/rooms", "", {{"Authorization", std::string(scheme) + kAdminKey}})
            .status,
        200u)
        << scheme;
  }
  // admit 0 is a bad request, as the reference says.
  EXPECT_EQ(c.admin("POST", "/v1/rooms/r/admit", R"({"count":0})").status, 400u);
  // The verify-only key verifies, and nothing else.
  const std::string t = field(c.request("POST", "/v1/rooms/r/tickets").body, "ticket");
  c.admin("POST", "/v1/rooms/r/admit", R"({"count":1})");
  const std::string token = field(c.request("GET", "/v1/rooms/r/tickets/" + t).body, "token");
  const std::map<std::string, std::string> verify_only{
      {"Authorization", "Bearer a-verify-only-key-000"}};
  EXPECT_EQ(c.request("POST", "/v1/rooms/r/verify", R"({"token":")" + token + R"("})", verify_only)
                .status,
            200u);
  EXPECT_EQ(c.request("GET", "/v1/rooms", "", verify_only).status, 401u);
  EXPECT_EQ(c.request("POST", "/v1/rooms/r/admit", R"({"count":1})", verify_only).status, 401u);
  // The gate reads every Cookie header, not only the first.
  RawClient raw(server.port());
  raw.send("GET /v1/gate/r HTTP/1.1\r\nHost: x\r\nCookie: other=1\r\nCookie: anteroom_r=" + token +
           "\r\nConnection: close\r\n\r\n");
  auto answer = raw.until_closed(std::chrono::seconds(5));
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->substr(0, 12), "HTTP/1.1 204") << *answer;
}

TEST(Hardening, MetricsCanLeaveRoomNamesOut) {
  Options o = test_options();
  o.room_metrics = false;
  TestServer server(o);
  HttpClient c(server.port());
  c.admin("PUT", "/v1/rooms/secret-launch", "{}");
  const std::string m = c.admin("GET", "/metrics").body;
  EXPECT_EQ(m.find("secret-launch"), std::string::npos);
  EXPECT_NE(m.find("anteroom_joins_total"), std::string::npos);
}

}  // namespace
}  // namespace anteroom::testing
