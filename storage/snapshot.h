// Snapshots: the live state of every room written as log records (meta, snap_begin, the
// rooms and their live tickets, snap_end with a checksum), then the log's tail since the
// snapshot began appended to it, and the result renamed over the log (LogWriter::compact).
// Taken on demand (POST /v1/admin/snapshot) or by itself once the log has grown.
//
// Thread safety: snapshot() and maybe_start() from any thread; one snapshot runs at a time.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "engine/engine.h"
#include "storage/log_writer.h"

namespace anteroom {

class Snapshotter {
 public:
  // `engine` and `log` outlive this. `after_bytes`: start one by itself (maybe_start) once
  // the log is larger than this and than twice its size after the last one; 0 = never.
  Snapshotter(const Engine& engine, LogWriter& log, std::string dir, std::array<uint64_t, 2> id_key,
              int64_t engine_minus_wall_ms, uint64_t after_bytes);
  ~Snapshotter();  // waits for a snapshot still running
  Snapshotter(const Snapshotter&) = delete;
  Snapshotter& operator=(const Snapshotter&) = delete;

  Result<Engine::SnapshotInfo> snapshot();
  // Starts one on a background thread if the log has grown past the threshold.
  void maybe_start();

 private:
  std::string encode_state(uint64_t* tickets) const;

  const Engine& engine_;
  LogWriter& log_;
  const std::string dir_;
  const std::array<uint64_t, 2> id_key_;
  const int64_t engine_minus_wall_ms_;
  const uint64_t after_bytes_;
  std::mutex mu_;  // one snapshot at a time
  // Lone numbers and a flag: relaxed, except the flag's exchange (acq_rel) that elects the
  // one thread that starts a snapshot.
  std::atomic<uint64_t> last_bytes_;
  std::atomic<bool> running_{false};
  std::thread background_;  // only the elected thread touches it
};

}  // namespace anteroom
