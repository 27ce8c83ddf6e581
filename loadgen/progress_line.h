// The live progress line (docs/loadgen.md): what a phase's visitors did so far, on stderr,
// rewritten in place once a second; only when stderr is a terminal and --quiet is not given
// (a log file or a pipe gets nothing). The text is made here from figures the caller passes,
// so it is tested without a terminal or a clock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace anteroom::loadgen {

struct ProgressFigures {
  std::string phase;
  double seconds = 0;  // since the phase's first visitor was due
  int64_t joined = 0, admitted = 0, open = 0, waiting = 0, active = 0, finished = 0;
  uint64_t visitors = 0;           // planned
  double requests_per_second = 0;  // over the last interval
  int64_t errors = 0;
};

// "[surge]   12.0s joined 500 admitted 200 open 300 (waiting 100 active 50) done 200/500
// 1234 req/s errors 0"; counts below zero (a decrement seen before its increment) as 0.
std::string progress_text(const ProgressFigures& f);

// Requests a second between two readings of a counter `seconds` apart (0 if no time passed).
double per_second(int64_t before, int64_t after, double seconds);

// A line rewritten in place: each render() starts with a carriage return and pads with
// spaces over whatever the longer line before it left on the terminal.
class InPlaceLine {
 public:
  std::string render(const std::string& text);
  // What ends the line for good (a newline), or nothing if none was rendered.
  std::string finish() const { return width_ > 0 ? "\n" : ""; }

 private:
  size_t width_ = 0;
};

}  // namespace anteroom::loadgen
