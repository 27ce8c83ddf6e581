// Bad and slow clients get their documented answer, and the server keeps serving others.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>
#include <vector>

#include "server/app/options.h"
#include "tests/server/harness_sockets.h"

namespace anteroom::testing {
namespace {

using Raw = RawClient;

TEST(Robustness, MalformedRequestIs400) {
  TestServer server;
  Raw raw(server.port());
  raw.send("THIS IS NOT HTTP\r\n\r\n");
  auto got = raw.until_closed(std::chrono::seconds(3));
  ASSERT_TRUE(got);
  EXPECT_EQ(got->substr(0, 12), "HTTP/1.1 400");
  EXPECT_NE(got->find("\"bad_request\""), std::string::npos);
}

// A Transfer-Encoding that does not end in chunked leaves the body's end unknown: 400 and
// close, so the bytes after it are never read as a request of their own.
TEST(Robustness, TransferEncodingNotEndingInChunkedIs400AndCloses) {
  TestServer server;
  for (const char* te : {"xchunked", "chunked, identity", "gzip"}) {
    Raw raw(server.port());
    raw.send(std::string("POST /v1/rooms/r/tickets HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: ") +
             te + "\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    auto got = raw.until_closed(std::chrono::seconds(3));
    ASSERT_TRUE(got) << te;
    EXPECT_EQ(got->substr(0, 12), "HTTP/1.1 400") << te;
    EXPECT_EQ(got->find("\"ok\":true"), std::string::npos) << "smuggled request answered: " << te;
  }
}

TEST(Robustness, OneByteASecondClientIsCutOffWhileOthersAreServed) {
  Options o = test_options();
  o.request_timeout_s = 2;
  TestServer server(o);
  Raw slow(server.port());
  const std::string req = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  std::atomic<bool> cut{false};
  std::thread trickle([&] {
    for (size_t i = 0; i < req.size() && !cut; ++i) {
      slow.send_raw(req[i]);
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  });
  // Meanwhile everyone else is served.
  HttpClient other(server.port());
  for (int i = 0; i < 20; ++i) EXPECT_EQ(other.request("GET", "/healthz").status, 200u);
  // The slow one is closed at its request timeout, long before it finishes its request.
  auto got = slow.until_closed(std::chrono::seconds(6));
  cut = true;
  trickle.join();
  ASSERT_TRUE(got) << "the slow client was never cut off";
  EXPECT_EQ(got->find("200 OK"), std::string::npos);
}

TEST(Robustness, IdleKeepAliveConnectionIsClosed) {
  Options o = test_options();
  o.idle_timeout_s = 1;
  TestServer server(o);
  Raw idle(server.port());
  idle.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  auto got = idle.until_closed(std::chrono::seconds(4));
  ASSERT_TRUE(got) << "an idle keep-alive connection was kept open";
  EXPECT_EQ(got->substr(0, 12), "HTTP/1.1 200");
}

TEST(Robustness, ConnectionsBeyondTheCapGet503) {
  Options o = test_options();
  o.max_connections = 3;
  TestServer server(o);
  std::vector<std::unique_ptr<HttpClient>> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(std::make_unique<HttpClient>(server.port()));
    ASSERT_EQ(held.back()->request("GET", "/healthz").status, 200u);
  }
  Raw extra(server.port());
  auto got = extra.until_closed(std::chrono::seconds(3));
  ASSERT_TRUE(got);
  EXPECT_EQ(got->substr(0, 12), "HTTP/1.1 503");
  EXPECT_NE(got->find("Retry-After:"), std::string::npos);
  held.pop_back();  // one leaves: a new connection is served again
  EXPECT_TRUE(eventually([&] {
    try {
      HttpClient again(server.port());
      return again.request("GET", "/healthz").status == 200u;
    } catch (const std::exception&) {
      return false;
    }
  }));
}

}  // namespace
}  // namespace anteroom::testing

namespace anteroom::testing {
namespace {

// A WebSocket client that asks and asks but never reads: its replies back up in the
// server, and past --stream-queue messages the server drops it instead of growing memory.
TEST(Robustness, SlowConsumerIsDroppedNotBuffered) {
  Options o = test_options();
  o.stream_queue_limit = 16;
  TestServer server(o);
  HttpClient c(server.port());
  c.admin("PUT", "/v1/rooms/r", R"({"capacity":0})");
  net::io_context ioc;
  websocket::stream<tcp::socket> ws(ioc);
  ws.next_layer().open(tcp::v4());
  ws.next_layer().set_option(net::socket_base::receive_buffer_size(4096));
  ws.next_layer().connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), server.port()));
  ws.handshake("127.0.0.1", "/v1/rooms/r/ws");
  ws.write(net::buffer(std::string(R"({"type":"ENTER","userId":"hoarder"})")));
  const std::string check = R"({"type":"CHECK_QUEUE_STATUS","userId":"hoarder"})";
  bool dropped = false;
  for (int i = 0; i < 20000 && !dropped; ++i) {
    beast::error_code ec;
    ws.write(net::buffer(check), ec);
    if (ec) break;  // the server closed us
    if (i % 500 == 0) {
      dropped = c.admin("GET", "/metrics").body.find("anteroom_dropped_slow_consumers_total 1") !=
                std::string::npos;
    }
  }
  EXPECT_TRUE(eventually([&] {
    return c.admin("GET", "/metrics").body.find("anteroom_dropped_slow_consumers_total 1") !=
           std::string::npos;
  }));
  EXPECT_EQ(c.request("GET", "/healthz").status, 200u);  // and everyone else is still served
}

// Found by fuzz/options_fuzz.cc: a flag or a value holding one of Boost.Program_options'
// message placeholders made its error message loop for ever, growing. Each case runs in a
// child process, so a regression fails here (after 10 s) instead of hanging the suite.
TEST(Robustness, FlagsHoldingMessagePlaceholdersAreRefusedNotLoopedOn) {
  const std::vector<std::vector<std::string>> cases = {
      {"anteroom", "--x%canonical_option%"},
      {"anteroom", "--threads", "%value%"},
      {"anteroom", "--threads=1%original_token%"},
      {"anteroom", "--threads", "abc"},  // the ordinary message still names the flag
  };
  for (const auto& args : cases) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      std::vector<std::string> copy = args;
      std::vector<char*> argv;
      for (std::string& a : copy) argv.push_back(a.data());
      argv.push_back(nullptr);
      std::string exit_now;
      auto r = parse_options(static_cast<int>(copy.size()), argv.data(), &exit_now);
      const bool names_threads = args[1].find("threads") != std::string::npos;
      const bool refused =
          !r.is_ok() && r.code() == Code::kInvalidArgument &&
          (r.status().message().find("threads") != std::string::npos) == names_threads;
      _exit(refused ? 0 : 1);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    int status = 0;
    pid_t done = 0;
    while ((done = waitpid(pid, &status, WNOHANG)) == 0 &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // polling a bounded wait
    }
    if (done == 0) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
    }
    EXPECT_NE(done, 0) << args[1] << ": parse_options did not return within 10 s";
    EXPECT_TRUE(done != 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) << args[1];
  }
}

}  // namespace
}  // namespace anteroom::testing
