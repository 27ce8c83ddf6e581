#include "storage/log_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <system_error>

namespace anteroom {

Result<LogWriter::Sync> LogWriter::parse_sync(std::string_view name) {
  if (name == "always") return Sync::kAlways;
  if (name == "everysec") return Sync::kEverySec;
  if (name == "no") return Sync::kNo;
  return Status(Code::kInvalidArgument, "appendfsync must be always, everysec or no");
}

Result<std::unique_ptr<LogWriter>> LogWriter::open(const std::string& path, Sync sync) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Status(
        Code::kUnavailable,
        "cannot open " + path + ": " + std::error_code(errno, std::generic_category()).message());
  }
  struct stat st {};
  ::fstat(fd, &st);
  return std::unique_ptr<LogWriter>(
      new LogWriter(path, fd, static_cast<uint64_t>(st.st_size), sync));
}

LogWriter::LogWriter(std::string path, int fd, uint64_t size, Sync sync)
    : path_(std::move(path)),
      fd_(fd),
      sync_(sync),
      appended_(size),
      durable_(size),
      thread_([this] { run(); }) {}

uint64_t LogWriter::position() const {
  std::lock_guard lock(mu_);
  return appended_;
}

uint64_t LogWriter::file_bytes() const {
  std::lock_guard lock(mu_);
  return appended_ - file_base_;
}

Status LogWriter::compact(const std::string& snapshot_path, uint64_t since) {
  CompactRequest req{snapshot_path, since, false, {}};
  std::unique_lock lock(mu_);
  if (!error_.is_ok()) return error_;
  if (compact_ != nullptr) return Status(Code::kUnavailable, "a compaction is already running");
  compact_ = &req;
  work_cv_.notify_one();
  compact_cv_.wait(lock, [&] { return req.done; });
  return req.result;
}

namespace {

Status io_error(const std::string& what) {
  return Status(Code::kUnavailable,
                what + ": " + std::error_code(errno, std::generic_category()).message());
}

}  // namespace

// Writer thread only, with mu_ not held.
Status LogWriter::do_compact(const std::string& snapshot_path, uint64_t since) {
  // Everything queued so far goes into the old file first, so the tail below is complete.
  std::string batch;
  uint64_t target = 0;
  {
    std::lock_guard lock(mu_);
    batch.swap(pending_);
    target = appended_;
  }
  if (!batch.empty() && !write_all(batch)) return io_error("writing " + path_);
  // The tail: what was logged since the snapshot's position.
  std::string tail;
  {
    int in = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (in < 0) return io_error("reading " + path_);
    tail.resize(target - since);
    ssize_t n = ::pread(in, tail.data(), tail.size(), static_cast<off_t>(since - file_base_));
    ::close(in);
    if (n != static_cast<ssize_t>(tail.size())) return io_error("reading the tail of " + path_);
  }
  int out = ::open(snapshot_path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (out < 0) return io_error("opening " + snapshot_path);
  std::swap(out, fd_);  // write_all writes to fd_
  bool ok = write_all(tail) && timed_sync();
  std::swap(out, fd_);
  struct stat st {};
  ok = ok && ::fstat(out, &st) == 0;
  if (!ok || ::rename(snapshot_path.c_str(), path_.c_str()) != 0) {
    ::close(out);
    return io_error("replacing " + path_);
  }
  // The rename is durable only once the directory is synced.
  std::string dir = path_.substr(0, path_.rfind('/'));
  int d = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (d >= 0) {
    ::fsync(d);
    ::close(d);
  }
  ::close(fd_);
  fd_ = out;
  std::lock_guard lock(mu_);
  file_base_ = target - static_cast<uint64_t>(st.st_size);
  if (durable_ < target) durable_ = target;  // all of it is in the synced new file
  return Status::ok();
}

LogWriter::~LogWriter() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  thread_.join();
  ::close(fd_);
}

Result<uint64_t> LogWriter::append(std::string_view framed) {
  uint64_t pos = 0;
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    if (!error_.is_ok()) return error_;
    pending_.append(framed);
    appended_ += framed.size();
    pos = appended_;
    // Wake the writer only when it sleeps and has a reason to hurry: a caller waiting for
    // the disk (always), or a lot queued. Otherwise it comes by itself within 2 ms; not
    // waking it per record saves a futex call and a context switch per join. Asleep with
    // nothing to do, it comes only when woken: the first record after a quiet spell wakes it.
    wake = idle_ && (sync_ == Sync::kAlways || deep_idle_ || pending_.size() >= (64u << 10));
    if (wake) idle_ = false;
  }
  if (wake) work_cv_.notify_one();
  return pos;
}

Status LogWriter::wait_durable(uint64_t pos) {
  std::unique_lock lock(mu_);
  durable_cv_.wait(lock, [&] { return durable_ >= pos || !error_.is_ok(); });
  return durable_ >= pos ? Status::ok() : error_;
}

void LogWriter::when_durable(uint64_t pos, std::function<void(Status)> done) {
  Status now;
  {
    std::lock_guard lock(mu_);
    if (durable_ < pos && error_.is_ok()) {
      waiters_.emplace_back(pos, std::move(done));
      return;
    }
    now = durable_ >= pos ? Status::ok() : error_;
  }
  done(now);
}

