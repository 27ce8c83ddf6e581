// A latency histogram in microseconds: exact below 128 us, then 64 buckets per power of two
// (each bucket under 1.6% wide, reported at its midpoint), up to about 25 days. Recording is
// an index computation and an increment; histograms merge by adding counts, so each thread
// and each process keeps its own and the report adds them up.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace anteroom::loadgen {

class Histogram {
 public:
  static constexpr uint32_t kExact = 128;        // values below this have their own bucket
  static constexpr uint32_t kSubBuckets = 64;    // buckets per power of two above that
  static constexpr uint32_t kMaxMagnitude = 41;  // values from 2^41 us up share the last bucket
  static constexpr uint32_t kBuckets = kExact + (kMaxMagnitude - 7) * kSubBuckets;

  void record(uint64_t micros, uint64_t times = 1);
  void merge(const Histogram& other);

  uint64_t count() const { return count_; }
  uint64_t min() const { return count_ == 0 ? 0 : min_; }
  uint64_t max() const { return max_; }
  double mean() const {
    return count_ == 0 ? 0.0 : static_cast<double>(sum_) / static_cast<double>(count_);
  }
  // The value at percentile `p` (0-100): the smallest recorded value that at least p% of
  // recordings are at or below, to within its bucket's width. 0 when empty.
  uint64_t percentile(double p) const;

  // Nonzero buckets as (bucket index, count), and back: how histograms cross processes.
  std::vector<std::pair<uint32_t, uint64_t>> nonzero() const;
  void add_bucket(uint32_t index, uint64_t times);
  // Exact min, max and sum travel alongside the buckets.
  uint64_t sum() const { return sum_; }
  void set_exact(uint64_t min, uint64_t max, uint64_t sum);

  static uint32_t bucket_of(uint64_t micros);
  static uint64_t bucket_low(uint32_t index);   // smallest value in the bucket
  static uint64_t bucket_high(uint32_t index);  // largest value in the bucket

 private:
  std::vector<uint64_t> counts_;  // empty until the first recording
  uint64_t count_ = 0;
  uint64_t sum_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
};

}  // namespace anteroom::loadgen
