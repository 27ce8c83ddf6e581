#include "storage/persistent_engine.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <thread>

#include <cerrno>
#include <chrono>
#include <deque>
#include <fstream>
#include <mutex>
#include <sstream>
#include <system_error>

#include "storage/log_records.h"
#include "engine/ticket_id.h"

namespace anteroom {
namespace {

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class PersistentEngine final : public Engine {
 public:
  PersistentEngine(std::unique_ptr<Engine> inner, std::unique_ptr<LogWriter> log,
                   std::array<uint64_t, 2> key, PersistenceOptions options,
                   int64_t engine_minus_wall_ms)
      : inner_(std::move(inner)),
        log_(std::move(log)),
        codec_(key),
        key_(key),
        options_(std::move(options)),
        engine_minus_wall_ms_(engine_minus_wall_ms),
        last_snapshot_bytes_(log_->file_bytes()) {}

  ~PersistentEngine() override {
    if (background_.joinable()) background_.join();
  }

  Result<SnapshotInfo> snapshot() override {
    std::lock_guard snap(snapshot_mu_);
    SnapshotInfo info;
    info.bytes_before = log_->file_bytes();
    // Everything logged from here on is replayed on top of the snapshot; replay is
    // idempotent (states only move forward), so a change both captured and logged after
    // `since` does no harm.
    const uint64_t since = log_->position();
    std::string out;
    logrec::encode(logrec::Meta{logrec::kVersion, key_}, &out);
    const size_t begin = out.size();
    logrec::encode(logrec::SnapshotBegin{}, &out);
    for (const RoomInfo& room : inner_->rooms()) {
      auto tickets = inner_->export_tickets(room.name);
      if (!tickets.is_ok()) continue;  // deleted meanwhile; its delete record follows
      logrec::encode(logrec::RoomPut{room.name, room.config}, &out);
      for (const RestoredTicket& t : tickets.value()) {
        logrec::encode(logrec::Join{room.name, t.seq, t.tag, t.user, 0}, &out);
        const int64_t admitted_wall = t.admitted_at_ms - engine_minus_wall_ms_;
        if (holds_slot(t.state)) {
          logrec::encode(logrec::StateChange{room.name, t.seq, TicketState::kAllowed,
                                             EndReason::kNone, admitted_wall},
                         &out);
        }
        if (t.state == TicketState::kActive) {
          logrec::encode(logrec::StateChange{room.name, t.seq, TicketState::kActive,
                                             EndReason::kNone, admitted_wall},
                         &out);
        }
        ++info.tickets;
      }
    }
    logrec::encode(logrec::SnapshotEnd{logfmt::crc32c(out.data() + begin, out.size() - begin)},
                   &out);
    const std::string tmp = options_.dir + "/anteroom.log.snapshot";
    if (Status st = write_synced(tmp, out); !st.is_ok()) return st;
    if (Status st = log_->compact(tmp, since); !st.is_ok()) {
      ::unlink(tmp.c_str());
      return st;
    }
    info.bytes_after = log_->file_bytes();
    last_snapshot_bytes_.store(info.bytes_after, std::memory_order_relaxed);
    return info;
  }

  Status put_room(std::string_view room, const RoomConfig& config) override {
    Status st = inner_->put_room(room, config);
    if (st.is_ok()) {
      record(logrec::RoomPut{std::string(room), inner_->room_info(room)->config});
      drain();
    }
    return st;
  }
  Result<RoomInfo> room_info(std::string_view room) const override {
    return inner_->room_info(room);
  }
  std::vector<RoomInfo> rooms() const override { return inner_->rooms(); }
  Status delete_room(std::string_view room) override {
    Status st = inner_->delete_room(room);
    if (st.is_ok()) record(logrec::RoomDelete{std::string(room)});
    return st;
  }
  Result<uint64_t> admit(std::string_view room, uint64_t count) override {
    auto r = inner_->admit(room, count);
    drain();
    return r;
  }
  Result<uint64_t> clear(std::string_view room) override {
    std::lock_guard snap(snapshot_mu_);  // a clear must not fall between a snapshot's two halves
    auto r = inner_->clear(room);
    if (r.is_ok()) record(logrec::Clear{std::string(room), wall_ms()});
    drain();
    return r;
  }

  Result<JoinResult> join(std::string_view room, std::string_view user) override {
    if (Status st = log_->health(); !st.is_ok()) return st;
    auto r = inner_->join(room, user);
    if (!r.is_ok() || !r->created) return r;
    logrec::Join j;
    j.room = std::string(room);
    Tag tag{};
    codec_.decode(id_view(r->ticket.id), &j.seq, &tag);
    j.tag = tag;
    j.user = std::string(user);
    j.wall_ms = wall_ms();
    auto pos = record(j);
    if (!pos.is_ok()) return pos.status();
    // With `always`, the caller acknowledges only once this position is on disk.
    if (log_->sync() == LogWriter::Sync::kAlways) r.value().durable_at = pos.value();
    return r;
  }
  Result<TicketView> status(std::string_view room, std::string_view t) override {
    return inner_->status(room, t);
  }
  Result<TicketView> peek(std::string_view room, std::string_view t) const override {
    return inner_->peek(room, t);
  }
  Status heartbeat(std::string_view room, std::string_view t) override {
    return inner_->heartbeat(room, t);
  }
  Result<TicketDetail> describe(std::string_view room, std::string_view t) const override {
    return inner_->describe(room, t);
  }
  Result<TicketView> leave(std::string_view room, std::string_view t) override {
    auto v = inner_->leave(room, t);
    if (v.is_ok() && v->state == TicketState::kLeft && v->reason == EndReason::kLeft) {
      state_change(room, v->id, TicketState::kLeft, EndReason::kLeft);
    }
    drain();  // a freed slot was handed on
    return v;
  }
  Result<TicketDetail> activate(std::string_view room, std::string_view t) override {
    auto d = inner_->activate(room, t);
    if (d.is_ok() && d->first_use)
      state_change(room, d->ticket.id, TicketState::kActive, EndReason::kNone);
    return d;
  }
  Result<std::vector<RestoredTicket>> export_tickets(std::string_view room) const override {
    return inner_->export_tickets(room);
  }
  Status restore_room(std::string_view room, const RoomConfig& c,
                      const std::vector<RestoredTicket>& t) override {
    return inner_->restore_room(room, c, t);
  }
  unsigned shard_count() const override { return inner_->shard_count(); }
  unsigned shard_of(std::string_view room) const override { return inner_->shard_of(room); }
  void run_shard(unsigned shard) override {
    inner_->run_shard(shard);
    drain();
    maybe_snapshot();
  }
  size_t poll_events(std::vector<Event>& out, size_t max) override {
    drain();
    std::lock_guard lock(events_mu_);
    size_t n = std::min(max, events_.size());
    for (size_t i = 0; i < n; ++i) {
      out.push_back(std::move(events_.front()));
      events_.pop_front();
    }
    return n;
  }
  EngineStats stats() const override { return inner_->stats(); }
  Status health() const override { return log_->health(); }
  void when_durable(uint64_t position, std::function<void(Status)> done) override {
    log_->when_durable(position, std::move(done));
  }

 private:
  Result<uint64_t> record(const logrec::Any& r) {
    std::string framed;
    logrec::encode(r, &framed);
    return log_->append(framed);
  }
  void state_change(std::string_view room, const TicketId& id, TicketState s, EndReason why) {
    logrec::StateChange c;
    c.room = std::string(room);
    Tag tag{};
    if (!codec_.decode(id_view(id), &c.seq, &tag)) return;
    c.state = s;
    c.reason = why;
    c.wall_ms = wall_ms();
    record(c);
  }
  // Moves the inner engine's events here, logging the state changes the owners made
  // (admissions, expiries). One drainer at a time keeps each shard's order.
  void drain() {
    std::lock_guard lock(events_mu_);
    scratch_.clear();
    while (inner_->poll_events(scratch_, 4096) != 0) {
      for (Event& e : scratch_) {
        if (e.kind == Event::Kind::kAdmitted)
          state_change(e.room, e.ticket, TicketState::kAllowed, EndReason::kNone);
        if (e.kind == Event::Kind::kExpired)
          state_change(e.room, e.ticket, TicketState::kExpired, e.reason);
        events_.push_back(std::move(e));
      }
      scratch_.clear();
    }
  }

  static Status write_synced(const std::string& path, const std::string& data) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return Status(Code::kUnavailable, "cannot create " + path);
    size_t done = 0;
    while (done < data.size()) {
      ssize_t n = ::write(fd, data.data() + done, data.size() - done);
      if (n <= 0) {
        ::close(fd);
        return Status(Code::kUnavailable, "cannot write " + path);
      }
      done += static_cast<size_t>(n);
    }
    bool ok = ::fdatasync(fd) == 0;
    ::close(fd);
    return ok ? Status::ok() : Status(Code::kUnavailable, "cannot sync " + path);
  }

