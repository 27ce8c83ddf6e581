// --access-log (docs/server.md "Access log"): one JSON line per request.
//
// A request costs a record handed to a lock-free queue (moodycamel::ConcurrentQueue); a
// thread of the log's own formats the lines and writes them in batches. Records waiting
// are bounded in bytes: past the bound a record is dropped and counted
// (anteroom_access_log_dropped_total), so a slow disk or a full pipe never holds a request.
// stop() writes everything still queued. reopen() (SIGHUP, server/main.cc) has the writer
// close the file and open its path again, for log rotation.
//
// Thread safety: record() from any thread; reopen() from any but a signal handler; stop()
// once, from one.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "engine/status.h"
#include "server/app/metrics.h"

namespace anteroom {

// What one line says about one request.
class AccessRecord {
 public:
  int64_t unix_us = 0;       // when the answer was written
  uint32_t duration_us = 0;  // from the whole request read to its answer written
  uint16_t status = 0;
  Route route = Route::kNotFound;
  uint8_t address_size = 0;  // 4 (IPv4), 16 (IPv6) or 0 (unknown)
  std::array<uint8_t, 16> address{};
  uint64_t bytes = 0;  // of the answer: head and body

  // The method and the path (anything after a '?' is cut off here).
  void set_request(std::string_view method, std::string_view target);
  std::string_view method() const { return text().substr(0, method_size_); }
  std::string_view path() const { return text().substr(method_size_); }
  // What the record holds in memory, for the bound on the queue.
  size_t cost() const { return sizeof(AccessRecord) + long_.capacity(); }

 private:
  std::string_view text() const {
    return long_.empty() ? std::string_view(short_.data(), short_size_) : std::string_view(long_);
  }
  // Method and path together, in place when short (no allocation for most requests).
  std::array<char, 96> short_{};
  uint8_t short_size_ = 0;
  uint16_t method_size_ = 0;
  std::string long_;
};

// Appends the record's JSON line (with its newline) to *out. Strings are escaped here
// rather than by Boost.JSON's serializer, which copies bytes that are not UTF-8 as they are:
// a path may hold anything, and every line must stay valid JSON (bad bytes become U+FFFD).
void append_access_line(const AccessRecord& r, std::string* out);
// Appends `s` as a JSON string literal (with its quotes).
void append_json_string(std::string_view s, std::string* out);

class AccessLog {
 public:
  struct Limits {
    size_t max_queued_bytes = size_t{16} << 20;  // records waiting, by AccessRecord::cost
    // The writer wakes this often, writes what came, and sleeps again.
    std::chrono::milliseconds interval{100};
  };
  // Opens `path` for appending (created mode 0640), "-" for standard output.
  static Result<std::unique_ptr<AccessLog>> open(const std::string& path, Metrics& metrics,
                                                 Limits limits);
  static Result<std::unique_ptr<AccessLog>> open(const std::string& path, Metrics& metrics) {
    return open(path, metrics, Limits{});
  }
  ~AccessLog();
  AccessLog(const AccessLog&) = delete;
  AccessLog& operator=(const AccessLog&) = delete;

  // Queues the record, or drops it (counted) when the queue is at its bound. Never blocks.
  void record(AccessRecord&& r);
  // Asks the writer to open the log's path again (after logrotate renamed the file) and
  // returns at once. The writer first writes everything queued to the old file, so no line
  // is split between the two; if opening fails it keeps the old file, counts
  // anteroom_access_log_reopen_failures_total and says so on stderr. False, doing nothing,
  // for standard output, a pipe or anything else that was not a regular file at open(), and
  // once stopped.
  bool reopen();
  // Writes what is queued, stops the writer, closes the file. Idempotent.
  void stop();
  uint64_t written() const { return written_.load(std::memory_order_relaxed); }

 private:
  struct Queue;
  AccessLog(int fd, std::string path, Metrics& metrics, Limits limits);
  void run();
  // The writer's side of reopen(), between batches.
  void reopen_file();
  // Takes a batch of queued records into *out (`lines` of them there), writing it out when
  // large or when nothing more was queued; false once nothing was.
  bool drain(std::vector<AccessRecord>* batch, std::string* out, uint64_t* lines);
  void write_out(std::string* out, uint64_t lines);
  // Waits until a page can be written without blocking; false on an error, or once stop()'s
  // grace has passed.
  bool writable() const;

  // How long stop() waits for a pipe or terminal nobody reads before dropping what is left.
  static constexpr std::chrono::seconds kStopGrace{2};

  const std::string path_;  // empty for standard output (not owned: never closed)
  // The writer's (set before it starts; stop() closes it after the writer has ended).
  int fd_;
  bool regular_;           // the writer's: fd_ is a regular file (else a pipe, a terminal...)
  const bool reopenable_;  // opened by path and a regular file then
  bool cut_line_ = false;  // the writer's: a failed write left a line without its end
  Metrics& metrics_;
  const Limits limits_;
  std::unique_ptr<Queue> queue_;
  std::atomic<size_t> queued_bytes_{0};  // a bound, ordering nothing: relaxed
  std::atomic<uint64_t> written_{0};     // lines written; relaxed
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;      // under mu_
  bool reopen_asked_ = false;  // under mu_
  // steady_clock nanoseconds after which the writer gives up on a blocked reader; 0 until
  // stop(). Relaxed: a deadline, ordering nothing.
  std::atomic<int64_t> give_up_at_ns_{0};
  std::thread writer_;
};

}  // namespace anteroom
