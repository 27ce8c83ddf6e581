// Findings of the security review about exhaustion: running out of descriptors, one client
// taking every connection, streams keeping a ticket alive without its visitor, and weak
// secrets. Through the real server (and the real binary where the finding needs a process).
#include <boost/json.hpp>
#include <thread>

#include "tests/server/child_process.h"
#include "tests/server/harness.h"

namespace anteroom::testing {
namespace {

std::string field(const std::string& body, const char* name) { return json_field(body, name); }

// Finding 4: with 64 descriptors and 80 idle connections the accept loop spun at 100% CPU
// and new connections hung. Now the connection limit sits under the descriptor limit, what
// is over it is answered 503, and accepting backs off if descriptors still run out.
TEST(Limits, OutOfDescriptorsTheServerAnswersAndDoesNotSpin) {
  Child s = spawn({ANTEROOM_BINARY, "--listen", "127.0.0.1:0", "--no-persistence", "--threads", "1",
                   "--admin-key", kAdminKey, "--token-secret", kSecret},
                  /*max_files=*/64);
  uint16_t port = listening_port(s.out);
  ASSERT_NE(port, 0);
  std::vector<std::unique_ptr<RawClient>> idle;
  for (int i = 0; i < 80; ++i) idle.push_back(std::make_unique<RawClient>(port));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // let it accept what it can
  const double before = cpu_seconds(s.pid);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const double used = cpu_seconds(s.pid) - before;
  EXPECT_LT(used, 0.3) << "the server used " << used << " s of CPU in 1 s with idle connections";
  // One more connection gets an answer (503, the limit), not silence.
  RawClient late(port);
  late.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  auto answer = late.until_closed(std::chrono::seconds(3));
  ASSERT_TRUE(answer) << "a new connection hung";
  EXPECT_EQ(answer->substr(0, 12), "HTTP/1.1 503") << *answer;
  idle.clear();
  kill(s.pid, SIGTERM);
  EXPECT_EQ(wait_exit(s.pid, std::chrono::seconds(10)), 0);
}

// Finding 5: one address could take every connection, the operator's included.
TEST(Limits, OneAddressCannotTakeEveryConnection) {
  Options o = test_options();
  o.max_connections = 60;
  o.operator_reserve = 10;
  o.max_connections_per_address = 40;
  TestServer server(o);
  std::vector<std::unique_ptr<RawClient>> flood;
  for (int i = 0; i < 45; ++i) flood.push_back(std::make_unique<RawClient>(server.port()));
  // From the 41st on, connections from this address were refused at once; the first 40 stay
  // open and are served. (The last are read first: closing the first would make room.)
  for (size_t i = flood.size(); i-- > 0;) {
    flood[i]->send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    auto got = flood[i]->until_closed(std::chrono::seconds(3));
    ASSERT_TRUE(got);
    EXPECT_EQ(got->substr(0, 12), i < 40 ? "HTTP/1.1 200" : "HTTP/1.1 503") << "connection " << i;
  }
}

// Behind nginx every visitor comes from the proxy's address: a trusted proxy is not held
// to the per-address limit (the review found the limit then held the whole site).
TEST(Limits, ATrustedProxyIsNotOneAddress) {
  Options o = test_options();
  o.max_connections_per_address = 5;
  o.trusted_proxies = {"127.0.0.0/8"};
  TestServer server(o);
  std::vector<std::unique_ptr<RawClient>> many;
  for (int i = 0; i < 20; ++i) many.push_back(std::make_unique<RawClient>(server.port()));
  for (size_t i = many.size(); i-- > 0;) {
    many[i]->send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    auto got = many[i]->until_closed(std::chrono::seconds(3));
    ASSERT_TRUE(got);
    EXPECT_EQ(got->substr(0, 12), "HTTP/1.1 200") << "connection " << i;
  }
}

TEST(Limits, TheOperatorReserveAnswersHealthMetricsAndOperators) {
  Options o = test_options();
  o.max_connections = 30;
  o.operator_reserve = 10;
  TestServer server(o);
  HttpClient admin(server.port());
  admin.admin("PUT", "/v1/rooms/r", "{}");
  std::vector<std::unique_ptr<RawClient>> idle;  // 22 open: over the 20 ordinary ones
  for (int i = 0; i < 21; ++i) idle.push_back(std::make_unique<RawClient>(server.port()));
  ASSERT_TRUE(eventually([&] {
    return server.server().engine().room_info("r").is_ok();  // the server is up and serving
  }));
  // Each connection in the reserve gets one answer, then is closed: a new one per request.
  auto once = [&](const std::string& method, const std::string& path, bool as_admin) {
    HttpClient c(server.port());
    return as_admin ? c.admin(method, path) : c.request(method, path);
  };
  EXPECT_EQ(once("GET", "/healthz", false).status, 200u);
  EXPECT_EQ(once("GET", "/metrics", true).status, 200u);
  EXPECT_EQ(once("GET", "/v1/rooms/r", true).status, 200u);
  // The dashboard's page (no key: it asks for one) opens in a flood too.
  EXPECT_EQ(once("GET", "/admin", false).status, 200u);
  EXPECT_EQ(once("GET", "/wait/r", false).status, 503u);
  Reply visitor = once("POST", "/v1/rooms/r/tickets", false);
  EXPECT_EQ(visitor.status, 503u);
  EXPECT_NE(visitor.body.find("overloaded"), std::string::npos) << visitor.body;
  // An idle connection cannot sit in the reserve: it is closed within seconds.
  RawClient squatter(server.port());
  auto closed = squatter.until_closed(std::chrono::seconds(5));
  EXPECT_TRUE(closed) << "an idle connection held a place of the reserve";
  idle.clear();
  EXPECT_TRUE(
      eventually([&] { return once("POST", "/v1/rooms/r/tickets", false).status == 201u; }));
}

TEST(Limits, ATicketHasAtMostSoManyStreams) {
  Options o = test_options();
  o.max_streams_per_ticket = 3;
  TestServer server(o);
  HttpClient c(server.port());
  c.admin("PUT", "/v1/rooms/r", R"({"capacity":0,"admission":"manual"})");
  const std::string t = field(c.request("POST", "/v1/rooms/r/tickets").body, "ticket");
  std::vector<std::unique_ptr<SseClient>> streams;
  for (int i = 0; i < 3; ++i) {
    streams.push_back(
        std::make_unique<SseClient>(server.port(), "/v1/rooms/r/tickets/" + t + "/events"));
    ASSERT_EQ(streams.back()->status(), 200u);
    ASSERT_TRUE(streams.back()->next());  // attached
  }
  Reply fourth = c.request("GET", "/v1/rooms/r/tickets/" + t + "/events");
  EXPECT_EQ(fourth.status, 429u);
  EXPECT_NE(fourth.body.find("too_many_streams"), std::string::npos);
}

// An open stream alone no longer keeps a waiting ticket alive forever: past
// --stream-heartbeat-limit without the visitor, the ticket is abandoned like any other.
TEST(Limits, AStreamAloneStopsCountingAsTheVisitor) {
  auto clock = std::make_shared<ManualClock>();
  Options o = test_options();
  o.stream_keepalive_s = 1;
  o.stream_heartbeat_limit_s = 60;
  TestServer server(o, engine_on(clock));
  HttpClient c(server.port());
  c.admin("PUT", "/v1/rooms/r",
          R"({"capacity":0,"admission":"manual","heartbeat_timeout_seconds":30})");
  const std::string t = field(c.request("POST", "/v1/rooms/r/tickets").body, "ticket");
  SseClient stream(server.port(), "/v1/rooms/r/tickets/" + t + "/events");
  ASSERT_TRUE(stream.next());
  // 20 s at a time (under the 30 s timeout), each step followed by one of the stream's
  // keep-alive frames (a heartbeat while the stream is younger than 60 s).
  bool expired = false;
  int seconds = 0;
  while (!expired && seconds < 300) {
    clock->advance_s(20);
    seconds += 20;
    auto frame = stream.next(std::chrono::seconds(5));
    if (!frame) break;  // the stream ended
    expired = field(*frame, "status") == "EXPIRED";
    if (seconds <= 40) {
      ASSERT_FALSE(expired) << "expired while the stream still counted";
    }
  }
  EXPECT_TRUE(expired) << "the stream kept an abandoned ticket alive for " << seconds << " s";
}

// Finding 6: weak secrets were accepted.
TEST(Limits, WeakSecretsStopStartUp) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
    std::string why = "at least";
  };
  for (const Case& k :
       {Case{{"--token-secret", "a", "--admin-key", kAdminKey}, "--token-secret"},
        Case{{"--token-secret", kSecret, "--admin-key", " "}, "--admin-key"},
        Case{{"--token-secret", kSecret, "--admin-key", "short-key"}, "--admin-key"},
        Case{{"--token-secret", std::string(40, ' '), "--admin-key", kAdminKey}, "--token-secret"},
        Case{{"--token-secret", kSecret, "--admin-key", kAdminKey, "--user-secret", "x"},
             "--user-secret"},
        // A key with white space around it (a quoted config value, a variable with a
        // newline) could never match: every operator request would be 401.
        Case{{"--token-secret", kSecret, "--admin-key", std::string(kAdminKey) + " "},
             "--admin-key",
             "white space"},
        Case{{"--token-secret", kSecret, "--admin-key", std::string(kAdminKey) + "\n"},
             "--admin-key",
             "white space"}}) {
    std::vector<std::string> args = {ANTEROOM_BINARY, "--listen", "127.0.0.1:0",
                                     "--no-persistence"};
    args.insert(args.end(), k.args.begin(), k.args.end());
    Child s = spawn(args, 0, /*merge_stderr=*/true);
    const std::string out = all_output(s.out);
    EXPECT_NE(wait_exit(s.pid, std::chrono::seconds(10)), 0) << out;  // 1 start-up, 2 flags
    EXPECT_NE(out.find(k.says), std::string::npos) << out;
    EXPECT_NE(out.find(k.why), std::string::npos) << out;
  }
}

}  // namespace
}  // namespace anteroom::testing
