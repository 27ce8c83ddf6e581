#include "storage/sync_latency.h"

#include <algorithm>

namespace anteroom {

void SyncLatency::record(std::chrono::nanoseconds took) {
  const double seconds = std::chrono::duration<double>(took).count();
  size_t b = 0;
  while (b < kBounds.size() && seconds > kBounds[b]) ++b;
  buckets_[b].fetch_add(1, kRelaxed);
  sum_ns_.fetch_add(static_cast<uint64_t>(std::max<int64_t>(0, took.count())), kRelaxed);
}

LatencyHistogram SyncLatency::snapshot() const {
  LatencyHistogram h;
  h.bounds_seconds.assign(kBounds.begin(), kBounds.end());
  h.at_most.reserve(kBounds.size());
  uint64_t cumulative = 0;
  for (size_t b = 0; b < buckets_.size(); ++b) {
    cumulative += buckets_[b].load(kRelaxed);
    if (b < kBounds.size()) h.at_most.push_back(cumulative);
  }
  h.count = cumulative;
  h.sum_seconds = static_cast<double>(sum_ns_.load(kRelaxed)) / 1e9;
  return h;
}

}  // namespace anteroom
