// What drop measures once every visitor is back: whether admission followed the line (the
// draw, or join order), and how the wait after the start depends on when a visitor arrived.
// Plain functions over the visitors' records, so the tests can feed them made-up runs.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "loadgen/recorder.h"

namespace anteroom::loadgen {

struct Overtaking {
  uint64_t visitors = 0;  // admitted visitors overtaken by more than the tolerance
  int64_t worst_us = 0;   // the largest overtaking seen, within the tolerance or not
};

// `line` is the admitted visitors in the line's order (first in line first). A visitor is
// overtaken when it was still waiting more than `tolerance_us` after someone behind it had
// been seen admitted. "Still waiting" is the latest evidence of it: for a poller the send
// time of its last request answered WAITING (the server read it later still); on SSE, whose
// frames are pushed and carry no send time, the moment its ALLOWED frame arrived, so there
// the tolerance must cover the push's own delay. One backward sweep, O(n).
Overtaking count_overtaken(const std::vector<const VisitorRecord*>& line, bool polled,
                           int64_t tolerance_us);

// Each visitor's wait from the start (`start_us`, now_us()) to its admission, in the order of
// `by_arrival` (every visitor, in arrival order); -1 for a visitor never admitted.
std::vector<double> waits_after_start(const std::vector<const VisitorRecord*>& by_arrival,
                                      int64_t start_us);

// One fifth of the visitors by arrival, and their wait from the start to admission.
struct ArrivalFifth {
  uint64_t visitors = 0;  // in this fifth
  uint64_t admitted = 0;  // of whom were admitted (the wait is theirs)
  double mean_s = 0;
  double p50_s = 0;
};
std::array<ArrivalFifth, 5> fifths_of(const std::vector<double>& waits);

// With a drawn line the wait must not depend on arrival. It is flat when the largest fifth's
// mean is at most 1.5 times the smallest, or the two are within `tolerance_s` (too close to
// measure), or chance alone would spread them as far: with few visitors per fifth the means
// of a fair draw differ by more than 1.5x now and then (one run in five at 200 visitors), so
// above 1.5 the ratio is compared with 1,000 random orders of the same waits: flat unless it
// is beyond what 999 of them stay under.
struct Flatness {
  bool flat = false;
  double ratio = 0;   // largest fifth's mean / smallest, of the admitted visitors' waits
  double chance = 0;  // what 999 of 1,000 random orders stay under; 0: not needed
};
Flatness flatness(const std::vector<double>& waits, double tolerance_s);

// In join order the wait must grow with arrival: each fifth's mean above the one before.
bool waits_rise(const std::array<ArrivalFifth, 5>& fifths);

}  // namespace anteroom::loadgen
