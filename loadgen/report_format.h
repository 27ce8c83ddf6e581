// Number formats shared by the Markdown and HTML reports, so both say the same thing.
#pragma once

#include <cstdint>
#include <string>

namespace anteroom::loadgen {

std::string fixed(double v, int decimals);
// Microseconds as milliseconds: three decimals below 1 ms, two below 10 ms, one above.
std::string ms(uint64_t us);
// Microseconds as seconds: three decimals below 1 s, two above.
std::string secs(uint64_t us);
// A metric's value: whole above 1,000, else three significant digits at most (10.7, 0.431).
std::string metric_value(double v);

}  // namespace anteroom::loadgen
