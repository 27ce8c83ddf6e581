// The order in which a room with lanes (RoomConfig::lanes) admits: weighted turns, the same
// on every copy of the room, with each ticket's place under it computable in O(lanes).
//
// Lane j of weight w_j owns the turns at the times (2k + 1) / (2 w_j), k = 0, 1, 2, ...; all
// turns of all lanes, ordered by time (a tie goes to the lower lane), make one endless
// schedule in which lane j has w_j turns in every unit of time: for weights 3 and 1, the
// turns go A A B A A A B A ... (A at 1/6, 3/6, 5/6; B at 1/2 = 3/6, after A's). An admission
// takes the next turn whose lane has someone waiting (its head, strict join order inside
// the lane); the turns of lanes with nobody waiting pass unused. The schedule's state is
// only the last turn taken (`Turn`), so copies that admit alike stay alike.
//
// A WAITING ticket with r - 1 tickets of its own lane L ahead of it is admitted at L's r-th
// turn from now. Before that turn, lane j != L has n_j turns, and fills min(n_j, waiting_j)
// of them (the lane empties after waiting_j admissions, and its later turns pass unused),
// so its position is
//   r + sum over j != L of min(n_j, waiting_j),
// exact while nobody joins or leaves; a join into a lane with more weight can move the
// tickets of other lanes back (docs/policies.md, "Lanes").
//
// Thread safety: a value type; callers guard it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace anteroom {

class LaneSchedule {
 public:
  // The last turn taken: lane `lane`'s turn number `k` (its time is (2k + 1) / (2 w_lane)).
  // `taken` false: none yet (the start of time).
  struct Turn {
    bool taken = false;
    uint32_t lane = 0;
    uint64_t k = 0;
    bool operator==(const Turn&) const = default;
  };

  // `weights`: 1-1000 each, at most kMaxLanes of them.
  explicit LaneSchedule(std::vector<uint32_t> weights);
  static constexpr uint32_t kMaxLanes = 8;

  size_t lanes() const { return weights_.size(); }
  const std::vector<uint32_t>& weights() const { return weights_; }

  // Lane j's turns up to and including `last` (all of them before the first turn: 0).
  uint64_t turns_through(uint32_t j, const Turn& last) const;
  // The turn after `last` among the lanes in `lanes_mask` (bit j: lane j), the others'
  // turns passing unused; `taken` false when the mask is empty.
  Turn next(const Turn& last, uint32_t lanes_mask) const;
  // The position of a WAITING ticket of lane `lane` with `rank` - 1 of its lane ahead of it,
  // when the last turn taken is `last` and `waiting[j]` tickets wait in lane j.
  uint64_t position(const Turn& last, uint32_t lane, uint64_t rank,
                    std::span<const uint64_t> waiting) const;

 private:
  // Whether turn (a, ka) comes before turn (b, kb) in the schedule.
  bool before(uint32_t a, uint64_t ka, uint32_t b, uint64_t kb) const;
  // Lane j's turns strictly before lane l's turn kl.
  uint64_t turns_before(uint32_t j, uint32_t l, uint64_t kl) const;

  std::vector<uint32_t> weights_;
};

}  // namespace anteroom
