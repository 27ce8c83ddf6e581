// How long the log's syncs (fdatasync) take, as a histogram for /metrics
// (anteroom_fsync_seconds). record() is a few relaxed atomic increments: the writer thread
// calls it right after each sync without taking a lock.
//
// Thread safety: every method from any thread. A snapshot taken while syncs are recorded
// may count the latest one in some fields and not yet in others.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>

#include "engine/latency_histogram.h"

namespace anteroom {

class SyncLatency {
 public:
  // Upper bounds in seconds: a fast SSD syncs in well under a millisecond, a busy disk or a
  // network volume in tens or hundreds.
  static constexpr std::array<double, 14> kBounds = {
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5};

  void record(std::chrono::nanoseconds took);
  LatencyHistogram snapshot() const;

 private:
  static constexpr auto kRelaxed = std::memory_order_relaxed;        // independent counters
  std::array<std::atomic<uint64_t>, kBounds.size() + 1> buckets_{};  // last: above every bound
  std::atomic<uint64_t> sum_ns_{0};
};

}  // namespace anteroom
