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

namespace {

// What a line may say of a request target: no query; no scheme, user or host of an
// absolute-form target (they may carry a password); and no ticket id, which is the visitor's
// secret (docs/api.md): /v1/rooms/{room}/tickets/{ticket}... reads .../tickets/-/...
// The path, split around the ticket id it holds (`after` empty and `id` false if none).
struct PathParts {
  std::string_view before, after;
  bool id = false;
};

PathParts redacted_path(std::string_view target) {
  std::string_view path = target.substr(0, target.find('?'));
  if (!path.starts_with('/')) {
    const size_t scheme = path.find("://");
    const size_t slash = scheme == std::string_view::npos ? 0 : path.find('/', scheme + 3);
    path = slash == std::string_view::npos || scheme == std::string_view::npos ? std::string_view()
                                                                               : path.substr(slash);
  }
  constexpr std::string_view kRooms = "/v1/rooms/", kTickets = "/tickets/";
  if (path.starts_with(kRooms)) {
    const size_t room_end = path.find('/', kRooms.size());
    if (room_end != std::string_view::npos && path.substr(room_end).starts_with(kTickets)) {
      const size_t id = room_end + kTickets.size();
      const size_t id_end = std::min(path.find('/', id), path.size());
      if (id_end > id) return {path.substr(0, id), path.substr(id_end), true};
    }
  }
  return {path, {}, false};
}

}  // namespace

// Copied straight into the record: no allocation unless the line is long.
void AccessRecord::set_request(std::string_view method, std::string_view target) {
  const PathParts p = redacted_path(target);
  const std::string_view id = p.id ? "-" : "";
  method_size_ = static_cast<uint16_t>(std::min<size_t>(method.size(), UINT16_MAX));
  method = method.substr(0, method_size_);
  const size_t size = method.size() + p.before.size() + id.size() + p.after.size();
  char* out = nullptr;
  if (size <= short_.size()) {
    short_size_ = static_cast<uint8_t>(size);
    long_.clear();
    out = short_.data();
  } else {
    long_.resize(size);
    out = long_.data();
  }
  for (std::string_view piece : {method, p.before, id, p.after}) {
    if (piece.empty()) continue;  // its data() may be null
    std::memcpy(out, piece.data(), piece.size());
    out += piece.size();
  }
}

namespace {

constexpr char kHex[] = "0123456789abcdef";

// The length of the UTF-8 sequence starting at p[0] (shortest form, no surrogates, at most
// U+10FFFF), or 0 if the bytes there are not one.
size_t utf8_length(const unsigned char* p, size_t n) {
  auto cont = [&](size_t i) { return i < n && (p[i] & 0xC0) == 0x80; };
  const unsigned char c = p[0];
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (n < 2 || (c == 0xE0 && p[1] < 0xA0) || (c == 0xED && p[1] > 0x9F)) return 0;
    return cont(1) && cont(2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (n < 2 || (c == 0xF0 && p[1] < 0x90) || (c == 0xF4 && p[1] > 0x8F)) return 0;
    return cont(1) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

// The room of a route that has one: /v1/rooms/{room}..., /wait/{room}, /v1/gate/{room}.
// None for a request that reached no route: its path is whatever the client sent.
std::string_view room_of(const AccessRecord& r) {
  if (r.route == Route::kNotFound || r.route == Route::kUnrouted || r.route == Route::kListRooms) {
    return {};
  }
  std::string_view p = r.path();
  for (std::string_view prefix : {"/v1/rooms/", "/wait/", "/v1/gate/"}) {
    if (!p.starts_with(prefix)) continue;
    p.remove_prefix(prefix.size());
    const std::string_view room = p.substr(0, p.find('/'));
    return valid_room_name(room) ? room : std::string_view{};
  }
  return {};
}

// "2026-12-01T09:10:11.123456Z"; the part up to the second is kept from the last call.
void append_time(int64_t unix_us, std::string* out) {
  thread_local int64_t cached_second = -1;
  thread_local char prefix[32];
  const int64_t second = unix_us / 1'000'000;
  if (second != cached_second) {
    const time_t t = static_cast<time_t>(second);
    tm utc{};
    gmtime_r(&t, &utc);
    std::strftime(prefix, sizeof prefix, "%Y-%m-%dT%H:%M:%S", &utc);
    cached_second = second;
  }
  out->append(prefix);
  char fraction[] = ".000000Z";
  auto us = static_cast<uint32_t>(unix_us - second * 1'000'000);
  for (int i = 6; i >= 1; --i, us /= 10) fraction[i] = static_cast<char>('0' + us % 10);
  out->append(fraction, sizeof fraction - 1);
}

void append_number(uint64_t n, std::string* out) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
  out->append(digits, end);
}

}  // namespace

void append_json_string(std::string_view s, std::string* out) {
  out->push_back('"');
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t plain = 0;  // start of the run of bytes copied as they are
  for (size_t i = 0; i < n;) {
    const unsigned char c = p[i];
    if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\') {
      ++i;
      continue;
    }
    if (c >= 0x80) {
      if (const size_t len = utf8_length(p + i, n - i); len != 0) {
        i += len;
        continue;
      }
    }
    out->append(s.substr(plain, i - plain));
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(static_cast<char>(c));
    } else if (c >= 0x80) {
      out->append("\\ufffd");  // not UTF-8
    } else {
      out->append("\\u00");
      out->push_back(kHex[c >> 4]);
      out->push_back(kHex[c & 15]);
    }
    plain = ++i;
  }
  out->append(s.substr(plain));
  out->push_back('"');
}

void append_access_line(const AccessRecord& r, std::string* out) {
  out->append(R"({"time":")");
  append_time(r.unix_us, out);
  out->append(R"(","client":)");
  char address[INET6_ADDRSTRLEN] = "";
  if (r.address_size == 4 || r.address_size == 16) {
    inet_ntop(r.address_size == 4 ? AF_INET : AF_INET6, r.address.data(), address, sizeof address);
    out->push_back('"');
    out->append(address);
    out->push_back('"');
  } else {
    out->append("null");
  }
  out->append(R"(,"method":)");
  append_json_string(r.method(), out);
  out->append(R"(,"path":)");
  append_json_string(r.path(), out);
  out->append(R"(,"status":)");
  append_number(r.status, out);
  out->append(R"(,"bytes":)");
  append_number(r.bytes, out);
  out->append(R"(,"duration_us":)");
  append_number(r.duration_us, out);
  out->append(R"(,"route":")");
  out->append(route_name(r.route));
  out->push_back('"');
  if (const std::string_view room = room_of(r); !room.empty()) {
    out->append(R"(,"room":")");
    out->append(room);  // a valid room name: nothing to escape
    out->push_back('"');
  }
  out->append("}\n");
}

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
