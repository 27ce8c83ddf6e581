#include "loadgen/progress_line.h"

#include <algorithm>
#include <cstdio>

namespace anteroom::loadgen {

std::string progress_text(const ProgressFigures& f) {
  auto n = [](int64_t v) { return static_cast<long long>(std::max<int64_t>(0, v)); };
  char line[320];
  std::snprintf(line, sizeof line,
                "[%s] %6.1fs joined %lld admitted %lld open %lld (waiting %lld active %lld) "
                "done %lld/%llu %.0f req/s errors %lld",
                f.phase.c_str(), f.seconds, n(f.joined), n(f.admitted), n(f.open), n(f.waiting),
                n(f.active), n(f.finished), static_cast<unsigned long long>(f.visitors),
                std::max(0.0, f.requests_per_second), n(f.errors));
  return line;
}

double per_second(int64_t before, int64_t after, double seconds) {
  if (seconds <= 0 || after <= before) return 0;
  return static_cast<double>(after - before) / seconds;
}

std::string InPlaceLine::render(const std::string& text) {
  std::string out = "\r" + text;
  if (text.size() < width_) out.append(width_ - text.size(), ' ');
  width_ = text.size();
  return out;
}

}  // namespace anteroom::loadgen
