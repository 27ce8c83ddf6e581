#include "loadgen/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace anteroom::loadgen {

uint32_t Histogram::bucket_of(uint64_t micros) {
  if (micros < kExact) return static_cast<uint32_t>(micros);
  uint32_t msb = 63 - static_cast<uint32_t>(std::countl_zero(micros));
  if (msb >= kMaxMagnitude) return kBuckets - 1;
  uint32_t sub = static_cast<uint32_t>(micros >> (msb - 6));  // 64..127
  return kExact + (msb - 7) * kSubBuckets + (sub - kSubBuckets);
}

uint64_t Histogram::bucket_low(uint32_t index) {
  if (index < kExact) return index;
  uint32_t msb = 7 + (index - kExact) / kSubBuckets;
  uint64_t sub = kSubBuckets + (index - kExact) % kSubBuckets;
  return sub << (msb - 6);
}

uint64_t Histogram::bucket_high(uint32_t index) {
  if (index < kExact) return index;
  uint32_t msb = 7 + (index - kExact) / kSubBuckets;
  return bucket_low(index) + (uint64_t{1} << (msb - 6)) - 1;
}

void Histogram::record(uint64_t micros, uint64_t times) {
  if (times == 0) return;
  if (counts_.empty()) counts_.assign(kBuckets, 0);
  counts_[bucket_of(micros)] += times;
  count_ += times;
  sum_ += micros * times;
  min_ = std::min(min_, micros);
  max_ = std::max(max_, micros);
}

void Histogram::merge(const Histogram& other) {
  if (other.count_ == 0) return;
  if (counts_.empty()) counts_.assign(kBuckets, 0);
  for (uint32_t i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

uint64_t Histogram::percentile(double p) const {
  if (count_ == 0) return 0;
  p = std::clamp(p, 0.0, 100.0);
  auto rank = static_cast<uint64_t>(std::ceil(p / 100.0 * static_cast<double>(count_)));
  rank = std::max<uint64_t>(rank, 1);
  uint64_t seen = 0;
  for (uint32_t i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      uint64_t mid = bucket_low(i) + (bucket_high(i) - bucket_low(i)) / 2;
      return std::clamp(mid, min_, max_);
    }
  }
  return max_;
}

std::vector<std::pair<uint32_t, uint64_t>> Histogram::nonzero() const {
  std::vector<std::pair<uint32_t, uint64_t>> out;
  for (uint32_t i = 0; i < counts_.size(); ++i) {
    if (counts_[i] != 0) out.emplace_back(i, counts_[i]);
  }
  return out;
}

void Histogram::add_bucket(uint32_t index, uint64_t times) {
  if (times == 0 || index >= kBuckets) return;
  if (counts_.empty()) counts_.assign(kBuckets, 0);
  counts_[index] += times;
  count_ += times;
  // Until set_exact() says otherwise, the bucket bounds stand in for the exact values.
  sum_ += bucket_low(index) * times;
  min_ = std::min(min_, bucket_low(index));
  max_ = std::max(max_, bucket_high(index));
}

void Histogram::set_exact(uint64_t min, uint64_t max, uint64_t sum) {
  if (count_ == 0) return;
  min_ = min;
  max_ = max;
  sum_ = sum;
}

}  // namespace anteroom::loadgen