  // Starts a background snapshot when the log has grown past the threshold.
  void maybe_snapshot() {
    const uint64_t limit = options_.snapshot_after_bytes;
    if (limit == 0 || snapshotting_.load(std::memory_order_relaxed)) return;
    const uint64_t bytes = log_->file_bytes();
    if (bytes < limit || bytes < 2 * last_snapshot_bytes_.load(std::memory_order_relaxed)) return;
    if (snapshotting_.exchange(true, std::memory_order_acq_rel)) return;
    if (background_.joinable()) background_.join();
    background_ = std::thread([this] {
      auto r = snapshot();
      if (!r.is_ok())
        std::fprintf(stderr, "anteroom: snapshot failed: %s\n", r.status().message().c_str());
      snapshotting_.store(false, std::memory_order_release);
    });
  }

  std::unique_ptr<Engine> inner_;
  std::unique_ptr<LogWriter> log_;
  const IdCodec codec_;
  const std::array<uint64_t, 2> key_;
  const PersistenceOptions options_;
  const int64_t engine_minus_wall_ms_;
  std::mutex snapshot_mu_;  // one snapshot at a time; clear waits for it
  // Lone numbers and a flag: relaxed, except the flag's exchange (acq_rel) that elects the
  // one thread that starts a snapshot.
  std::atomic<uint64_t> last_snapshot_bytes_;
  std::atomic<bool> snapshotting_{false};
  std::thread background_;  // only the elected thread touches it
  std::mutex events_mu_;
  std::vector<Event> scratch_;  // guarded by events_mu_
  std::deque<Event> events_;    // guarded by events_mu_
};

}  // namespace

