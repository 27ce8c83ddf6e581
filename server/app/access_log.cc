#include "server/app/access_log.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <concurrentqueue/concurrentqueue.h>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <system_error>
#include <utility>
#include <vector>

#include "engine/model.h"

namespace anteroom {

struct AccessLog::Queue {
  moodycamel::ConcurrentQueue<AccessRecord> records;
};

namespace {

// For appending, created mode 0640; -1 (errno set) if it cannot be. O_NONBLOCK: a FIFO
// nobody reads fails here (ENXIO) instead of holding start-up or the writer; cleared once
// open.
int open_for_append(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0640);
  if (fd >= 0) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

bool regular_file(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

std::string error_text(int error) {
  return std::error_code(error, std::generic_category()).message();
}

}  // namespace

Result<std::unique_ptr<AccessLog>> AccessLog::open(const std::string& path, Metrics& metrics,
                                                   Limits limits) {
  if (path == "-") {
    return std::unique_ptr<AccessLog>(new AccessLog(STDOUT_FILENO, "", metrics, limits));
  }
  const int fd = open_for_append(path);
  if (fd < 0) {
    return Status(Code::kInvalidArgument,
                  "cannot open the access log " + path + ": " + error_text(errno));
  }
  return std::unique_ptr<AccessLog>(new AccessLog(fd, path, metrics, limits));
}

AccessLog::AccessLog(int fd, std::string path, Metrics& metrics, Limits limits)
    : path_(std::move(path)),
      fd_(fd),
      regular_(regular_file(fd)),
      reopenable_(!path_.empty() && regular_),
      metrics_(metrics),
      limits_(limits),
      queue_(std::make_unique<Queue>()),
      writer_([this] { run(); }) {}

AccessLog::~AccessLog() { stop(); }

void AccessLog::record(AccessRecord&& r) {
  const size_t cost = r.cost();
  if (queued_bytes_.fetch_add(cost, std::memory_order_relaxed) + cost > limits_.max_queued_bytes) {
    queued_bytes_.fetch_sub(cost, std::memory_order_relaxed);
    metrics_.access_log_dropped(false);
    return;
  }
  queue_->records.enqueue(std::move(r));
}

bool AccessLog::reopen() {
  if (!reopenable_) return false;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return false;
    reopen_asked_ = true;
  }
  wake_.notify_one();
  return true;
}

void AccessLog::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  give_up_at_ns_.store((std::chrono::steady_clock::now() + kStopGrace).time_since_epoch().count(),
                       std::memory_order_relaxed);
  wake_.notify_one();
  writer_.join();
  if (!path_.empty()) ::close(fd_);
}

// Sleeps an interval (or until reopen() or stop()), writes what came meanwhile, again; at
// stop, writes what is left. A reopen comes after a drain, when no line is half written.
void AccessLog::run() {
  pthread_setname_np(pthread_self(), "access-log");  // for top -H and the like
  std::string out;
  out.reserve(size_t{1} << 17);
  std::vector<AccessRecord> batch(256);
  uint64_t lines = 0;  // in `out`
  for (;;) {
    bool stopping = false, reopen = false;
    {
      std::unique_lock lock(mu_);
      wake_.wait_for(lock, limits_.interval, [this] { return stopping_ || reopen_asked_; });
      stopping = stopping_;
      reopen = std::exchange(reopen_asked_, false);
    }
    while (drain(&batch, &out, &lines)) {
    }
    if (reopen) reopen_file();
    if (stopping) return;
  }
}

// The path is opened before the old file is closed: if it cannot be, lines go on to the
// old file (which logrotate renamed, or whose directory is gone) rather than nowhere.
void AccessLog::reopen_file() {
  const int fd = open_for_append(path_);
  if (fd < 0) {
    std::fprintf(stderr,
                 "anteroom: cannot reopen the access log %s: %s; still writing to the file "
                 "open before\n",
                 path_.c_str(), error_text(errno).c_str());
    metrics_.access_log_reopen_failed();  // after the message: a test waits for the count
    return;
  }
  ::close(fd_);
  fd_ = fd;
  regular_ = regular_file(fd);
  cut_line_ = false;  // the new file starts with no line cut short
}

bool AccessLog::drain(std::vector<AccessRecord>* batch, std::string* out, uint64_t* lines) {
  const size_t n = queue_->records.try_dequeue_bulk(batch->begin(), batch->size());
  size_t freed = 0;
  for (size_t i = 0; i < n; ++i) {
    append_access_line((*batch)[i], out);
    freed += (*batch)[i].cost();
  }
  queued_bytes_.fetch_sub(freed, std::memory_order_relaxed);
  *lines += n;
  // Written in pieces of about 64 KiB, and whenever the queue is empty.
  if (n != 0 && out->size() < (size_t{1} << 16)) return true;
  if (!out->empty()) write_out(out, *lines);
  *lines = 0;
  return n != 0;
}

bool AccessLog::writable() const {
  for (;;) {
    // The deadline is looked at before each wait, so that once stop()'s grace has passed
    // every later page fails at once: waiting 100 ms a page first held shutdown for about
    // 20 s with 16 MiB queued.
    int wait_ms = 100;
    if (const int64_t give_up = give_up_at_ns_.load(std::memory_order_relaxed); give_up != 0) {
      const int64_t left_ns = give_up - std::chrono::steady_clock::now().time_since_epoch().count();
      if (left_ns <= 0) return false;
      wait_ms = static_cast<int>(std::min<int64_t>(wait_ms, left_ns / 1'000'000 + 1));
    }
    pollfd p{fd_, POLLOUT, 0};
    const int r = ::poll(&p, 1, wait_ms);
    if (r > 0) return (p.revents & (POLLERR | POLLHUP | POLLNVAL)) == 0;
    if (r < 0 && errno != EINTR) return false;
  }
}

// A file is written in one go. A pipe or terminal is written a page at a time once poll
// says there is room (a page then never blocks), so a reader that stopped reading never holds
// the writer past stop()'s grace. A failed write drops its batch (counted); a line it cut in
// two is cut back off a file, or ended with a newline before the next batch on a pipe, so
// every line stays JSON.
void AccessLog::write_out(std::string* out, uint64_t lines) {
  if (cut_line_) {
    out->insert(out->begin(), '\n');
    cut_line_ = false;
  }
  const off_t start = regular_ ? ::lseek(fd_, 0, SEEK_END) : -1;
  size_t done = 0;
  while (done < out->size()) {
    size_t step = out->size() - done;
    ssize_t w = -1;
    if (regular_ || writable()) {
      if (!regular_) step = std::min<size_t>(step, PIPE_BUF);
      w = ::write(fd_, out->data() + done, step);
      if (w < 0 && errno == EINTR) continue;
    }
    if (w <= 0) {
      metrics_.access_log_dropped(true, lines);  // the whole batch: which lines made it is unknown
      if (done > 0 && (*out)[done - 1] != '\n') {
        const size_t keep = out->rfind('\n', done - 1) + 1;  // npos + 1 == 0
        if (start < 0 || ::ftruncate(fd_, start + static_cast<off_t>(keep)) != 0) cut_line_ = true;
      }
      out->clear();
      return;
    }
    done += static_cast<size_t>(w);
  }
  written_.fetch_add(lines, std::memory_order_relaxed);
  out->clear();
}

}  // namespace anteroom
