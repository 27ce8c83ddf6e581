// Appends framed records to one log file from any number of threads, with Redis's three
// sync policies:
//   always    append() callers wait_durable(): a background thread writes everything that
//             arrived meanwhile with one write(2) and one fdatasync, then wakes them all
//             (group commit: about one fdatasync per batch, not per record).
//   everysec  the thread writes what arrived every 2 ms (or at once past 64 KiB) and syncs
//             once a second: a power cut loses at most about a second, a killed process
//             about 2 ms.
//   no        as everysec without the syncs; the OS decides when it reaches the disk.
// A failed write or sync is sticky: health() and every later append report it, so the
// caller stops acknowledging what it cannot store.
//
// Thread safety: every method from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "engine/status.h"
#include "storage/sync_latency.h"

namespace anteroom {

class LogWriter {
 public:
  enum class Sync { kAlways, kEverySec, kNo };
  static Result<Sync> parse_sync(std::string_view name);

  // Opens `path` for appending, creating it if needed.
  static Result<std::unique_ptr<LogWriter>> open(const std::string& path, Sync sync);
  ~LogWriter();  // writes and syncs what is queued, then stops
  LogWriter(const LogWriter&) = delete;
  LogWriter& operator=(const LogWriter&) = delete;

  // Queues framed records; returns the log position just past them.
  Result<uint64_t> append(std::string_view framed);
  // Blocks until the log is on disk up to `pos` (always mode's acknowledgement).
  Status wait_durable(uint64_t pos);
  // Calls `done` (on the writer's thread, or at once on the caller's if already true) when
  // the log is on disk up to `pos`, or with the error if it never will be. Never blocks:
  // this is how many waiting joins share one fdatasync.
  void when_durable(uint64_t pos, std::function<void(Status)> done);
  Status health() const;
  Sync sync() const { return sync_; }
  // The log position after everything queued so far.
  uint64_t position() const;
  // Bytes in the log, counting those queued but not yet written.
  uint64_t file_bytes() const;

  // Compaction, done by the writer thread between two batches (appends go on meanwhile):
  // appends to `snapshot_path` (a complete, synced snapshot of the state at position
  // `since`) every record logged since then, syncs it, renames it over the log, syncs the
  // directory, and continues in the new file. Blocks until done.
  Status compact(const std::string& snapshot_path, uint64_t since);

  struct Stats {
    uint64_t bytes = 0, writes = 0, syncs = 0;
    uint64_t passes = 0;  // times the writer woke and looked for work
  };
  Stats stats() const;
  // How long each fdatasync of the log took (compaction's too); read without a lock.
  const SyncLatency& sync_latency() const { return sync_latency_; }

 private:
  LogWriter(std::string path, int fd, uint64_t size, Sync sync);
  void run();
  // The writer thread's steps; each is called with mu_ held through `lock`.
  void wait_for_work(std::unique_lock<std::mutex>& lock);
  void write_batch(std::unique_lock<std::mutex>& lock,
                   std::chrono::steady_clock::time_point* last_sync);
  void call_settled(std::unique_lock<std::mutex>& lock);
  void serve_compaction(std::unique_lock<std::mutex>& lock);
  Status do_compact(const std::string& snapshot_path, uint64_t since);
  // Takes the waiters that are settled (durable, or failed); caller holds mu_.
  std::vector<std::function<void(Status)>> settled(Status* with);
  bool write_all(const std::string& data);
  // fdatasync(fd_), timed into sync_latency_; true if it succeeded.
  bool timed_sync();

  const std::string path_;
  int fd_;                  // the writer thread's; swapped by compaction on that thread
  uint64_t file_base_ = 0;  // the log position of the file's first byte; written by the
                            // writer thread under mu_, read by it without
  const Sync sync_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_, durable_cv_;
  std::string pending_;     // guarded by mu_
  uint64_t appended_;       // log position after everything queued; guarded by mu_
  uint64_t durable_;        // on disk up to here; guarded by mu_
  bool stop_ = false;       // guarded by mu_
  bool idle_ = false;       // the writer is waiting for work; guarded by mu_
  bool deep_idle_ = false;  // ... with nothing queued or unsynced, until woken; guarded by mu_
  Status error_;            // sticky; guarded by mu_
  Stats stats_;             // guarded by mu_
  std::vector<std::pair<uint64_t, std::function<void(Status)>>> waiters_;  // guarded by mu_
  struct CompactRequest {
    std::string snapshot_path;
    uint64_t since = 0;
    bool done = false;
    Status result;
  };
  CompactRequest* compact_ = nullptr;  // guarded by mu_
  std::condition_variable compact_cv_;
  SyncLatency sync_latency_;
  std::thread thread_;
};

}  // namespace anteroom
