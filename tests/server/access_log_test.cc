// --access-log (server/app/access_log.cc and the HTTP session): every line valid JSON with
// the request's fields, whatever bytes the path holds; the writer bounded (drops, counted,
// never blocks a request) and flushed on shutdown.
#include <unistd.h>

#include <atomic>
#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <set>
#include <stop_token>
#include <thread>

#include "server/app/access_log.h"
#include "tests/server/access_log_files.h"
#include "tests/server/harness.h"

namespace anteroom::testing {
namespace {
namespace json = boost::json;

std::string escaped(std::string_view s) {
  std::string out;
  append_json_string(s, &out);
  return out;
}

// What a JSON parser reads back from the escaped string.
std::string round_trip(std::string_view s) {
  boost::system::error_code ec;
  json::value v = json::parse(escaped(s), ec);
  EXPECT_FALSE(ec) << escaped(s);
  return ec || !v.is_string() ? std::string("(not JSON)") : std::string(v.as_string());
}

TEST(AccessLogFormat, EveryByteMakesValidJson) {
  for (int b = 0; b < 256; ++b) {
    const std::string s = std::string("a") + static_cast<char>(b) + "z";
    const std::string back = round_trip(s);
    if (b < 0x80) {
      EXPECT_EQ(back, s) << "byte " << b;  // ASCII, control bytes included, reads back as sent
    } else {
      EXPECT_EQ(back, "a\xEF\xBF\xBDz") << "byte " << b;  // a lone byte >= 0x80 is U+FFFD
    }
  }
  EXPECT_EQ(escaped("\"\\\x01\x1f\x7f\n"), R"("\"\\\u0001\u001f\u007f\u000a")");
}

TEST(AccessLogFormat, Utf8KeptAndBadSequencesReplaced) {
  const std::string good =
      "/caf\xC3\xA9/\xE2\x82\xAC/\xF0\x9F\x98\x80/\xED\x9F\xBF/\xF4\x8F\xBF\xBF";
  EXPECT_EQ(round_trip(good), good);
  EXPECT_EQ(escaped(good), "\"" + good + "\"");  // valid UTF-8 is copied, not escaped
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(round_trip("\xC0\x80"), fffd + fffd);                        // overlong NUL
  EXPECT_EQ(round_trip("\xED\xA0\x80"), fffd + fffd + fffd);             // a UTF-16 surrogate
  EXPECT_EQ(round_trip("\xF4\x90\x80\x80"), fffd + fffd + fffd + fffd);  // past U+10FFFF
  EXPECT_EQ(round_trip("x\xE2\x82"), "x" + fffd + fffd);                 // cut short at the end
  EXPECT_EQ(round_trip("\xE2\x82x"), fffd + fffd + "x");                 // cut short in the middle
}

TEST(AccessLogFormat, LineCarriesEveryField) {
  AccessRecord r;
  r.unix_us = 1'764'579'600'123'456;  // 2025-12-01T09:00:00.123456Z
  r.duration_us = 42;
  r.status = 201;
  r.route = Route::kJoin;
  r.address_size = 16;
  r.address = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  r.bytes = 321;
  r.set_request("POST", "/v1/rooms/sale/tickets?utm=x&y=\"z\"");
  std::string line;
  append_access_line(r, &line);
  EXPECT_EQ(line, R"({"time":"2025-12-01T09:00:00.123456Z","client":"2001:db8::1","method":"POST",)"
                  R"("path":"/v1/rooms/sale/tickets","status":201,"bytes":321,"duration_us":42,)"
                  R"("route":"join","room":"sale"})"
                  "\n");
  // A long path (not kept in place) and no route: no room.
  AccessRecord l;
  l.route = Route::kNotFound;
  l.set_request("GET", "/v1/rooms/sale/" + std::string(300, 'x'));
  EXPECT_EQ(l.path(), "/v1/rooms/sale/" + std::string(300, 'x'));
  line.clear();
  append_access_line(l, &line);
  json::object o = json::parse(line).as_object();
  EXPECT_EQ(o.at("client"), nullptr);
  EXPECT_FALSE(o.contains("room"));
  // Refused before routing (413 here): the path is the client's, so no room either.
  AccessRecord u;
  u.route = Route::kUnrouted;
  u.set_request("POST", "/v1/rooms/victim/tickets");
  line.clear();
  append_access_line(u, &line);
  o = json::parse(line).as_object();
  EXPECT_EQ(o.at("route"), "unrouted");
  EXPECT_FALSE(o.contains("room")) << line;
}

TEST(AccessLogWriter, FlushesOnShutdown) {
  const auto path = temp_path("flush.log");
  std::filesystem::remove(path);
  Metrics metrics;
  // The writer first wakes after an hour: only stop() can write these lines.
  auto log = AccessLog::open(path.string(), metrics, {size_t{16} << 20, std::chrono::hours(1)});
  ASSERT_TRUE(log.is_ok()) << log.status().message();
  for (int i = 0; i < 1000; ++i) {
    AccessRecord r;
    r.status = 200;
    r.route = Route::kStatus;
    r.set_request("GET", "/v1/rooms/r" + std::to_string(i));
    log.value()->record(std::move(r));
  }
  EXPECT_EQ(std::filesystem::file_size(path), 0u);  // batched, not written per request
  log.value()->stop();
  auto lines = read_lines(path);
  ASSERT_EQ(lines.size(), 1000u);
  std::set<std::string> paths;
  for (const auto& o : lines) paths.insert(std::string(o.at("path").as_string()));
  EXPECT_EQ(paths.size(), 1000u);
  EXPECT_EQ(log.value()->written(), 1000u);
  std::filesystem::remove(path);
}

// The counter of lines dropped for a reason, from /metrics.
uint64_t dropped(const Metrics& m, const char* reason) {
  auto engine = make_sharded_engine();
  const std::string text = m.render(*engine);
  const std::string key =
      std::string("anteroom_access_log_dropped_total{reason=\"") + reason + "\"} ";
  const size_t at = text.find(key);
  return at == std::string::npos ? UINT64_MAX : std::stoull(text.substr(at + key.size()));
}

TEST(AccessLogWriter, BoundedWhenTheWriterIsStuck) {
  // A pipe nobody reads yet: the writer blocks in write() once the pipe is full.
  const auto fifo = temp_path("stuck.fifo");
  const int reader = fifo_with_reader(fifo);
  ASSERT_GE(reader, 0);
  Metrics metrics;
  auto log =
      AccessLog::open(fifo.string(), metrics, {size_t{64} << 10, std::chrono::milliseconds(1)});
  ASSERT_TRUE(log.is_ok()) << log.status().message();
  constexpr int kRecords = 20'000;  // about 20 MB of lines: far past the pipe and the bound
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kRecords; ++i) {
    AccessRecord r;
    r.set_request("GET", "/" + std::string(1000, 'p'));
    log.value()->record(std::move(r));
  }
  // Never blocked: 20,000 records in far less than the writer could ever write them.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  const uint64_t lost = dropped(metrics, "queue_full");
  EXPECT_GT(lost, 0u);
  // Read everything, so the writer can finish; every record is a line or counted.
  fcntl(reader, F_SETFL, 0);
  std::string got;
  std::thread drain([&] {
    char buf[65536];
    ssize_t n;
    while ((n = ::read(reader, buf, sizeof buf)) > 0) got.append(buf, static_cast<size_t>(n));
  });
  log.value()->stop();  // closes the write end: the reader sees the end
  drain.join();
  ::close(reader);
  const auto lines = static_cast<uint64_t>(std::count(got.begin(), got.end(), '\n'));
  EXPECT_EQ(lines + lost, static_cast<uint64_t>(kRecords));
  EXPECT_EQ(dropped(metrics, "write_error"), 0u);
  std::filesystem::remove(fifo);
}

// The ticket id is the visitor's secret; an absolute-form target's authority may hold a
// password: neither reaches a line.
TEST(AccessLogFormat, NoTicketIdsNoAuthority) {
  AccessRecord r;
  r.set_request("GET", "/v1/rooms/sale/tickets/I3wFabcdefgh/events?x=1");
  EXPECT_EQ(r.path(), "/v1/rooms/sale/tickets/-/events");
  r.set_request("DELETE", "/v1/rooms/sale/tickets/I3wFabcdefgh");
  EXPECT_EQ(r.path(), "/v1/rooms/sale/tickets/-");
  r.set_request("POST", "/v1/rooms/sale/tickets");
  EXPECT_EQ(r.path(), "/v1/rooms/sale/tickets");
  r.set_request("GET", "http://user:secret@host/abs?q");
  EXPECT_EQ(r.path(), "/abs");
  r.set_request("GET", "http://user:secret@host");
  EXPECT_EQ(r.path(), "");
}

// A reader that never reads holds stop() for its grace (2 s), not for ever nor a wait per
// batch after it (that was 100 ms a batch: about 25 s for the 60,000 short lines here);
// what could not be written is counted.
TEST(AccessLogWriter, StopGivesUpOnAReaderThatNeverReads) {
  const auto fifo = temp_path("never.fifo");
  const int reader = fifo_with_reader(fifo);
  ASSERT_GE(reader, 0);
  Metrics metrics;
  auto log = AccessLog::open(fifo.string(), metrics, {size_t{16} << 20, std::chrono::hours(1)});
  ASSERT_TRUE(log.is_ok()) << log.status().message();
  for (int i = 0; i < 60'000; ++i) {  // about 235 batches, far past what the pipe holds
    AccessRecord r;
    r.set_request("GET", "/" + std::string(100, 'p'));
    log.value()->record(std::move(r));
  }
  auto stopped = std::async(std::launch::async, [&] { log.value()->stop(); });
  EXPECT_EQ(stopped.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_GT(dropped(metrics, "write_error"), 0u);
  ::close(reader);
  std::filesystem::remove(fifo);
}

TEST(AccessLogWriter, AFifoWithoutAReaderIsRefusedNotWaitedOn) {
  const auto fifo = temp_path("noreader.fifo");
  std::filesystem::remove(fifo);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  Metrics metrics;
  auto log = AccessLog::open(fifo.string(), metrics);
  ASSERT_FALSE(log.is_ok());
  EXPECT_NE(log.status().message().find("No such device or address"), std::string::npos)
      << log.status().message();
  std::filesystem::remove(fifo);
}

TEST(AccessLogWriter, OpenFailureIsAnError) {
  Metrics metrics;
  auto log = AccessLog::open("/nonexistent-dir/access.log", metrics);
  ASSERT_FALSE(log.is_ok());
  EXPECT_EQ(log.status().message(),
            "cannot open the access log /nonexistent-dir/access.log: No such file or directory");
}

// A record whose path names it: "/r<i>".
AccessRecord numbered(int i) {
  AccessRecord r;
  r.status = 200;
  r.route = Route::kStatus;
  r.set_request("GET", "/r" + std::to_string(i));
  return r;
}

// The paths of the file's lines, each line parsed (read_lines fails the test on one that is
// not JSON) and the file ending with a whole line.
std::vector<std::string> paths_in(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(all.empty() || all.back() == '\n') << p << " ends in the middle of a line";
  std::vector<std::string> out;
  for (const auto& o : read_lines(p)) out.emplace_back(o.at("path").as_string());
  return out;
}

std::vector<std::string> numbered_paths(int from, int to) {
  std::vector<std::string> out;
  for (int i = from; i < to; ++i) out.push_back("/r" + std::to_string(i));
  return out;
}

uint64_t reopen_failures(const Metrics& m) {
  auto engine = make_sharded_engine();
  const std::string text = m.render(*engine);
  const std::string key = "\nanteroom_access_log_reopen_failures_total ";  // not # HELP's
  const size_t at = text.find(key);
  return at == std::string::npos ? UINT64_MAX : std::stoull(text.substr(at + key.size()));
}

// What logrotate does: rename the file, then have the server reopen its path. What was
// queued before goes to the renamed file, what comes after to a new one (same mode).
TEST(AccessLogReopen, RenamedFileKeepsTheLinesBeforeTheNewOneTheLinesAfter) {
  const auto path = temp_path("reopen.log"), rotated = temp_path("reopen.log.1");
  std::filesystem::remove(path);
  std::filesystem::remove(rotated);
  Metrics metrics;
  // The writer first wakes after an hour: only reopen() and stop() make it write.
  auto log = AccessLog::open(path.string(), metrics, {size_t{16} << 20, std::chrono::hours(1)});
  ASSERT_TRUE(log.is_ok()) << log.status().message();
  for (int i = 0; i < 1000; ++i) log.value()->record(numbered(i));
  std::filesystem::rename(path, rotated);
  ASSERT_TRUE(log.value()->reopen());
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(path); }, std::chrono::seconds(10)));
  for (int i = 1000; i < 1500; ++i) log.value()->record(numbered(i));
  log.value()->stop();
  EXPECT_EQ(paths_in(rotated), numbered_paths(0, 1000));  // one writer thread: in order
  EXPECT_EQ(paths_in(path), numbered_paths(1000, 1500));
  EXPECT_EQ(log.value()->written(), 1500u);
  EXPECT_EQ(reopen_failures(metrics), 0u);
  EXPECT_EQ(std::filesystem::status(path).permissions(),
            std::filesystem::status(rotated).permissions());  // 0640 less the umask, both
  EXPECT_FALSE(log.value()->reopen());                        // stopped
  std::filesystem::remove(path);
  std::filesystem::remove(rotated);
}

