// The engine with a memory: a ShardedEngine whose change journal (engine/journal.h) is
// written to DIR/anteroom.log (docs/log-format.md) and which, on open, rebuilds itself
// from that log.
//
// What is logged: everything the journal tells (room put and delete; each new ticket with
// its seq, tag and user, enough to rebuild the same id in the same place; admissions, first
// uses, leaves, expiries, clears). Heartbeats are not logged: after a restart every WAITING
// and ACTIVE ticket counts as seen at that moment (nobody could heartbeat while the server
// was down); ALLOWED keeps its wall-clock admission time, so its deadline survives.
//
// Acknowledgement: with `always`, a join's result carries `durable_at`, and the caller must
// acknowledge it only from Engine::when_durable (group commit: the writer syncs everything
// that arrived meanwhile at once and calls all their callbacks); every mode refuses joins
// (kUnavailable) once a write or sync has failed.
//
// Thread safety: as Engine.
#pragma once

#include <memory>
#include <string>

#include "engine/engine.h"
#include "storage/log_writer.h"

namespace anteroom {

struct PersistenceOptions {
  std::string dir;
  LogWriter::Sync sync = LogWriter::Sync::kEverySec;
  // A snapshot is taken (on a background thread, from run_lane) once the log is larger
  // than this and than twice its size after the last snapshot. 0: only on demand.
  uint64_t snapshot_after_bytes = 64ull << 20;
};

// Opens (or creates) the log in options.dir and recovers from it. A torn tail is cut off
// and described in *warnings; damage in the middle is an error naming file and offset.
// `engine_options.journal`, if set, is told every change after the log took it.
// `engine_options.id_key`, if set, is the id key of a new log (an existing log keeps its own).
Result<std::unique_ptr<Engine>> open_persistent_engine(const PersistenceOptions& options,
                                                       EngineOptions engine_options,
                                                       std::string* warnings);

}  // namespace anteroom
