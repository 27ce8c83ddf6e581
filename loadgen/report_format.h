// Number formats shared by the Markdown and HTML reports, so both say the same thing.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "loadgen/run_result.h"

namespace anteroom::loadgen {

std::string fixed(double v, int decimals);
// Microseconds as milliseconds: three decimals below 1 ms, two below 10 ms, one above.
std::string ms(uint64_t us);
// Microseconds as seconds: three decimals below 1 s, two above.
std::string secs(uint64_t us);
// A metric's value: whole above 1,000, else three significant digits at most (10.7, 0.431).
std::string metric_value(double v);

// The rows of a latency table: `row(kind, histogram)` for each request kind that has
// requests, then "all" (every kind merged) unless there was only one kind, which it would
// repeat.
void latency_rows(const Phase& ph, const std::function<void(const char*, const Histogram&)>& row);

}  // namespace anteroom::loadgen