Result<std::unique_ptr<Engine>> open_persistent_engine(const PersistenceOptions& options,
                                                       EngineOptions engine_options,
                                                       std::string* warnings) {
  if (::mkdir(options.dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return Status(Code::kUnavailable,
                  "cannot create " + options.dir + ": " +
                      std::error_code(errno, std::generic_category()).message());
  }
  const std::string path = options.dir + "/anteroom.log";
  std::string data;
  {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::stringstream s;
      s << in.rdbuf();
      data = s.str();
    }
  }
  // A snapshot that never replaced the log (a crash during compaction) is garbage.
  ::unlink((options.dir + "/anteroom.log.snapshot").c_str());
  logrec::Recovery recovery;
  logfmt::Reader reader(data);
  logfmt::Record rec;
  std::optional<uint64_t> snapshot_begin;
  while (reader.next(&rec)) {
    auto any = logrec::decode(rec);
    if (any.is_ok() && std::holds_alternative<logrec::SnapshotBegin>(any.value()))
      snapshot_begin = rec.offset;
    if (any.is_ok() && std::holds_alternative<logrec::SnapshotEnd>(any.value())) {
      const uint32_t want = std::get<logrec::SnapshotEnd>(any.value()).crc;
      if (!snapshot_begin ||
          logfmt::crc32c(data.data() + *snapshot_begin, rec.offset - *snapshot_begin) != want) {
        return Status(Code::kUnavailable, path + ": the snapshot ending at offset " +
                                              std::to_string(rec.offset) +
                                              " does not match its checksum");
      }
    }
    if (!any.is_ok()) {
      return Status(Code::kUnavailable, path + ": " + any.status().message() +
                                            "; run `anteroom check-log --fix " + options.dir +
                                            "` to cut the log there");
    }
    recovery.apply(any.value());
    if (recovery.version() != logrec::kVersion) {
      return Status(Code::kUnavailable,
                    path + ": written in log format version " + std::to_string(recovery.version()) +
                        ", this anteroom reads version " + std::to_string(logrec::kVersion));
    }
  }
  if (reader.end() == logfmt::Reader::End::kCorrupt) {
    return Status(Code::kUnavailable,
                  path + ": " + reader.problem() + "; the records before offset " +
                      std::to_string(reader.valid_bytes()) +
                      " are intact. Run `anteroom check-log --fix " + options.dir +
                      "` to cut the log there (what follows is lost), or restore it from a backup");
  }
  if (reader.end() == logfmt::Reader::End::kTornTail) {
    if (::truncate(path.c_str(), static_cast<off_t>(reader.valid_bytes())) != 0) {
      return Status(Code::kUnavailable, "cannot cut the torn tail of " + path);
    }
    if (warnings != nullptr) {
      *warnings += path + ": " + reader.problem() + "; cut at offset " +
                   std::to_string(reader.valid_bytes()) + " (an unfinished last write)\n";
    }
  }
  std::array<uint64_t, 2> key{};
  const bool fresh = !recovery.id_key().has_value();
  if (fresh) {
    Tag a = random_tag(), b = random_tag();
    key = {(uint64_t{a[0]} << 32) | a[1], (uint64_t{b[0]} << 32) | b[1]};
  } else {
    key = *recovery.id_key();
  }
  engine_options.id_key = key;
  if (!engine_options.clock) engine_options.clock = std::make_shared<SteadyClock>();
  const int64_t engine_minus_wall = engine_options.clock->now_ms() - wall_ms();
  auto inner = make_sharded_engine(engine_options);
  for (const auto& [name, room] : recovery.rooms()) {
    Status st = inner->restore_room(name, room.config,
                                    logrec::Recovery::tickets_for_restore(room, engine_minus_wall));
    if (!st.is_ok())
      return Status(Code::kUnavailable, "recovering room '" + name + "': " + st.message());
  }
  auto log = LogWriter::open(path, options.sync);
  if (!log.is_ok()) return log.status();
  if (fresh) {  // the key first: every later ticket id depends on it
    std::string framed;
    logrec::encode(logrec::Meta{logrec::kVersion, key}, &framed);
    auto pos = log.value()->append(framed);
    if (!pos.is_ok()) return pos.status();
    if (options.sync == LogWriter::Sync::kAlways) {
      if (Status st = log.value()->wait_durable(pos.value()); !st.is_ok()) return st;
    }
  }
  return std::unique_ptr<Engine>(std::make_unique<PersistentEngine>(
      std::move(inner), std::move(log.value()), key, options, engine_minus_wall));
}

}  // namespace anteroom
