// The engine's change journal written to the log: each change becomes one framed record
// (storage/log_records.h) appended through the group-commit writer.
//
// Thread safety: record() from any thread, as the journal contract asks (engine/journal.h).
#pragma once

#include <cstdint>

#include "engine/journal.h"
#include "storage/log_writer.h"

namespace anteroom {

class LogJournal final : public Journal {
 public:
  // `log` outlives this journal. Engine-clock times become wall-clock ones by adding
  // `wall_minus_engine_ms`, so they survive a restart.
  // `next`, if not null, is told every change after the log took it.
  LogJournal(LogWriter& log, int64_t wall_minus_engine_ms, Journal* next = nullptr)
      : log_(log), wall_minus_engine_ms_(wall_minus_engine_ms), next_(next) {}

  // With `always`, the position to wait for (Engine::when_durable); a position that never
  // becomes durable once the log has failed. Otherwise 0.
  uint64_t record(const Change& change) override;

 private:
  LogWriter& log_;
  const int64_t wall_minus_engine_ms_;
  Journal* const next_;
};

}  // namespace anteroom
