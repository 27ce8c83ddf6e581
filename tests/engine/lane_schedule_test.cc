// The lanes' schedule (engine/lane_schedule.h) and one lane's counting (engine/lane_line.h),
// each against the obvious slow version: every turn listed and walked, every ticket counted.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

#include "engine/lane_line.h"
#include "engine/lane_schedule.h"

namespace anteroom {
namespace {

// Every turn up to `horizon` time units, in schedule order: (time numerator over the LCD
// denominator 2 * prod(w), lane).
std::vector<uint32_t> listed_turns(const std::vector<uint32_t>& w, uint64_t horizon) {
  struct T {
    long double at;
    uint64_t num, den;
    uint32_t lane;
  };
  std::vector<T> all;
  for (uint32_t j = 0; j < w.size(); ++j) {
    for (uint64_t k = 0; (2 * k + 1) < 2 * horizon * w[j]; ++k) {
      all.push_back({0, 2 * k + 1, 2 * uint64_t{w[j]}, j});
    }
  }
  std::sort(all.begin(), all.end(), [](const T& a, const T& b) {
    const unsigned __int128 x = static_cast<unsigned __int128>(a.num) * b.den;
    const unsigned __int128 y = static_cast<unsigned __int128>(b.num) * a.den;
    return x < y || (x == y && a.lane < b.lane);
  });
  std::vector<uint32_t> lanes;
  for (const T& t : all) lanes.push_back(t.lane);
  return lanes;
}

TEST(LaneSchedule, TurnsComeInTheOrderOfTheirTimesTiesToTheLowerLane) {
  const LaneSchedule s({3, 1});
  std::vector<uint32_t> seen;
  LaneSchedule::Turn t;
  for (int i = 0; i < 9; ++i) {
    t = s.next(t, 0b11);
    seen.push_back(t.lane);
  }
  EXPECT_EQ(seen, (std::vector<uint32_t>{0, 0, 1, 0, 0, 0, 1, 0, 0}));
}

TEST(LaneSchedule, NextWalksTheListedScheduleForManyWeights) {
  std::mt19937 rng(7);
  for (int round = 0; round < 40; ++round) {
    std::vector<uint32_t> w(2 + rng() % 4);
    for (uint32_t& x : w) x = 1 + rng() % 9;
    const LaneSchedule s(w);
    const std::vector<uint32_t> listed = listed_turns(w, 6);
    LaneSchedule::Turn t;
    for (size_t i = 0; i < listed.size(); ++i) {
      t = s.next(t, (1u << w.size()) - 1);
      ASSERT_EQ(t.lane, listed[i]) << "round " << round << " turn " << i;
      // Every lane's count through this turn is what the listing says.
      for (uint32_t j = 0; j < w.size(); ++j) {
        const auto upto = static_cast<uint64_t>(
            std::count(listed.begin(), listed.begin() + static_cast<long>(i) + 1, j));
        ASSERT_EQ(s.turns_through(j, t), upto);
      }
    }
  }
}

// Admits by the schedule, one at a time, from lanes holding `waiting` tickets: the turn
// each ticket (lane, rank) was admitted at, counted from 1.
std::vector<std::vector<uint64_t>> simulate(const LaneSchedule& s, LaneSchedule::Turn t,
                                            std::vector<uint64_t> waiting) {
  std::vector<std::vector<uint64_t>> at(waiting.size());
  uint64_t n = 0;
  for (;;) {
    uint32_t mask = 0;
    for (uint32_t j = 0; j < waiting.size(); ++j) mask |= waiting[j] != 0 ? 1u << j : 0;
    if (mask == 0) break;
    t = s.next(t, mask);
    --waiting[t.lane];
    at[t.lane].push_back(++n);
  }
  return at;
}

TEST(LaneSchedule, APositionIsTheAdmissionThatTakesTheTicket) {
  std::mt19937 rng(11);
  for (int round = 0; round < 200; ++round) {
    std::vector<uint32_t> w(2 + rng() % 4);
    for (uint32_t& x : w) x = 1 + rng() % 12;
    const LaneSchedule s(w);
    // Start somewhere in the schedule, with some lanes empty.
    LaneSchedule::Turn t;
    for (int i = static_cast<int>(rng() % 30); i > 0; --i) t = s.next(t, (1u << w.size()) - 1);
    std::vector<uint64_t> waiting(w.size());
    for (uint64_t& x : waiting) x = rng() % 3 == 0 ? 0 : rng() % 40;
    const auto at = simulate(s, t, waiting);
    for (uint32_t j = 0; j < w.size(); ++j) {
      for (uint64_t r = 1; r <= waiting[j]; ++r) {
        ASSERT_EQ(s.position(t, j, r, waiting), at[j][r - 1])
            << "round " << round << " lane " << j << " rank " << r;
      }
    }
  }
}

TEST(LaneSchedule, AnEmptyMaskTakesNoTurn) {
  const LaneSchedule s({2, 5});
  EXPECT_FALSE(s.next({}, 0).taken);
}

TEST(LaneLine, CountsWaitingAheadAsTicketsStopAndTheCursorPasses) {
  LaneLine line;
  std::set<uint64_t> waiting;
  std::mt19937 rng(3);
  uint64_t next = 0;
  for (int step = 0; step < 20000; ++step) {
    const int what = static_cast<int>(rng() % 10);
    if (what < 5 || line.size() == 0) {
      next += 1 + rng() % 3;  // other lanes' seqs in between
      line.add(next);
      waiting.insert(next);
    } else if (what < 8 && !waiting.empty()) {  // one stops waiting, anywhere
      auto it = waiting.begin();
      std::advance(it, static_cast<long>(rng() % waiting.size()));
      line.add_hole(line.index_of(*it));
      waiting.erase(it);
    } else {  // the cursor passes what stopped at the front
      size_t c = line.cursor();
      while (c < line.size() && !waiting.contains(line.seq_at(c))) ++c;
      line.advance_cursor(c);
    }
    if (step % 97 == 0) {
      ASSERT_EQ(line.waiting(), waiting.size());
      uint64_t ahead = 0;
      for (uint64_t seq : waiting) {
        const size_t i = line.index_of(seq);
        ASSERT_NE(i, LaneLine::kNone);
        ASSERT_EQ(line.waiting_before(i), ahead) << "step " << step;
        ++ahead;
      }
    }
  }
  EXPECT_LT(line.size(), 20000u);  // the passed front was dropped
}

TEST(LaneLine, ATicketAddedOutOfOrderTakesItsPlace) {
  LaneLine line;
  for (uint64_t seq : {10, 20, 30}) line.add(seq);
  line.add_hole(0);
  line.advance_cursor(1);  // 10 passed
  line.add(5);             // claimed before 10, added late: it waits ahead of all
  line.add(25);
  EXPECT_EQ(line.waiting(), 4u);
  EXPECT_EQ(line.waiting_before(line.index_of(5)), 0u);
  EXPECT_EQ(line.waiting_before(line.index_of(20)), 1u);
  EXPECT_EQ(line.waiting_before(line.index_of(25)), 2u);
  EXPECT_EQ(line.waiting_before(line.index_of(30)), 3u);
  line.add_front({1, 2});
  EXPECT_EQ(line.waiting(), 6u);
  EXPECT_EQ(line.waiting_before(line.index_of(30)), 5u);
}

}  // namespace
}  // namespace anteroom
