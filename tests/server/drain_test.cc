// SIGTERM drains (server/main.cc, docs/server.md "Stopping"): /readyz answers 503 at once
// while everything else is still served, each answer closing its connection; a held stream
// goes on until the listener closes a margin before the end, then it is told to reconnect
// and closed; the process exits 0 within --drain-seconds. SIGINT, and a second SIGTERM,
// stop at once. The real executable, on 127.0.0.1.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>

#include <chrono>
#include <regex>

#include "tests/server/child_process.h"
#include "tests/server/harness.h"

namespace anteroom::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

struct Started {
  Child child;
  uint16_t port = 0;
};

// A server with a demo room (manual admission: positions stand still), draining `drain` s.
Started start(const std::string& drain) {
  Started s;
  s.child = spawn({ANTEROOM_BINARY, "--listen", "127.0.0.1:0", "--no-persistence", "--admin-key",
                   kAdminKey, "--token-secret", kSecret, "--demo-room", "demo", "--room-admission",
                   "manual", "--drain-seconds", drain, "--threads", "1"});
  std::smatch m;
  const std::string first = line(s.child.out);
  if (std::regex_search(first, m, std::regex("http://127\\.0\\.0\\.1:(\\d+)"))) {
    s.port = static_cast<uint16_t>(std::stoi(m[1]));
  }
  return s;
}

unsigned ready(uint16_t port) { return HttpClient(port).request("GET", "/readyz").status; }

TEST(Drain, SigtermTakesTheNodeOutThenClosesStreamsAndExitsWithinTheDrain) {
  Started s = start("2");  // the margin is a quarter: the listener closes 1.5 s in
  ASSERT_NE(s.port, 0u);
  HttpClient client(s.port);
  const Reply joined = client.request("POST", "/v1/rooms/demo/tickets");
  ASSERT_EQ(joined.status, 201u);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(joined.body, m, std::regex("\"ticket\":\"([^\"]+)\"")));
  const std::string id = m[1];
  SseClient stream(s.port, "/v1/rooms/demo/tickets/" + id + "/events");
  ASSERT_EQ(stream.status(), 200u);
  ASSERT_TRUE(stream.next().has_value());
  EXPECT_EQ(ready(s.port), 200u);

  const auto told = steady_clock::now();
  kill(s.child.pid, SIGTERM);
  unsigned readyz = 200;
  for (int i = 0; i < 200 && readyz == 200; ++i) {  // the signal is taken by another thread
    readyz = ready(s.port);
    if (readyz == 200) std::this_thread::sleep_for(milliseconds(5));
  }
  EXPECT_EQ(readyz, 503u);
  // Still served, and the answer closes its connection so the next request is balanced anew.
  EXPECT_EQ(HttpClient(s.port).request("GET", "/healthz").status, 200u);
  const Reply during = HttpClient(s.port).request("POST", "/v1/rooms/demo/tickets");
  EXPECT_EQ(during.status, 201u);
  EXPECT_EQ(during.header("connection"), "close");

  // The stream is held through the drain and ends once the listener closed: nothing comes
  // before (the place does not change), and the end is not the 6 s wait running out.
  EXPECT_FALSE(stream.next(milliseconds(6000)).has_value());  // 6 s: see the bound below
  const auto ended = steady_clock::now() - told;
  EXPECT_GE(ended, milliseconds(1400));
  EXPECT_LT(ended, milliseconds(5900));
  EXPECT_EQ(wait_exit(s.child.pid, std::chrono::seconds(10)), 0);
  // Within the drain (2 s), with room for a busy machine's (and a sanitizer's) scheduling.
  EXPECT_LT(steady_clock::now() - told, milliseconds(2000 + 5000));
}

TEST(Drain, ASecondSigtermStopsAtOnce) {
  Started s = start("60");
  ASSERT_NE(s.port, 0u);
  kill(s.child.pid, SIGTERM);
  for (int i = 0; i < 200 && ready(s.port) == 200; ++i)
    std::this_thread::sleep_for(milliseconds(5));
  ASSERT_EQ(ready(s.port), 503u);
  kill(s.child.pid, SIGTERM);
  EXPECT_EQ(wait_exit(s.child.pid, std::chrono::seconds(10)), 0);  // not after 60 s
}

// `anteroom health` (the container's health check, server/transport/health_probe.h) says 0
// while /readyz is 200 and 1 once the drain began, and 1 when nothing answers.
int health(const std::vector<std::string>& args, std::string* said) {
  std::vector<std::string> all = {ANTEROOM_BINARY, "health"};
  all.insert(all.end(), args.begin(), args.end());
  Child c = spawn(all);
  *said = all_output(c.out);
  return wait_exit(c.pid, std::chrono::seconds(10));
}

TEST(Drain, TheHealthCommandFollowsReadiness) {
  Started s = start("60");
  ASSERT_NE(s.port, 0u);
  const std::string at = "127.0.0.1:" + std::to_string(s.port);
  std::string said;
  EXPECT_EQ(health({at}, &said), 0);
  EXPECT_EQ(said, "200 OK\n");
  EXPECT_EQ(health({at, "/healthz"}, &said), 0);
  kill(s.child.pid, SIGTERM);
  for (int i = 0; i < 200 && ready(s.port) == 200; ++i)
    std::this_thread::sleep_for(milliseconds(5));
  EXPECT_EQ(health({at}, &said), 1);
  EXPECT_EQ(said, "503 Service Unavailable\n");
  EXPECT_EQ(health({at, "/healthz"}, &said), 0);  // alive, only not ready
  kill(s.child.pid, SIGINT);
  EXPECT_EQ(wait_exit(s.child.pid, std::chrono::seconds(10)), 0);
  EXPECT_EQ(health({at}, &said), 1);  // nothing listens
  EXPECT_EQ(said.rfind("no answer from " + at, 0), 0u) << said;
  EXPECT_EQ(health({"nonsense"}, &said), 2);
  EXPECT_EQ(health({at, "readyz"}, &said), 2);
}

// A server whose kernel accepts the connection but which never answers: the check gives up
// after its 3 s instead of hanging (a blocking read would ignore the stream's timer).
TEST(Drain, TheHealthCommandGivesUpOnAServerThatNeverAnswers) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(fd, 8), 0);  // never accepted: the kernel completes the handshake alone
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  const std::string at = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  std::string said;
  const auto started = steady_clock::now();
  EXPECT_EQ(health({at}, &said), 1);
  EXPECT_EQ(said.rfind("no answer from " + at, 0), 0u) << said;
  EXPECT_LT(steady_clock::now() - started, milliseconds(9000));
  close(fd);
}

TEST(Drain, SigintStopsAtOnce) {
  Started s = start("60");
  ASSERT_NE(s.port, 0u);
  EXPECT_EQ(ready(s.port), 200u);
  kill(s.child.pid, SIGINT);
  EXPECT_EQ(wait_exit(s.child.pid, std::chrono::seconds(10)), 0);
}

}  // namespace
}  // namespace anteroom::testing