// The path cannot be opened again (its directory is gone): the lines go on to the old file,
// the failure is counted and said once on stderr.
TEST(AccessLogReopen, FailureKeepsWritingToTheOldFile) {
  const auto dir = temp_path("reopen-dir"), moved = temp_path("reopen-dir-moved");
  std::filesystem::remove_all(dir);
  std::filesystem::remove_all(moved);
  std::filesystem::create_directory(dir);
  Metrics metrics;
  auto log = AccessLog::open((dir / "access.log").string(), metrics,
                             {size_t{16} << 20, std::chrono::hours(1)});
  ASSERT_TRUE(log.is_ok()) << log.status().message();
  for (int i = 0; i < 100; ++i) log.value()->record(numbered(i));
  std::filesystem::rename(dir, moved);
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(log.value()->reopen());
  const bool counted = eventually([&] { return reopen_failures(metrics) == 1; });
  const std::string said = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(counted);
  EXPECT_EQ(said, "anteroom: cannot reopen the access log " + (dir / "access.log").string() +
                      ": No such file or directory; still writing to the file open before\n");
  for (int i = 100; i < 150; ++i) log.value()->record(numbered(i));
  log.value()->stop();
  EXPECT_FALSE(std::filesystem::exists(dir));
  EXPECT_EQ(paths_in(moved / "access.log"), numbered_paths(0, 150));
  EXPECT_EQ(dropped(metrics, "write_error"), 0u);
  std::filesystem::remove_all(moved);
}

