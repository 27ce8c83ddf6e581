// SIGHUP (server/main.cc): the anteroom process reopens its --access-log file by path, as
// logrotate expects after renaming it (deploy/logrotate/anteroom); lines before the signal
// stay in the renamed file, lines after go to the new one, none lost or cut; and SIGHUP never
// stops the server, with or without an access log file.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "tests/server/child_process.h"
#include "tests/server/harness.h"

namespace anteroom::testing {
namespace {
namespace fs = std::filesystem;
namespace json = boost::json;
using std::chrono::seconds;

// A directory of the test's own, removed at the end.
class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_(fs::temp_directory_path() /
              ("anteroom-rotate-" + std::to_string(getpid()) + "-" + name)) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// The anteroom process, killed at the end unless the test has seen it exit.
class Anteroom {
 public:
  explicit Anteroom(std::vector<std::string> flags) {
    std::vector<std::string> args = {ANTEROOM_BINARY,    "--listen",    "127.0.0.1:0",
                                     "--no-persistence", "--admin-key", kAdminKey,
                                     "--token-secret",   kSecret};
    args.insert(args.end(), flags.begin(), flags.end());
    child_ = spawn(args, 0, true);  // stderr too: the SIGHUP messages
    port_ = listening_port(child_.out);
  }
  ~Anteroom() {
    if (!exited_) wait_exit(child_.pid, seconds(0));  // kills it
    if (child_.out != nullptr) fclose(child_.out);
  }
  Anteroom(const Anteroom&) = delete;
  Anteroom& operator=(const Anteroom&) = delete;

  uint16_t port() const { return port_; }
  void signal(int sig) const { kill(child_.pid, sig); }
  // Reads the output until a line holding `want` (true), its end, or `timeout` (false; the
  // process is then killed, which ends the read). What was read is added to *seen.
  bool says(const std::string& want, seconds timeout, std::string* seen = nullptr) {
    return read_until(want, timeout, seen) == Read::kFound;
  }
  // SIGTERM, then the exit status (-1: not exited within 10 s, then killed) and what it
  // printed meanwhile.
  int stop(std::string* rest = nullptr) {
    signal(SIGTERM);
    if (read_until("", seconds(10), rest) == Read::kTimedOut) return -1;
    exited_ = true;
    return wait_exit(child_.pid, seconds(10));
  }

 private:
  enum class Read { kFound, kEnd, kTimedOut };
  // `want` empty: to the end of the output.
  Read read_until(const std::string& want, seconds timeout, std::string* seen) {
    auto found = std::async(std::launch::async, [&] {
      for (std::string l; !(l = line(child_.out)).empty();) {
        if (seen != nullptr) *seen += l;
        if (!want.empty() && l.find(want) != std::string::npos) return Read::kFound;
      }
      return Read::kEnd;
    });
    if (found.wait_for(timeout) == std::future_status::ready) return found.get();
    kill(child_.pid, SIGKILL);  // ends the read
    waitpid(child_.pid, nullptr, 0);
    exited_ = true;
    found.get();
    return Read::kTimedOut;
  }

