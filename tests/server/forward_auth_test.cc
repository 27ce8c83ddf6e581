// The forward-auth gate over real sockets (docs/api.md, "The forward-auth gate"): asked as
// Traefik and Caddy ask (X-Forwarded-*), as nginx and ingress-nginx ask (X-Original-*), as
// Envoy asks (/v1/authz/...), by a peer that is a --trusted-proxy; its answers to browsers
// and to other clients, bypass rules, the gate's own admissions and their cookies, passes.
#include <string>

#include "server/app/api.h"
#include "server/app/jws.h"
#include "tests/server/gate_fixture.h"

namespace anteroom::testing {
namespace {

TEST_F(ForwardAuth, OnlyATrustedProxyIsBelievedAndItMustSayWhatItAsks) {
  EXPECT_EQ(c_->request("GET", "/v1/gate").status, 400u);
  c_.reset();
  server_.reset();
  start(false);
  Reply r = traefik("/shop/cart");
  EXPECT_EQ(r.status, 400u);
  EXPECT_NE(r.body.find("untrusted_proxy"), std::string::npos);
}

TEST_F(ForwardAuth, AnAddressNoRoomProtectsIsAllowed) {
  put_room(R"({"capacity":0,"admission":"manual","match":[{"path_prefix":"/shop/"}]})");
  Reply r = traefik("/about");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.header("x-anteroom-visitor"), "-");
  EXPECT_EQ(r.header("cache-control"), "no-store");
  EXPECT_TRUE(r.body.empty());
}

TEST_F(ForwardAuth, WithALineEachClientGetsTheAnswerItsProxyCanShow) {
  put_room(R"({"capacity":0,"admission":"manual","match":[{"path_prefix":"/shop/"}]})");
  // A browser: to the waiting page, absolute (Traefik rewrites a relative Location).
  Reply page = traefik("/shop/cart?x=1&y=2");
  EXPECT_EQ(page.status, 302u);
  EXPECT_EQ(page.header("location"),
            "https://shop.example/wait/shop?return=/shop/cart%3Fx%3D1%26y%3D2");
  // Another client: JSON 429 with the line to join.
  Reply api = traefik("/shop/api/items", "", false);
  EXPECT_EQ(api.status, 429u);
  EXPECT_EQ(api.header("retry-after"), "5");
  EXPECT_NE(api.body.find(R"("code":"in_line")"), std::string::npos);
  EXPECT_NE(api.body.find(R"("join":"/v1/rooms/shop/tickets")"), std::string::npos);
  // nginx's way: 401 and nothing else (nginx turns any other status into 500).
  Reply n = nginx("/shop/cart");
  EXPECT_EQ(n.status, 401u);
  EXPECT_TRUE(n.body.empty());
  // Envoy's way: the visitor's own method and path under /v1/authz.
  Reply e = c_->request("POST", "/v1/authz/shop/cart?x=1", "", {{"Host", "shop.example"}});
  EXPECT_EQ(e.status, 429u);
  Reply eb = c_->request("GET", "/v1/authz/shop/cart", "",
                         {{"Host", "shop.example"}, {"Accept", "text/html"}});
  EXPECT_EQ(eb.status, 302u);
  EXPECT_EQ(eb.header("location"), "http://shop.example/wait/shop?return=/shop/cart");
}

TEST_F(ForwardAuth, BypassRulesLetTheirRequestsByAndDotSegmentsDoNotDodgeThem) {
  put_room(R"({"capacity":0,"admission":"manual","match":[{"path_prefix":"/"}],
               "bypass":[{"name":"assets","path_prefix":"/static/"},
                         {"name":"office","cidr":"203.0.113.0/24","methods":["POST"]}]})");
  Reply asset = traefik("/static/site.css");
  EXPECT_EQ(asset.status, 200u);
  EXPECT_EQ(asset.header("x-anteroom-visitor"), "bypass:assets");
  EXPECT_EQ(traefik("/static/../checkout").status, 302u);
  EXPECT_EQ(traefik("/static/%2e%2e/checkout").status, 302u);
  EXPECT_EQ(traefik("/static%2F..%2Fcheckout").status, 302u);
  EXPECT_EQ(traefik("/static/..;/checkout").status, 302u);
  EXPECT_EQ(traefik("/order", "", false, "POST").status, 200u);  // from the office
  EXPECT_EQ(traefik("/order", "", false, "GET").status, 429u);
  Reply metrics = c_->admin("GET", "/metrics");
  EXPECT_NE(metrics.body.find(R"(anteroom_gate_bypassed_total{room="shop",rule="assets"} 1)"),
            std::string::npos);
}