// Standard output and pipes are not reopened: reopen() says so and the lines go on.
TEST(AccessLogReopen, NothingForAPipeOrStandardOutput) {
  const auto fifo = temp_path("reopen.fifo");
  const int reader = fifo_with_reader(fifo);
  ASSERT_GE(reader, 0);
  Metrics metrics;
  auto log = AccessLog::open(fifo.string(), metrics, {size_t{16} << 20, std::chrono::hours(1)});
  ASSERT_TRUE(log.is_ok()) << log.status().message();
  for (int i = 0; i < 10; ++i) log.value()->record(numbered(i));
  EXPECT_FALSE(log.value()->reopen());
  for (int i = 10; i < 20; ++i) log.value()->record(numbered(i));
  log.value()->stop();  // 20 short lines: they fit in the pipe
  std::string got(1 << 16, '\0');
  const ssize_t n = ::read(reader, got.data(), got.size());
  ::close(reader);
  got.resize(n > 0 ? static_cast<size_t>(n) : 0);
  EXPECT_EQ(std::count(got.begin(), got.end(), '\n'), 20) << got;
  EXPECT_EQ(reopen_failures(metrics), 0u);
  std::filesystem::remove(fifo);

  auto out = AccessLog::open("-", metrics);
  ASSERT_TRUE(out.is_ok());
  EXPECT_FALSE(out.value()->reopen());
  out.value()->stop();
}

