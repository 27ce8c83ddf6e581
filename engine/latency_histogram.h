// Durations as a Prometheus histogram, as an engine reports them in EngineStats (the log's
// syncs): how many took at most each bound.
#pragma once

#include <cstdint>
#include <vector>

namespace anteroom {

struct LatencyHistogram {
  std::vector<double> bounds_seconds;  // ascending
  std::vector<uint64_t> at_most;       // at_most[i]: how many took <= bounds_seconds[i]
  uint64_t count = 0;                  // all of them (the +Inf bucket)
  double sum_seconds = 0;
};

}  // namespace anteroom