TEST_F(ForwardAuth, WhileThereIsRoomTheGateAdmitsAndTheCookieComesThroughTheEnterLink) {
  put_room(R"({"capacity":2,"match":[{"host":"shop.example"}]})");
  Reply first = traefik("/shop/item?id=7");
  ASSERT_EQ(first.status, 302u);
  const std::string enter = first.header("location");
  ASSERT_EQ(enter.rfind("https://shop.example/v1/enter?t=", 0), 0u) << enter;
  const std::string path = enter.substr(std::string("https://shop.example").size());
  // The cookie rides in the link sealed: its payload does not hold the token.
  const std::string link = path.substr(path.find("t=") + 2);
  const size_t dot1 = link.find('.'), dot2 = link.find('.', dot1 + 1);
  auto payload = base64url_decode(link.substr(dot1 + 1, dot2 - dot1 - 1));
  ASSERT_TRUE(payload.has_value());
  EXPECT_EQ(payload->find("eyJ"), std::string::npos) << *payload;
  Reply set = c_->request("GET", path);
  ASSERT_EQ(set.status, 302u);
  EXPECT_EQ(set.header("location"), "/shop/item?id=7");
  const std::string cookie = cookie_of(set);
  ASSERT_EQ(cookie.rfind("anteroom_shop=", 0), 0u) << set.header("set-cookie");
  EXPECT_NE(set.header("set-cookie").find("HttpOnly"), std::string::npos);
  // Once only: the same link again sends back without the cookie.
  Reply again = c_->request("GET", path);
  EXPECT_EQ(again.status, 302u);
  EXPECT_TRUE(again.header("set-cookie").empty());
  // The visitor comes back with it: through, and the ticket is in use now.
  Reply through = traefik("/shop/item?id=7", cookie);
  EXPECT_EQ(through.status, 200u);
  EXPECT_EQ(through.header("x-anteroom-visitor").size(), 27u);
  const Reply room = c_->admin("GET", "/v1/rooms/shop");
  EXPECT_NE(room.body.find(R"("active":1)"), std::string::npos) << room.body;
  // A link made under another key, or changed, sets nothing.
  EXPECT_EQ(c_->request("GET", path + "x").status, 400u);
  // A browser is sent to the front page instead of shown the JSON (a pass alike).
  Reply old = c_->request("GET", path + "x", "", {{"Accept", "text/html"}});
  EXPECT_EQ(old.status, 302u);
  EXPECT_EQ(old.header("location"), "/");
  EXPECT_EQ(c_->request("GET", "/v1/enter?pass=nonsense", "", {{"Accept", "text/html"}}).status,
            302u);
  EXPECT_EQ(c_->request("GET", "/v1/enter?pass=nonsense").status, 403u);
  // Another visitor's link is a link of its own: it sets that visitor's cookie.
  Reply second = traefik("/shop/");
  ASSERT_EQ(second.status, 302u);
  Reply set2 = c_->request("GET", second.header("location").substr(20));
  EXPECT_EQ(cookie_of(set2).rfind("anteroom_shop=", 0), 0u) << set2.header("set-cookie");
}

