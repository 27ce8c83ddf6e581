// The wait estimate (docs/policies.md, "The wait estimate"): how fast places actually free,
// never faster than the evidence says.
//
// In an auto room whose capacity is full, a place frees when someone admitted leaves or
// expires, so by Little's law the line moves at capacity / mean hold (the time from admission
// to freeing the slot). The mean hold comes from the last holds that ended, but is never taken
// shorter than the mean age of the holds still running: visitors who have held a slot for 10
// minutes say holds last at least that long, whatever ended before. Until enough holds have
// ended (min(3, capacity)), there is no estimate ("calculating"). admit_per_second caps the
// pace; when capacity is not what holds people back, the cap alone is the pace. A manual room
// moves at the operator's observed admission rate.
//
// Thread safety: HoldWindow belongs to the room's owner; the pace it yields is published for
// readers as one number.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>

namespace anteroom {

class HoldWindow {
 public:
  static constexpr size_t kKept = 64;

  void record(int64_t hold_ms) {
    holds_[next_++ % kKept] = std::max<int64_t>(0, hold_ms);
    count_ = std::min(count_ + 1, kKept);
  }
  size_t count() const { return count_; }
  double mean_ms() const {
    if (count_ == 0) return 0;
    double sum = 0;
    for (size_t i = 0; i < count_; ++i) sum += static_cast<double>(holds_[i]);
    return sum / static_cast<double>(count_);
  }

 private:
  std::array<int64_t, kKept> holds_{};
  size_t next_ = 0;
  size_t count_ = 0;
};

// What the owner knows when it publishes the pace.
struct PaceInputs {
  bool immediate = false;  // everyone is admitted at once (passthrough, no limit at all)
  bool manual = false;
  double manual_rate = 0;  // admissions per second the operator made lately
  uint32_t capacity = 0;   // 0: no limit
  uint32_t admit_per_second = 0;
  uint64_t in_use = 0;
  size_t holds_ended = 0;   // HoldWindow::count()
  double mean_hold_ms = 0;  // HoldWindow::mean_ms()
  double mean_age_ms = 0;   // of the holds still running
};

constexpr double kImmediate = std::numeric_limits<double>::infinity();

// Places per second the line moves at; 0: not known yet.
inline double line_pace(const PaceInputs& in) {
  if (in.immediate) return kImmediate;
  if (in.manual) return in.manual_rate;
  const double capped = in.admit_per_second != 0 ? in.admit_per_second : kImmediate;
  if (in.capacity == 0) return capped;
  double by_holds = 0;
  if (in.holds_ended >= std::min<size_t>(3, in.capacity)) {
    const double hold_s = std::max({in.mean_hold_ms, in.mean_age_ms, 1.0}) / 1000.0;
    by_holds = in.capacity / hold_s;
  }
  if (in.in_use < in.capacity && in.admit_per_second != 0) {
    return by_holds > 0 ? std::min(capped, by_holds) : capped;  // the cap holds people back
  }
  return by_holds > 0 ? std::min(capped, by_holds) : 0;
}

// The wait for `position` at `pace`: at least `low`, likely under `high` (half as much again).
struct WaitRange {
  double low = 0, high = 0;
};
inline std::optional<WaitRange> wait_for(uint64_t position, double pace) {
  if (pace <= 0) return std::nullopt;
  if (pace == kImmediate) return WaitRange{};
  const double low = static_cast<double>(position) / pace;
  return WaitRange{low, low * 1.5};
}

}  // namespace anteroom
