#include "engine/lane_schedule.h"

#include <algorithm>
#include <utility>

namespace anteroom {

LaneSchedule::LaneSchedule(std::vector<uint32_t> weights) : weights_(std::move(weights)) {}

// Turn (a, ka) is at (2ka + 1) / (2 w_a): compare (2ka + 1) w_b with (2kb + 1) w_a. Turns
// number at most about 2^37 (a room's seqs, plus turns passed unused) and weights at most
// 1000, so the products stay far inside 64 bits.
bool LaneSchedule::before(uint32_t a, uint64_t ka, uint32_t b, uint64_t kb) const {
  const uint64_t x = (2 * ka + 1) * weights_[b], y = (2 * kb + 1) * weights_[a];
  return x < y || (x == y && a < b);
}

uint64_t LaneSchedule::turns_before(uint32_t j, uint32_t l, uint64_t kl) const {
  if (j == l) return kl;
  // Odd m = 2k + 1 with m w_l < x = (2kl + 1) w_j: every odd m up to (x - 1) / w_l; and
  // the one with m w_l == x when lane j goes first in a tie.
  const uint64_t x = (2 * kl + 1) * weights_[j], w = weights_[l];
  uint64_t n = ((x - 1) / w + 1) / 2;
  if (j < l && x % w == 0 && (x / w) % 2 == 1) ++n;
  return n;
}

uint64_t LaneSchedule::turns_through(uint32_t j, const Turn& last) const {
  if (!last.taken) return 0;
  return j == last.lane ? last.k + 1 : turns_before(j, last.lane, last.k);
}

LaneSchedule::Turn LaneSchedule::next(const Turn& last, uint32_t lanes_mask) const {
  Turn best;
  for (uint32_t j = 0; j < weights_.size(); ++j) {
    if ((lanes_mask & (1u << j)) == 0) continue;
    const uint64_t k = turns_through(j, last);
    if (!best.taken || before(j, k, best.lane, best.k)) best = Turn{true, j, k};
  }
  return best;
}

uint64_t LaneSchedule::position(const Turn& last, uint32_t lane, uint64_t rank,
                                std::span<const uint64_t> waiting) const {
  const uint64_t k = turns_through(lane, last) + rank - 1;  // the ticket's own turn
  uint64_t pos = rank;
  for (uint32_t j = 0; j < weights_.size() && j < waiting.size(); ++j) {
    if (j == lane) continue;
    const uint64_t turns = turns_before(j, lane, k) - turns_through(j, last);
    pos += std::min(turns, waiting[j]);
  }
  return pos;
}

}  // namespace anteroom