TEST_F(ForwardAuth, TheNginxWayAndPassModeSetTheCookieOnThe200) {
  put_room(R"({"capacity":5,"match":[{"path_prefix":"/"}]})");
  Reply n = nginx("/");
  ASSERT_EQ(n.status, 200u);
  const std::string cookie = cookie_of(n);
  ASSERT_FALSE(cookie.empty());
  EXPECT_EQ(nginx("/", cookie).status, 200u);
  put_room(R"({"capacity":5,"match":[{"path_prefix":"/"}],"gate_cookies":"pass"})");
  Reply t = traefik("/api/x", "", false);  // not a browser: the 200 can carry it
  EXPECT_EQ(t.status, 200u);
  EXPECT_FALSE(cookie_of(t).empty());
}

TEST_F(ForwardAuth, AGateAdmissionNobodyComesBackForLastsOnlyItsProbation) {
  put_room(R"({"capacity":1,"match":[{"path_prefix":"/"}],"gate_probation_seconds":20,
               "gate_cookies":"pass"})");
  Reply bot = traefik("/", "", false);  // a client that never keeps cookies
  ASSERT_EQ(bot.status, 200u);
  EXPECT_EQ(traefik("/", "", false).status, 429u);  // the one slot is held
  clock_->advance_s(19);
  server_->engine().run_all();
  EXPECT_EQ(traefik("/", "", false).status, 429u);  // still within its probation
  clock_->advance_s(1);
  server_->engine().run_all();  // what the server's pump does at the deadline
  const Reply room = c_->admin("GET", "/v1/rooms/shop");
  EXPECT_NE(room.body.find(R"("expired_allowed_unused":1)"), std::string::npos) << room.body;
  EXPECT_EQ(traefik("/", "", false).status, 200u);  // the slot is free again
}

TEST_F(ForwardAuth, OnceALineFormsNewVisitorsGetThePage) {
  put_room(R"({"capacity":1,"match":[{"path_prefix":"/"}],"gate_cookies":"pass"})");
  ASSERT_EQ(traefik("/", "", false).status, 200u);
  c_->request("POST", "/v1/rooms/shop/tickets", "{}");  // waits: the line has formed
  EXPECT_EQ(traefik("/").status, 302u);
  EXPECT_EQ(traefik("/").header("location").find("/v1/enter"), std::string::npos);
  put_room(R"({"capacity":9,"match":[{"path_prefix":"/"}],"gate_admits":false})");
  EXPECT_EQ(traefik("/", "", false).status, 429u);  // room enough, but the gate may not admit
}

TEST_F(ForwardAuth, APassLetsItsHolderThroughAFullRoomUntilRevoked) {
  put_room(R"({"capacity":0,"admission":"manual","match":[{"path_prefix":"/"}]})");
  Reply made =
      c_->admin("POST", "/v1/rooms/shop/passes",
                R"({"label":"support desk","expires_at":"2099-01-01T00:00:00Z","uses":1})");
  EXPECT_EQ(made.status, 400u);  // more than a year ahead
  made = c_->admin("POST", "/v1/rooms/shop/passes",
                   R"({"label":"support desk","expires_at":")" +
                       rfc3339(unix_now_s() * 1000 + 86'400'000) + R"(","uses":1})");
  ASSERT_EQ(made.status, 201u) << made.body;
  const std::string path = made.body.substr(made.body.find("/v1/enter?pass="));
  const std::string link = path.substr(0, path.find('"'));
  const std::string id = made.body.substr(made.body.find(R"("id":")") + 6, 32);
  Reply taken = c_->request("GET", link + "&return=/staff");
  ASSERT_EQ(taken.status, 302u);
  EXPECT_EQ(taken.header("location"), "/staff");
  const std::string cookie = cookie_of(taken);
  ASSERT_EQ(cookie.rfind("anteroom_pass_shop=", 0), 0u);
  Reply through = traefik("/staff", cookie);
  EXPECT_EQ(through.status, 200u);
  EXPECT_EQ(through.header("x-anteroom-visitor"), "pass");
  // Its one use is spent: a second browser goes to the waiting page, and the link's own
  // token set as the cookie by hand is no cookie (only /v1/enter makes one, a use each).
  EXPECT_NE(c_->request("GET", link).header("location").find("/wait/shop"), std::string::npos);
  const std::string link_token = link.substr(link.find("pass=") + 5);
  EXPECT_EQ(traefik("/staff", "anteroom_pass_shop=" + link_token).status, 302u);
  EXPECT_NE(c_->admin("GET", "/v1/rooms/shop/passes").body.find("support desk"), std::string::npos);
  ASSERT_EQ(c_->admin("DELETE", "/v1/rooms/shop/passes/" + id).status, 204u);
  EXPECT_EQ(traefik("/staff", cookie).status, 302u);
  EXPECT_EQ(c_->admin("DELETE", "/v1/rooms/shop/passes/nosuch").status, 404u);
  // A forged pass (another signature) opens nothing.
  std::string forged = cookie;
  forged.back() = forged.back() == 'A' ? 'B' : 'A';
  EXPECT_EQ(traefik("/staff", forged).status, 302u);
}

