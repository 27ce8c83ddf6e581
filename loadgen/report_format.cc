#include "loadgen/report_format.h"

#include <cmath>
#include <cstdio>

namespace anteroom::loadgen {

std::string fixed(double v, int decimals) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string ms(uint64_t us) {
  double v = static_cast<double>(us) / 1000.0;
  return fixed(v, v < 1 ? 3 : v < 10 ? 2 : 1);
}

std::string secs(uint64_t us) {
  double v = static_cast<double>(us) / 1e6;
  return fixed(v, v < 1 ? 3 : 2);
}

std::string metric_value(double v) {
  double a = std::fabs(v);
  if (a >= 1000 || v == std::floor(v)) return fixed(v, 0);
  return fixed(v, a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3);
}

void latency_rows(const Phase& ph, const std::function<void(const char*, const Histogram&)>& row) {
  Histogram all;
  int kinds = 0;
  for (int k = 0; k < kRequestKinds; ++k) {
    const Histogram& h = ph.latency[k];
    all.merge(h);
    if (h.count() == 0) continue;
    row(request_kind_name(static_cast<RequestKind>(k)), h);
    ++kinds;
  }
  if (kinds != 1) row("all", all);
}

}  // namespace anteroom::loadgen
