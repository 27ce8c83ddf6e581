// The observed admission rate over the last minute, for ETAs. Owner only (not thread-safe);
// the owner publishes the result for readers.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

namespace anteroom {

class RateWindow {
 public:
  static constexpr int64_t kWindowSeconds = 60;

  void record(int64_t now_ms, uint64_t admitted) {
    if (admitted == 0) return;
    int64_t sec = now_ms / 1000;
    if (first_second_ < 0) first_second_ = sec;
    Bucket& b = buckets_[static_cast<size_t>(sec) % buckets_.size()];
    if (b.second != sec) b = Bucket{sec, 0};
    b.count += admitted;
  }

  // Admissions per second over the window (or since the first admission, if more recent);
  // 0 when nothing was admitted in it.
  double per_second(int64_t now_ms) const {
    if (first_second_ < 0) return 0;
    int64_t sec = now_ms / 1000;
    int64_t span = std::clamp<int64_t>(sec - first_second_ + 1, 1, kWindowSeconds);
    uint64_t total = 0;
    for (const Bucket& b : buckets_) {
      if (b.second > sec - span && b.second <= sec) total += b.count;
    }
    return static_cast<double>(total) / static_cast<double>(span);
  }

 private:
  struct Bucket {
    int64_t second = -1;
    uint64_t count = 0;
  };
  std::array<Bucket, kWindowSeconds + 4> buckets_{};
  int64_t first_second_ = -1;
};

}  // namespace anteroom
