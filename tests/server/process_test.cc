// The anteroom executable itself: --help documents every flag, --listen with port 0 prints
// the bound port first, secrets are created once (mode 0600) and kept, and SIGTERM shuts
// down gracefully with exit status 0.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

#include "tests/server/child_process.h"
#include "tests/server/harness.h"

namespace anteroom::testing {
namespace {

TEST(Process, HelpDocumentsEveryFlag) {
  Child c = spawn({ANTEROOM_BINARY, "--help"});
  std::string all, l;
  while (!(l = line(c.out)).empty()) all += l;
  EXPECT_EQ(wait_exit(c.pid, std::chrono::seconds(5)), 0);
  for (const char* flag : {"--listen",           "--threads",          "--data-dir",
                           "--appendfsync",      "--no-persistence",   "--snapshot-after",
                           "--admin-key",        "--token-secret",     "--max-connections",
                           "--header-limit",     "--body-limit",       "--idle-timeout",
                           "--request-timeout",  "--push-interval",    "--stream-keepalive",
                           "--stream-queue",     "--owner-tick",       "--demo-room",
                           "--room-capacity",    "--room-admission",   "--room-admit-per-second",
                           "--room-allowed-ttl", "--room-session-ttl", "--room-heartbeat-timeout",
                           "--room-max-waiting"}) {
    EXPECT_NE(all.find(flag), std::string::npos) << flag;
  }
}

TEST(Process, BadFlagIsAClearErrorWithStatus2) {
  Child c = spawn({ANTEROOM_BINARY, "--listen", "nonsense"});
  EXPECT_EQ(wait_exit(c.pid, std::chrono::seconds(5)), 2);
}

TEST(Process, PortZeroSecretsAndGracefulSigterm) {
  auto dir = std::filesystem::temp_directory_path() / ("anteroom-proc-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  for (int run = 0; run < 2; ++run) {
    Child c = spawn({ANTEROOM_BINARY, "--listen", "127.0.0.1:0", "--data-dir", dir.string(),
                     "--no-persistence", "--demo-room", "demo"});
    std::smatch m;
    std::string first = line(c.out);
    ASSERT_TRUE(std::regex_search(
        first, m, std::regex("^anteroom listening on http://127\\.0\\.0\\.1:(\\d+)\n$")))
        << first;
    uint16_t port = static_cast<uint16_t>(std::stoi(m[1]));
    std::string key_line = line(c.out);
    std::ifstream key_file(dir / "admin-key");
    std::string key;
    key_file >> key;
    EXPECT_EQ(key_line, "admin key: " + key + "\n");  // printed, and the same on both runs
    struct stat st {};
    ASSERT_EQ(stat((dir / "token-secret").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    {
      HttpClient client(port);
      EXPECT_EQ(client.request("GET", "/healthz").status, 200u);
      EXPECT_EQ(client.request("POST", "/v1/rooms/demo/tickets").status, 201u);
      EXPECT_EQ(
          client.request("GET", "/v1/rooms/demo", "", {{"Authorization", "Bearer " + key}}).status,
          200u);
    }
    kill(c.pid, SIGTERM);
    EXPECT_EQ(wait_exit(c.pid, std::chrono::seconds(10)), 0);
    fclose(c.out);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace anteroom::testing

namespace anteroom::testing {
namespace {

// `anteroom check-log [--fix] DIR`: finds damage in the middle of the log, cuts it with
// --fix, and then the server starts on what is left.
TEST(Process, CheckLogFindsAndFixesDamage) {
  auto dir =
      std::filesystem::temp_directory_path() / ("anteroom-checklog-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  Child s = spawn({ANTEROOM_BINARY, "--listen", "127.0.0.1:0", "--data-dir", dir.string(),
                   "--appendfsync", "always", "--admin-key", kAdminKey, "--token-secret", kSecret});
  uint16_t port = listening_port(s.out);
  ASSERT_NE(port, 0);
  {
    HttpClient c(port);
    c.admin("PUT", "/v1/rooms/r", R"({"capacity":0,"admission":"manual"})");
    for (int i = 0; i < 50; ++i) c.request("POST", "/v1/rooms/r/tickets");
  }
  kill(s.pid, SIGTERM);
  ASSERT_EQ(wait_exit(s.pid, std::chrono::seconds(10)), 0);
  fclose(s.out);
  Child clean = spawn({ANTEROOM_BINARY, "check-log", dir.string()});
  EXPECT_EQ(wait_exit(clean.pid, std::chrono::seconds(10)), 0);
  // Damage a byte in the middle.
  const auto log = dir / "anteroom.log";
  const auto size = std::filesystem::file_size(log);
  {
    std::fstream f(log, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2));
    f.put('\x7f');
  }
  Child refused = spawn({ANTEROOM_BINARY, "--listen", "127.0.0.1:0", "--data-dir", dir.string(),
                         "--admin-key", kAdminKey, "--token-secret", kSecret});
  EXPECT_EQ(wait_exit(refused.pid, std::chrono::seconds(10)), 1);  // start-up stops
  Child check = spawn({ANTEROOM_BINARY, "check-log", dir.string()});
  std::string report, l;
  while (!(l = line(check.out)).empty()) report += l;
  EXPECT_EQ(wait_exit(check.pid, std::chrono::seconds(10)), 1);
  EXPECT_NE(report.find("offset"), std::string::npos) << report;
  Child fix = spawn({ANTEROOM_BINARY, "check-log", "--fix", dir.string()});
  EXPECT_EQ(wait_exit(fix.pid, std::chrono::seconds(10)), 0);
  EXPECT_LT(std::filesystem::file_size(log), size);
  Child again = spawn({ANTEROOM_BINARY, "--listen", "127.0.0.1:0", "--data-dir", dir.string(),
                       "--admin-key", kAdminKey, "--token-secret", kSecret});
  EXPECT_NE(listening_port(again.out), 0);  // starts on what is left
  kill(again.pid, SIGTERM);
  EXPECT_EQ(wait_exit(again.pid, std::chrono::seconds(10)), 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace anteroom::testing