TEST_F(ForwardAuth, TheWaitingPageAnswersWithTheRoomsStatusAndFindsItsRoom) {
  put_room(R"({"capacity":0,"admission":"manual","match":[{"host":"shop.example"}],
               "queueing_status_code":503})");
  EXPECT_EQ(c_->request("GET", "/wait/shop").status, 503u);
  Reply any = c_->request("GET", "/wait?return=/cart", "",
                          {{"Host", "shop.example"}, {"Accept", "text/html"}});
  EXPECT_EQ(any.status, 503u);
  EXPECT_NE(any.body.find(R"("room":"shop")"), std::string::npos);
  Reply rd = c_->request("GET", "/wait?rd=https%3A%2F%2Fshop.example%2Fcart", "",
                         {{"Host", "other.example"}, {"Accept", "text/html"}});
  EXPECT_EQ(rd.status, 503u);
  // A script asking the address in place of the page gets the gate's JSON.
  Reply script = c_->request("GET", "/wait?return=/cart", "", {{"Host", "shop.example"}});
  EXPECT_EQ(script.status, 429u);
  EXPECT_NE(script.body.find(R"("code":"in_line")"), std::string::npos);
  EXPECT_EQ(c_->request("GET", "/wait?return=/cart", "", {{"Host", "else.example"}}).status, 404u);
  // nginx's error_page keeps the visitor's method: a POST not admitted gets the JSON, not 405.
  Reply post = c_->request(
      "POST", "/wait", "",
      {{"Host", "shop.example"}, {"Accept", "text/html"}, {"X-Anteroom-Return", "/cart"}});
  EXPECT_EQ(post.status, 429u) << post.body;
  EXPECT_NE(post.body.find(R"("code":"in_line")"), std::string::npos);
  // An invite in the address reaches the page that joins with it.
  const std::string jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbm4ifQ.c2lnbmF0dXJl";
  Reply invited = c_->request("GET", "/wait?return=/cart&invite=" + jwt, "",
                              {{"Host", "shop.example"}, {"Accept", "text/html"}});
  EXPECT_NE(invited.body.find(R"("invite":")" + jwt + '"'), std::string::npos);
  // nginx shows the page in place of /cart?invite=...: the invite rides in the return.
  Reply in_place = c_->request("GET", "/wait", "",
                               {{"Host", "shop.example."},
                                {"Accept", "text/html"},
                                {"X-Anteroom-Return", "/cart?invite=" + jwt}});
  EXPECT_NE(in_place.body.find(R"("invite":")" + jwt + '"'), std::string::npos) << in_place.body;
}

// A proxy passes the visitor's own headers on: a question naming the request twice is
// refused (nginx turns the 400 into its 500: closed), and the host is the proxy's word.
TEST_F(ForwardAuth, AVisitorsOwnOriginalRequestHeadersAreNeverBelieved) {
  put_room(R"({"capacity":0,"admission":"manual","match":[{"host":"shop.example"}]})");
  auto ask = [&](Headers h) { return c_->request("GET", "/v1/gate", "", h); };
  const Headers nginx_way{{"X-Original-URI", "/secret"}, {"X-Forwarded-Host", "shop.example"}};
  EXPECT_EQ(ask(nginx_way).status, 401u);
  Headers forged = nginx_way;
  forged["X-Original-URL"] = "http://nobody.example/secret";
  EXPECT_EQ(ask(forged).status, 400u);
  Headers traefik_way{{"X-Forwarded-Uri", "/secret"}, {"X-Forwarded-Host", "shop.example"}};
  EXPECT_EQ(ask(traefik_way).status, 429u);
  traefik_way["X-Original-URI"] = "/static/a";
  EXPECT_EQ(ask(traefik_way).status, 400u);
  // No host from the proxy: not the gate's own Host (the proxy's upstream name).
  EXPECT_EQ(ask({{"X-Forwarded-Uri", "/secret"}, {"Host", "shop.example"}}).status, 400u);
  // A trailing dot is the same host; a '#' is in no request target.
  EXPECT_EQ(ask({{"X-Original-URI", "/secret"}, {"X-Forwarded-Host", "Shop.Example."}}).status,
            401u);
  EXPECT_EQ(
      ask({{"X-Original-URI", "/static/x#/../../secret"}, {"X-Forwarded-Host", "shop.example"}})
          .status,
      400u);
}

// A path may hold '@' (a profile address); a rule without a name is named by its place.
TEST_F(ForwardAuth, PathsWithAtSignsAndUnnamedRulesWork) {
  put_room(R"({"capacity":0,"admission":"manual","match":[{"path_prefix":"/shop/"}],
               "bypass":[{"path_prefix":"/shop/@"}]})");
  EXPECT_EQ(traefik("/@alice").header("x-anteroom-visitor"), "-");
  Reply at = traefik("/shop/@alice");
  EXPECT_EQ(at.status, 200u);
  EXPECT_EQ(at.header("x-anteroom-visitor"), "bypass:rule0");
  // A host still may not carry a user ("user@host").
  Reply user = c_->request("GET", "/v1/gate", "",
                           {{"X-Forwarded-Uri", "/shop/"}, {"X-Forwarded-Host", "a@shop.example"}});
  EXPECT_EQ(user.status, 400u);
}

