// The line's counting: positions from the cursor and the per-segment hole trees, across
// segment boundaries (segments hold 1024, 2048, 4096, ... tickets).
#include "engine/line.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace anteroom {
namespace {

void publish(Line& line, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) {
    Slot& s = line.slot_for_publish(line.claim());
    s.state = pack_state(TicketState::kWaiting, EndReason::kNone);
  }
}

TEST(Line, CountsWaitingBeforeWithoutHoles) {
  Line line;
  publish(line, 5000);
  EXPECT_EQ(line.waiting_before(0), 0u);
  EXPECT_EQ(line.waiting_before(4000), 4000u);
  EXPECT_EQ(line.waiting(), 5000u);
  line.advance_cursor(1500);
  EXPECT_EQ(line.waiting_before(1000), 0u);
  EXPECT_EQ(line.waiting_before(4000), 2500u);
}

TEST(Line, HolesAcrossSegmentsMatchABruteForceCount) {
  Line line;
  constexpr uint64_t kN = 20'000;  // spans segments 0..4
  publish(line, kN);
  std::vector<bool> waiting(kN, true);
  std::mt19937_64 rng(42);
  uint64_t cursor = 0;
  for (int round = 0; round < 40; ++round) {
    for (int k = 0; k < 200; ++k) {
      uint64_t seq = cursor + rng() % (kN - cursor);
      Slot* s = line.find(seq);
      if (!waiting[seq]) continue;
      s->state = pack_state(TicketState::kLeft, EndReason::kLeft);
      waiting[seq] = false;
      line.add_hole(seq, *s);
    }
    uint64_t to = std::min<uint64_t>(kN, cursor + rng() % 700);
    for (uint64_t i = cursor; i < to; ++i) waiting[i] = false;
    line.advance_cursor(to);
    cursor = to;
    uint64_t brute = 0;  // WAITING tickets below seq, counted one by one
    for (uint64_t seq = 0; seq < kN; ++seq) {
      if (seq % 97 == 0) {
        ASSERT_EQ(line.waiting_before(seq), brute) << "round " << round << " seq " << seq;
      }
      brute += waiting[seq];
    }
  }
}

TEST(Line, AHoleBehindTheCursorIsNotCountedTwice) {
  Line line;
  publish(line, 10);
  line.advance_cursor(5);
  Slot* s = line.find(2);
  line.add_hole(2, *s);  // already passed: ignored
  EXPECT_EQ(line.waiting_before(10), 5u);
  Slot* t = line.find(7);
  line.add_hole(7, *t);
  line.add_hole(7, *t);  // counted once
  EXPECT_EQ(line.waiting_before(10), 4u);
  line.advance_cursor(8);
  EXPECT_EQ(line.waiting_before(10), 2u);
}

}  // namespace
}  // namespace anteroom
