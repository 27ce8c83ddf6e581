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

// A temporary path of this process's, with nothing at it yet.
std::filesystem::path fresh_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("anteroom-" + name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  return dir;
}

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
                           "--room-max-waiting", "--config",           "--access-log"}) {
    EXPECT_NE(all.find(flag), std::string::npos) << flag;
  }
}

TEST(Process, BadFlagIsAClearErrorWithStatus2) {
  Child c = spawn({ANTEROOM_BINARY, "--listen", "nonsense"});
  EXPECT_EQ(wait_exit(c.pid, std::chrono::seconds(5)), 2);
}

TEST(Process, PortZeroSecretsAndGracefulSigterm) {
  const auto dir = fresh_dir("proc");
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

// Started with standard output closed, the log must not become standard output (the line
// "anteroom listening on ..." and access log lines written into it broke the next start).
TEST(Process, ClosedStandardOutputNeverLandsInTheLog) {
  const auto dir = fresh_dir("closedout");
  const pid_t pid = fork();
  if (pid == 0) {
    close(1);
    execl(ANTEROOM_BINARY, ANTEROOM_BINARY, "--listen", "127.0.0.1:0", "--data-dir", dir.c_str(),
          "--access-log", "-", "--admin-key", kAdminKey, "--token-secret", kSecret,
          "--drain-seconds", "0", static_cast<char*>(nullptr));
    _exit(127);
  }
  const auto log = dir / "anteroom.log";
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(log); }, std::chrono::seconds(10)));
  kill(pid, SIGTERM);  // taken once start-up is over: the listening line is printed by then
  ASSERT_EQ(wait_exit(pid, std::chrono::seconds(10)), 0);
  std::ifstream in(log, std::ios::binary);
  std::string head(8, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  EXPECT_NE(head, "anteroom");
  Child check = spawn({ANTEROOM_BINARY, "check-log", dir.string()});
  const std::string report = all_output(check.out);
  EXPECT_EQ(wait_exit(check.pid, std::chrono::seconds(10)), 0) << report;
  std::filesystem::remove_all(dir);
}

// check-log only reads: Ctrl-C must end it (the server's blocked stop signals held it on a
// log that never ends, here a FIFO whose writer never writes).
TEST(Process, CheckLogEndsOnCtrlC) {
  const auto dir = fresh_dir("checkint");
  std::filesystem::create_directories(dir);
  const auto fifo = dir / "anteroom.log";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  Child check = spawn({ANTEROOM_BINARY, "check-log", dir.string()});
  // Opening a FIFO nobody writes blocks: wait until check-log is in that openat (system call
  // 257 in /proc/PID/syscall), well past start-up, then press Ctrl-C.
  const std::string syscall = "/proc/" + std::to_string(check.pid) + "/syscall";
  ASSERT_TRUE(eventually(
      [&] {
        std::ifstream in(syscall);
        std::string number;
        return static_cast<bool>(in >> number) && number == "257";
      },
      std::chrono::seconds(10)));
  kill(check.pid, SIGINT);
  EXPECT_EQ(wait_exit(check.pid, std::chrono::seconds(10)), -2) << "not ended by the signal";
  fclose(check.out);
  std::filesystem::remove_all(dir);
}