  Child child_;
  uint16_t port_ = 0;
  bool exited_ = false;
};

size_t line_count(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return static_cast<size_t>(
      std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n'));
}

// The paths of the file's lines; every line must be a JSON object and the file end with a
// whole line.
std::vector<std::string> paths_in(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(all.empty() || all.back() == '\n') << p << " ends in the middle of a line";
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t end; (end = all.find('\n', start)) != std::string::npos; start = end + 1) {
    const std::string l = all.substr(start, end - start);
    boost::system::error_code ec;
    const json::value v = json::parse(l, ec);
    if (ec || !v.is_object() || !v.as_object().contains("path")) {
      ADD_FAILURE() << p << ": not an access log line: " << l;
      continue;
    }
    out.emplace_back(v.as_object().at("path").as_string());
  }
  return out;
}

// What logrotate does with deploy/logrotate/anteroom: rename the file, signal the server.
TEST(LogRotation, SighupReopensTheAccessLogFile) {
  TempDir dir("reopen");
  const fs::path log = dir.path() / "access.log", rotated = dir.path() / "access.log.1";
  Anteroom server({"--access-log", log.string()});
  ASSERT_NE(server.port(), 0);
  {
    HttpClient client(server.port());
    for (int i = 0; i < 20; ++i) ASSERT_EQ(client.request("GET", "/healthz").status, 200u);
  }
  // The lines are written every 100 ms: all 20 in the file before it is renamed.
  ASSERT_TRUE(eventually([&] { return line_count(log) == 20; }, seconds(10)));
  fs::rename(log, rotated);
  server.signal(SIGHUP);
  ASSERT_TRUE(server.says("anteroom: SIGHUP received, reopening the access log", seconds(10)));
  ASSERT_TRUE(eventually([&] { return fs::exists(log); }, seconds(10)));
  {
    HttpClient client(server.port());
    for (int i = 0; i < 30; ++i) ASSERT_EQ(client.request("GET", "/readyz").status, 200u);
  }
  ASSERT_TRUE(eventually([&] { return line_count(log) == 30; }, seconds(10)));
  EXPECT_EQ(server.stop(), 0);
  EXPECT_EQ(paths_in(rotated), std::vector<std::string>(20, "/healthz"));
  EXPECT_EQ(paths_in(log), std::vector<std::string>(30, "/readyz"));
}

// Requests keep coming while the file is rotated three times: every answered request is a
// whole line in exactly one of the four files.
TEST(LogRotation, NoLineLostOrCutWhileRequestsGoOn) {
  TempDir dir("busy");
  const fs::path log = dir.path() / "access.log";
  const auto rotated = [&](int k) { return dir.path() / ("access.log." + std::to_string(k)); };
  Anteroom server({"--access-log", log.string()});
  ASSERT_NE(server.port(), 0);
  std::atomic<size_t> answered{0};
  std::string failure;
  std::jthread client([&](const std::stop_token& stop) {  // joined however the test ends
    try {
      HttpClient c(server.port());
      while (!stop.stop_requested()) {
        if (c.request("GET", "/healthz").status != 200) failure = "not 200";
        answered.fetch_add(1);
      }
    } catch (const std::exception& e) {
      failure = e.what();
    }
  });
  constexpr int kRotations = 3;
  for (int k = 1; k <= kRotations; ++k) {
    // Lines since the last rotation first, so that each file gets some.
    ASSERT_TRUE(eventually([&] { return line_count(log) > 0; }, seconds(10)));
    fs::rename(log, rotated(k));
    server.signal(SIGHUP);
    ASSERT_TRUE(eventually([&] { return fs::exists(log); }, seconds(10)));
  }
  ASSERT_TRUE(eventually([&] { return line_count(log) > 0; }, seconds(10)));
  client.request_stop();
  client.join();
  EXPECT_EQ(failure, "");
  const auto total = [&] {
    size_t n = line_count(log);
    for (int k = 1; k <= kRotations; ++k) n += line_count(rotated(k));
    return n;
  };
  // Every answered request's line is written within a batch (100 ms) or two.
  EXPECT_TRUE(eventually([&] { return total() == answered.load(); }, seconds(10)))
      << total() << " lines, " << answered.load() << " requests answered";
  EXPECT_EQ(server.stop(), 0);
  size_t lines = paths_in(log).size();
  EXPECT_GT(lines, 0u);
  for (int k = 1; k <= kRotations; ++k) {
    const auto paths = paths_in(rotated(k));
    EXPECT_GT(paths.size(), 0u) << rotated(k);
    EXPECT_EQ(paths, std::vector<std::string>(paths.size(), "/healthz"));
    lines += paths.size();
  }
  EXPECT_EQ(lines, answered.load());  // and none more after the stop
}

// Without --access-log, SIGHUP's default action would end the process: it is taken instead,
// said, and the server goes on answering and still stops on SIGTERM with status 0.
TEST(LogRotation, SighupWithoutAnAccessLogKeepsTheServerRunning) {
  Anteroom server({});
  ASSERT_NE(server.port(), 0);
  for (int i = 0; i < 2; ++i) {
    server.signal(SIGHUP);
    ASSERT_TRUE(server.says("anteroom: SIGHUP received; there is no access log file to reopen",
                            seconds(10)));
    HttpClient client(server.port());
    EXPECT_EQ(client.request("GET", "/healthz").status, 200u);
  }
  EXPECT_EQ(server.stop(), 0);
}

// --access-log -: nothing to reopen; the lines go on to standard output.
TEST(LogRotation, SighupWithTheAccessLogOnStandardOutput) {
  Anteroom server({"--access-log", "-"});
  ASSERT_NE(server.port(), 0);
  std::string out;
  {
    HttpClient client(server.port());
    ASSERT_EQ(client.request("GET", "/healthz").status, 200u);
  }
  server.signal(SIGHUP);
  ASSERT_TRUE(server.says("there is no access log file to reopen", seconds(10), &out));
  {
    HttpClient client(server.port());
    ASSERT_EQ(client.request("GET", "/readyz").status, 200u);
  }
  std::string rest;
  EXPECT_EQ(server.stop(&rest), 0);
  out += rest;
  for (const char* path : {"/healthz", "/readyz"}) {
    const std::string want = std::string(R"("method":"GET","path":")") + path + "\"";
    const size_t at = out.find(want);
    EXPECT_NE(at, std::string::npos) << out;
    EXPECT_EQ(out.find(want, at + 1), std::string::npos) << out;
  }
}

}  // namespace
}  // namespace anteroom::testing
