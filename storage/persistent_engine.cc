#include "storage/persistent_engine.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <system_error>

#include "engine/forwarding_engine.h"
#include "engine/ticket_id.h"
#include "storage/log_journal.h"
#include "storage/log_records.h"
#include "storage/recovery.h"
#include "storage/snapshot.h"

namespace anteroom {
namespace {

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The log and its journal. A base class of PersistentEngine placed before the engine it
// wraps, so both exist before the engine is built and outlive it.
struct LogParts {
  std::unique_ptr<LogWriter> log;
  std::unique_ptr<LogJournal> journal;
};

class PersistentEngine final : private LogParts, public ForwardingEngine {
 public:
  PersistentEngine(LogParts parts, std::unique_ptr<Engine> inner, const PersistenceOptions& o,
                   std::array<uint64_t, 2> key, int64_t engine_minus_wall_ms)
      : LogParts(std::move(parts)),
        ForwardingEngine(std::move(inner)),
        snapshots_(this->inner(), *log, o.dir, key, engine_minus_wall_ms, o.snapshot_after_bytes) {}

  using Engine::join;
  Result<JoinResult> join(std::string_view room, const JoinRequest& request) override {
    if (Status st = log->health(); !st.is_ok()) return st;
    return inner().join(room, request);
  }
  // The inner engine's answer (its when_durable is at once) waits here for the log's.
  void join_async(std::string_view room, const JoinRequest& request,
                  Then<JoinResult> then) override {
    if (Status st = log->health(); !st.is_ok()) return then(st);
    inner().join_async(room, request, [this, then = std::move(then)](Result<JoinResult> r) mutable {
      answer_when_durable(std::move(r), std::move(then));
    });
  }
  void run_lane(size_t lane) override {
    inner().run_lane(lane);
    snapshots_.maybe_start();  // any lane's pass may be the one after the log grew enough
  }
  // Both forms, as join's: the forwarded async one would ask the inner engine, which
  // stores nothing.
  Result<SnapshotInfo> snapshot() override { return snapshots_.snapshot(); }
  void snapshot_async(Then<SnapshotInfo> then) override { then(snapshots_.snapshot()); }
  Status health() const override { return log->health(); }
  EngineStats stats() const override {
    EngineStats s = inner().stats();
    s.log_syncs = log->sync_latency().snapshot();
    return s;
  }
  void when_durable(uint64_t position, std::function<void(Status)> done) override {
    log->when_durable(position, std::move(done));
  }

 private:
  Snapshotter snapshots_;
};

std::array<uint64_t, 2> fresh_key() {
  Tag a = random_tag(), b = random_tag();
  return {(uint64_t{a[0]} << 32) | a[1], (uint64_t{b[0]} << 32) | b[1]};
}

// Writes the meta record that starts a new log: the id key first, since every later ticket
// id depends on it.
Status start_log(LogWriter& log, std::array<uint64_t, 2> key) {
  std::string framed;
  logrec::encode(logrec::Meta{logrec::kVersion, key}, &framed);
  auto pos = log.append(framed);
  if (!pos.is_ok()) return pos.status();
  if (log.sync() == LogWriter::Sync::kAlways) return log.wait_durable(pos.value());
  return Status::ok();
}

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
  // A snapshot that never replaced the log (a crash during compaction) is garbage.
  ::unlink((options.dir + "/anteroom.log.snapshot").c_str());
  logrec::Recovery recovery;
  if (Status st = logrec::read_log(path, options.dir, &recovery, warnings); !st.is_ok()) return st;
  const bool fresh = !recovery.id_key().has_value();
  const std::array<uint64_t, 2> key =
      fresh ? engine_options.id_key.value_or(fresh_key()) : *recovery.id_key();
  if (!engine_options.clock) engine_options.clock = std::make_shared<SteadyClock>();
  const int64_t engine_minus_wall = engine_options.clock->now_ms() - wall_ms();

  LogParts parts;
  auto log = LogWriter::open(path, options.sync);
  if (!log.is_ok()) return log.status();
  parts.log = std::move(log.value());
  parts.journal =
      std::make_unique<LogJournal>(*parts.log, -engine_minus_wall, engine_options.journal);
  engine_options.id_key = key;
  if (!engine_options.wall_minus_engine_ms)
    engine_options.wall_minus_engine_ms = -engine_minus_wall;
  engine_options.journal = parts.journal.get();
  auto inner = make_sharded_engine(engine_options);
  for (const auto& [name, room] : recovery.rooms()) {
    Status st = inner->restore_room(name, room.config,
                                    logrec::Recovery::tickets_for_restore(room, engine_minus_wall));
    if (st.is_ok() && room.draw) st = inner->restore_draw(name, *room.draw);
    if (st.is_ok() && room.lanes_turn.taken) st = inner->restore_lanes_turn(name, room.lanes_turn);
    if (!st.is_ok())
      return Status(Code::kUnavailable, "recovering room '" + name + "': " + st.message());
  }
  if (fresh) {
    if (Status st = start_log(*parts.log, key); !st.is_ok()) return st;
  }
  return std::unique_ptr<Engine>(std::make_unique<PersistentEngine>(
      std::move(parts), std::move(inner), options, key, engine_minus_wall));
}

}  // namespace anteroom