// `anteroom check-log [--fix] DIR`: finds damage in the middle of the log, cuts it with
// --fix, and then the server starts on what is left.
TEST(Process, CheckLogFindsAndFixesDamage) {
  const auto dir = fresh_dir("checklog");
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

// --config: a room declared in the file exists from the start, and at each start is brought
// back to the file's settings (the ones the file names; the rest stay as they were put).
TEST(Process, ConfigFileDeclaresRooms) {
  const auto dir = fresh_dir("conf");
  std::filesystem::create_directories(dir);
  const std::string conf = (dir / "anteroom.conf").string();
  std::ofstream(conf) << "# written by the test\n"
                      << "listen = 127.0.0.1:0\n"
                      << "data-dir = " << (dir / "data").string() << "\n"
                      << "admin-key = " << kAdminKey << "\n"
                      << "token-secret = " << kSecret << "\n"
                      << "appendfsync = always\n"
                      << "[room sale]\n"
                      << "capacity = 7\n"
                      << "admission = manual\n";
  for (int run = 0; run < 2; ++run) {
    Child c = spawn({ANTEROOM_BINARY, "--config", conf});
    const uint16_t port = listening_port(c.out);
    ASSERT_NE(port, 0);
    {
      HttpClient client(port);
      Reply room = client.admin("GET", "/v1/rooms/sale");
      ASSERT_EQ(room.status, 200u) << room.body;
      EXPECT_EQ(json_field(room.body, "capacity"), "7");  // the file's, again on the second run
      EXPECT_EQ(json_field(room.body, "admission"), "manual");
      if (run == 0) {
        EXPECT_EQ(json_field(room.body, "max_waiting"), "1000000");
        ASSERT_EQ(
            client.admin("PUT", "/v1/rooms/sale", R"({"capacity":9,"max_waiting":123})").status,
            200u);
        ASSERT_EQ(client.request("POST", "/v1/rooms/sale/tickets").status, 201u);
      } else {
        EXPECT_EQ(json_field(room.body, "max_waiting"), "123");  // not in the file: as put
        EXPECT_EQ(json_field(room.body, "waiting"), "1");        // the room kept its line
      }
    }
    kill(c.pid, SIGTERM);
    EXPECT_EQ(wait_exit(c.pid, std::chrono::seconds(10)), 0);
    fclose(c.out);
  }
  std::filesystem::remove_all(dir);
}

// A bad file stops start-up with the file and the line, status 2, nothing listening.
TEST(Process, BadConfigFileStopsStartUp) {
  const auto dir = fresh_dir("badconf");
  std::filesystem::create_directories(dir);
  const std::string conf = (dir / "anteroom.conf").string();
  std::ofstream(conf)
      << "listen = 127.0.0.1:0\nno-persistence = true\n\n[room sale]\ncapacty = 5\n";
  Child c = spawn({ANTEROOM_BINARY, "--config", conf}, 0, true);
  const std::string out = all_output(c.out);
  EXPECT_EQ(wait_exit(c.pid, std::chrono::seconds(5)), 2);
  EXPECT_EQ(out, "anteroom: " + conf + ":5: room sale: unknown field 'capacty' (see --help)\n");
  fclose(c.out);
  std::filesystem::remove_all(dir);
}

// --access-log -: the lines go to standard output, after the start-up lines, and the last
// ones are written before the process exits on SIGTERM.
TEST(Process, AccessLogToStandardOutput) {
  Child c = spawn({ANTEROOM_BINARY, "--listen", "127.0.0.1:0", "--no-persistence", "--admin-key",
                   kAdminKey, "--token-secret", kSecret, "--access-log", "-"});
  const uint16_t port = listening_port(c.out);
  ASSERT_NE(port, 0);
  {
    HttpClient client(port);
    for (int i = 0; i < 3; ++i) ASSERT_EQ(client.request("GET", "/healthz?n=1").status, 200u);
  }
  kill(c.pid, SIGTERM);
  const std::string rest = all_output(c.out);
  EXPECT_EQ(wait_exit(c.pid, std::chrono::seconds(10)), 0);
  fclose(c.out);
  int lines = 0;
  for (size_t at = 0; (at = rest.find("{\"time\":", at)) != std::string::npos; ++at) {
    const std::string line = rest.substr(at, rest.find('\n', at) - at);
    EXPECT_NE(line.find(R"("method":"GET","path":"/healthz","status":200)"), std::string::npos)
        << line;
    ++lines;
  }
  EXPECT_EQ(lines, 3) << rest;
}

}  // namespace
}  // namespace anteroom::testing