// The gate remembers cookies it has read through (server/app/admission_memo.h): what a
// remembered cookie stands for is still checked on every use.
TEST_F(ForwardAuth, ARememberedCookieStillEndsWithItsTicketAndAChangedOneIsRead) {
  put_room(R"({"capacity":5,"match":[{"path_prefix":"/"}],"session_ttl_seconds":30})");
  Reply n = nginx("/");
  ASSERT_EQ(n.status, 200u);
  const std::string cookie = cookie_of(n);
  ASSERT_FALSE(cookie.empty());
  // From here a refused cookie gets the page (401), not a fresh admission.
  put_room(R"({"capacity":5,"match":[{"path_prefix":"/"}],"session_ttl_seconds":30,
               "gate_admits":false})");
  const std::string visitor = n.header("x-anteroom-visitor");
  for (int i = 0; i < 3; ++i) {  // the first read verifies; the others are remembered
    Reply again = nginx("/", cookie);
    ASSERT_EQ(again.status, 200u) << i;
    EXPECT_EQ(again.header("x-anteroom-visitor"), visitor);
  }
  // One byte changed in the token or in the key: read afresh, and refused.
  std::string forged = cookie;
  const size_t tilde = forged.find('~');  // the token's signature ends just before it
  ASSERT_NE(tilde, std::string::npos) << cookie;
  forged[tilde - 5] = forged[tilde - 5] == 'A' ? 'B' : 'A';
  EXPECT_EQ(nginx("/", forged).status, 401u);
  std::string other_key = cookie;
  other_key.back() = other_key.back() == 'A' ? 'B' : 'A';
  EXPECT_EQ(nginx("/", other_key).status, 401u);
  EXPECT_EQ(nginx("/", cookie).status, 200u);
  // The ticket ends (idle past its session): the remembered cookie no longer admits.
  clock_->advance_s(31);
  server_->engine().run_all();
  EXPECT_EQ(nginx("/", cookie).status, 401u);
}

}  // namespace
}  // namespace anteroom::testing