// Records keep coming while the file is rotated again and again: every record is a whole
// line in exactly one of the files, or counted as dropped.
TEST(AccessLogReopen, NoLineLostOrSplitUnderLoad) {
  const auto path = temp_path("busy.log");
  const auto rotated = [&](int k) { return temp_path("busy.log." + std::to_string(k)); };
  constexpr int kRotations = 5;
  std::filesystem::remove(path);
  for (int k = 1; k <= kRotations; ++k) std::filesystem::remove(rotated(k));
  Metrics metrics;
  auto log =
      AccessLog::open(path.string(), metrics, {size_t{16} << 20, std::chrono::milliseconds(1)});
  ASSERT_TRUE(log.is_ok()) << log.status().message();
  int recorded = 0;
  // Paced (some 100,000 a second) and capped, to keep the files small; joined however the
  // test ends.
  std::jthread feeder([&](const std::stop_token& stop) {
    while (!stop.stop_requested() && recorded < 2'000'000) {
      log.value()->record(numbered(recorded++));
      if (recorded % 10 == 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  });
  for (int k = 1; k <= kRotations; ++k) {
    // Lines written since the last rotation first, so each file gets some.
    EXPECT_TRUE(eventually([&] { return std::filesystem::file_size(path) > 0; }));
    std::filesystem::rename(path, rotated(k));
    ASSERT_TRUE(log.value()->reopen());
    ASSERT_TRUE(eventually([&] { return std::filesystem::exists(path); }));
  }
  EXPECT_TRUE(eventually([&] { return std::filesystem::file_size(path) > 0; }));
  feeder.request_stop();
  feeder.join();
  log.value()->stop();
  std::set<std::string> seen;
  size_t lines = 0;
  for (int k = 0; k <= kRotations; ++k) {
    const auto file = k == 0 ? path : rotated(k);
    const auto paths = paths_in(file);
    EXPECT_FALSE(paths.empty()) << file;
    lines += paths.size();
    seen.insert(paths.begin(), paths.end());
    std::filesystem::remove(file);
  }
  EXPECT_EQ(seen.size(), lines);  // none twice
  EXPECT_EQ(lines + dropped(metrics, "queue_full"), static_cast<uint64_t>(recorded));
  EXPECT_EQ(log.value()->written(), lines);
  EXPECT_EQ(dropped(metrics, "write_error"), 0u);
}

}  // namespace
}  // namespace anteroom::testing
