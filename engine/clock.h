// Time as the engine sees it. Every timer (the three expiries, the admission rate cap, the
// ETA window) reads an injected Clock, so tests move time by hand and never sleep.
//
// Thread safety: now_ms() may be called from any thread at any time.
#pragma once

#include <atomic>
#include <cstdint>

namespace anteroom {

// A deadline that never comes: what a timer reports when nothing is due.
constexpr int64_t kNoDeadline = INT64_MAX;

class Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds since some fixed start; never goes backwards.
  virtual int64_t now_ms() const = 0;
  // The same clock read cheaply, a few ms behind at most (never ahead): for stamps on a
  // visitor's hot path (when a ticket was last seen), which count in 100 ms ticks.
  virtual int64_t coarse_ms() const { return now_ms(); }
};

// CLOCK_MONOTONIC: about 30 ns a read here (the coarse clock's 5 ns came with a 4 ms
// resolution, and expiries are promised within 5 ms of their deadline: results/expiry.md).
// coarse_ms() reads CLOCK_MONOTONIC_COARSE, the same clock as of its last tick.
class SteadyClock final : public Clock {
 public:
  int64_t now_ms() const override;
  int64_t coarse_ms() const override;
};

// CLOCK_REALTIME_COARSE: Unix time in ms. For a cluster, whose records carry times that
// every node must read alike; it can step back a little when NTP corrects it, which the
// rooms tolerate (a time before another only makes a deadline later).
class WallClock final : public Clock {
 public:
  int64_t now_ms() const override;
};

// A clock that moves only when told. For tests.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(int64_t start_ms = 1'000'000) : now_(start_ms) {}
  int64_t now_ms() const override { return now_.load(std::memory_order_relaxed); }
  void advance_ms(int64_t ms) { now_.fetch_add(ms, std::memory_order_relaxed); }
  void advance_s(int64_t s) { advance_ms(s * 1000); }

 private:
  // Relaxed is enough: the value orders nothing else; tests that move the clock synchronise
  // with the engine through the engine's own calls.
  std::atomic<int64_t> now_;
};

}  // namespace anteroom
