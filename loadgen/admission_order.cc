#include "loadgen/admission_order.h"

#include <algorithm>
#include <random>

namespace anteroom::loadgen {

Overtaking count_overtaken(const std::vector<const VisitorRecord*>& line, bool polled,
                           int64_t tolerance_us) {
  Overtaking o;
  o.worst_us = INT64_MIN;
  int64_t behind_admitted = INT64_MAX;  // the earliest anyone behind was seen admitted
  for (auto it = line.rbegin(); it != line.rend(); ++it) {
    const VisitorRecord& r = **it;
    const int64_t waiting_until = polled ? r.last_waiting_sent_us : r.allowed_seen_us;
    if (behind_admitted != INT64_MAX) {
      const int64_t by = waiting_until - behind_admitted;
      o.worst_us = std::max(o.worst_us, by);
      if (by > tolerance_us) ++o.visitors;
    }
    behind_admitted = std::min(behind_admitted, r.allowed_seen_us);
  }
  o.worst_us = std::max<int64_t>(0, o.worst_us);
  return o;
}

std::vector<double> waits_after_start(const std::vector<const VisitorRecord*>& by_arrival,
                                      int64_t start_us) {
  std::vector<double> waits;
  waits.reserve(by_arrival.size());
  for (const VisitorRecord* r : by_arrival) {
    waits.push_back(r->allowed_seen_us == 0
                        ? -1
                        : static_cast<double>(std::max<int64_t>(0, r->allowed_seen_us - start_us)) /
                              1e6);
  }
  return waits;
}

std::array<ArrivalFifth, 5> fifths_of(const std::vector<double>& waits) {
  std::array<ArrivalFifth, 5> fifths{};
  const size_t n = waits.size();
  for (size_t k = 0; k < fifths.size(); ++k) {
    std::vector<double> fifth;
    for (size_t i = k * n / 5; i < (k + 1) * n / 5; ++i) {
      ++fifths[k].visitors;
      if (waits[i] >= 0) fifth.push_back(waits[i]);
    }
    fifths[k].admitted = fifth.size();
    if (fifth.empty()) continue;
    std::sort(fifth.begin(), fifth.end());
    double sum = 0;
    for (double w : fifth) sum += w;
    fifths[k].mean_s = sum / static_cast<double>(fifth.size());
    const size_t m = fifth.size() / 2;
    fifths[k].p50_s = fifth.size() % 2 == 1 ? fifth[m] : (fifth[m - 1] + fifth[m]) / 2;
  }
  return fifths;
}

namespace {

// Largest and smallest mean of five equal parts of `waits`, in its order.
std::pair<double, double> extreme_means(const std::vector<double>& waits) {
  double lo = 0;
  double hi = 0;
  const size_t n = waits.size();
  for (size_t k = 0; k < 5; ++k) {
    double sum = 0;
    for (size_t i = k * n / 5; i < (k + 1) * n / 5; ++i) sum += waits[i];
    const double mean = sum / static_cast<double>(std::max<size_t>(1, (k + 1) * n / 5 - k * n / 5));
    lo = k == 0 ? mean : std::min(lo, mean);
    hi = k == 0 ? mean : std::max(hi, mean);
  }
  return {lo, hi};
}

double ratio_of(std::pair<double, double> lo_hi) {
  return lo_hi.first > 0 ? lo_hi.second / lo_hi.first : (lo_hi.second > 0 ? INFINITY : 1);
}

}  // namespace

Flatness flatness(const std::vector<double>& all, double tolerance_s) {
  std::vector<double> waits;
  for (double w : all) {
    if (w >= 0) waits.push_back(w);
  }
  Flatness f;
  const auto lo_hi = extreme_means(waits);
  f.ratio = ratio_of(lo_hi);
  f.flat = f.ratio <= 1.5 || lo_hi.second - lo_hi.first <= tolerance_s;
  if (f.flat) return f;
  // The same waits in random orders (a fixed seed: the verdict is the same on every reading).
  std::mt19937_64 rng(12);
  std::vector<double> ratios;
  for (int i = 0; i < 1000; ++i) {
    std::shuffle(waits.begin(), waits.end(), rng);
    ratios.push_back(ratio_of(extreme_means(waits)));
  }
  std::sort(ratios.begin(), ratios.end());
  f.chance = ratios[998];
  f.flat = f.ratio <= f.chance;
  return f;
}

bool waits_rise(const std::array<ArrivalFifth, 5>& fifths) {
  for (size_t k = 1; k < fifths.size(); ++k) {
    if (fifths[k].mean_s <= fifths[k - 1].mean_s) return false;
  }
  return true;
}

}  // namespace anteroom::loadgen
