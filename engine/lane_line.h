// One lane of a room with lanes (RoomConfig::lanes): the seqs of its tickets in join order,
// and what answers "how many WAITING tickets of this lane are ahead of this one", the way
// Line answers it for the whole room (line.h): a cursor (every ticket of the lane before it
// has stopped WAITING), a Fenwick tree of holes (tickets at or after the cursor that stopped
// WAITING), and
//   waiting ahead of index i = (i - cursor) - holes in [cursor, i).
// Tickets the cursor passed are dropped from the front now and then, so the lane holds
// what is still ahead, not everyone who ever joined it.
//
// Thread safety: none of its own. A room guards its lanes with one reader-writer lock
// (room.h's lanes_mu_): joins append and the owner changes it under the writer side;
// positions are read under the reader side.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "engine/lane_schedule.h"

namespace anteroom {

class LaneLine {
 public:
  static constexpr size_t kNone = SIZE_MAX;

  // A ticket of this lane joined. A seq above every other is appended at once; one below
  // (joins racing a room's switch to lanes: room_lanes.cc) goes into its place, and the
  // tree is built again.
  void add(uint64_t seq);
  // Many WAITING tickets at once, ascending, all below every seq the lane holds (a room
  // switching to lanes fills in who already waited); the tree is built again.
  void add_front(const std::vector<uint64_t>& seqs);
  // Where `seq` stands in the lane (an index, valid until the next compaction), or kNone
  // when it is not in the lane (never was, or the cursor passed it and it was dropped).
  size_t index_of(uint64_t seq) const;
  uint64_t seq_at(size_t index) const { return seqs_[index]; }
  size_t size() const { return seqs_.size(); }
  size_t cursor() const { return cursor_; }
  // WAITING tickets of the lane ahead of `index` (index >= cursor).
  uint64_t waiting_before(size_t index) const;
  uint64_t waiting() const { return waiting_before(seqs_.size()); }
  // The ticket at `index` stopped WAITING (counted once; before the cursor ignored).
  void add_hole(size_t index);
  // Every ticket in [cursor, to) has stopped WAITING; may drop the passed front.
  void advance_cursor(size_t to);
  size_t bytes() const;

 private:
  uint64_t prefix(size_t count) const;  // holes among the first `count` indexes
  void compact();
  void rebuild();  // the tree from counted_, every index from the cursor on

  std::vector<uint64_t> seqs_;    // ascending
  std::vector<uint32_t> tree_;    // Fenwick over indexes, 1-based (tree_[0] unused)
  std::vector<uint8_t> counted_;  // the index's hole is in the tree
  size_t cursor_ = 0;
  uint64_t holes_ahead_ = 0;  // counted holes at or after the cursor
};

// A room's lanes (room.h, room_lanes.cc): the schedule, one LaneLine per lane, the last
// turn taken.
struct Lanes {
  explicit Lanes(std::vector<uint32_t> weights)
      : schedule(std::move(weights)), lines(schedule.lanes()) {}
  LaneSchedule schedule;
  std::vector<LaneLine> lines;
  LaneSchedule::Turn last;
  // The lane a ticket whose join named `lane` waits in: that one, or the last.
  uint32_t lane_of(uint8_t lane) const {
    return std::min<uint32_t>(lane, static_cast<uint32_t>(lines.size() - 1));
  }
};

}  // namespace anteroom