std::vector<std::function<void(Status)>> LogWriter::settled(Status* with) {
  std::vector<std::function<void(Status)>> out;
  *with = error_;
  auto keep = waiters_.begin();
  for (auto& w : waiters_) {
    if (w.first <= durable_ || !error_.is_ok()) {
      out.push_back(std::move(w.second));
    } else {
      *keep++ = std::move(w);
    }
  }
  waiters_.erase(keep, waiters_.end());
  return out;
}

Status LogWriter::health() const {
  std::lock_guard lock(mu_);
  return error_;
}

LogWriter::Stats LogWriter::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

bool LogWriter::write_all(const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd_, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

bool LogWriter::timed_sync() {
  const auto start = std::chrono::steady_clock::now();
  const bool ok = ::fdatasync(fd_) == 0;
  const int err = errno;
  sync_latency_.record(std::chrono::steady_clock::now() - start);
  errno = err;  // the caller reports a failure with it
  return ok;
}

// Writer thread: waits for work the way the sync policy asks. Caller holds `lock`.
void LogWriter::wait_for_work(std::unique_lock<std::mutex>& lock) {
  // always sleeps until woken; the others write every 2 ms while anything is queued or
  // written but not yet synced (everysec syncs it within a second either way), and sleep
  // until woken once everything is settled: an idle log costs no wake-ups.
  idle_ = true;
  if (sync_ == Sync::kAlways) {
    work_cv_.wait_for(lock, std::chrono::seconds(1),
                      [&] { return stop_ || !pending_.empty() || compact_ != nullptr; });
  } else if (pending_.empty() && durable_ >= appended_) {
    deep_idle_ = true;
    work_cv_.wait(lock, [&] { return stop_ || !pending_.empty() || compact_ != nullptr; });
    deep_idle_ = false;
  } else {
    work_cv_.wait_for(lock, std::chrono::milliseconds(2),
                      [&] { return stop_ || compact_ != nullptr; });
  }
  idle_ = false;
}

// Writer thread: writes what is queued and syncs it when the policy says so, then records
// the outcome. Caller holds `lock`; it is released around the system calls.
void LogWriter::write_batch(std::unique_lock<std::mutex>& lock,
                            std::chrono::steady_clock::time_point* last_sync) {
  using Clock = std::chrono::steady_clock;
  std::string batch;
  batch.swap(pending_);
  const uint64_t target = appended_;
  const bool stopping = stop_;
  const bool written_unsynced = durable_ < target;
  lock.unlock();
  bool ok = batch.empty() || write_all(batch);
  const bool sync_now =
      ok && written_unsynced &&
      (sync_ == Sync::kAlways || stopping ||
       (sync_ == Sync::kEverySec && Clock::now() - *last_sync >= std::chrono::seconds(1)));
  if (sync_now) {
    ok = timed_sync();
    *last_sync = Clock::now();
  }
  const int err = errno;
  lock.lock();
  if (!batch.empty()) {
    stats_.writes++;
    stats_.bytes += batch.size();
  }
  if (!ok) {
    error_ =
        Status(Code::kUnavailable, "the log could not be written or synced: " +
                                       std::error_code(err, std::generic_category()).message());
    std::fprintf(stderr, "anteroom: %s (%s); no more joins are acknowledged\n",
                 error_.message().c_str(), path_.c_str());
  } else if (sync_now) {
    stats_.syncs++;
    durable_ = target;
  } else if (sync_ == Sync::kNo) {
    durable_ = target;  // as durable as this policy makes anything
  }
  durable_cv_.notify_all();
}

// Writer thread: calls the waiters that are settled, with `lock` released meanwhile.
void LogWriter::call_settled(std::unique_lock<std::mutex>& lock) {
  Status outcome;
  auto ready = settled(&outcome);
  if (ready.empty()) return;
  lock.unlock();
  for (auto& done : ready) done(outcome);
  lock.lock();
}

// Writer thread: runs the compaction asked for, if any.
void LogWriter::serve_compaction(std::unique_lock<std::mutex>& lock) {
  if (compact_ == nullptr) return;
  CompactRequest* req = compact_;
  lock.unlock();
  Status result = do_compact(req->snapshot_path, req->since);
  lock.lock();
  req->result = result;
  req->done = true;
  compact_ = nullptr;
  compact_cv_.notify_all();
  durable_cv_.notify_all();
  call_settled(lock);
}

void LogWriter::run() {
  auto last_sync = std::chrono::steady_clock::now();
  std::unique_lock lock(mu_);
  for (;;) {
    wait_for_work(lock);
    stats_.passes++;
    if (!error_.is_ok()) {
      if (stop_) return;
      continue;
    }
    const bool stopping = stop_;
    write_batch(lock, &last_sync);
    call_settled(lock);
    serve_compaction(lock);
    if (stopping && pending_.empty()) {
      // Nothing more will be written: whoever still waits hears so.
      if (!waiters_.empty() && error_.is_ok())
        error_ = Status(Code::kUnavailable, "the log is closing");
      call_settled(lock);
      return;
    }
  }
}

}  // namespace anteroom
