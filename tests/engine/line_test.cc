// The line's counting (positions from the cursor, the hole trees of segments and chunks)
// and its memory (segments of ended tickets given back, recovery's gaps costing nothing).
#include "engine/line.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "engine/epoch.h"

namespace anteroom {
namespace {

void publish(Line& line, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t seq = 0;
    ASSERT_TRUE(line.claim(&seq));
    Slot& s = line.slot_for_publish(seq);
    s.state = pack_state(TicketState::kWaiting, EndReason::kNone);
  }
}

// Ends ticket `seq` the way the owner does: the state, a hole if at or above the cursor,
// and the end counted.
void end(Line& line, uint64_t seq) {
  Slot* s = line.find(seq);
  s->state = pack_state(TicketState::kLeft, EndReason::kLeft);
  line.add_hole(seq, *s);
  line.ended(seq, *s);
}

void drain_retired() {
  for (int i = 0; i < 4; ++i) epoch::reclaim();
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
  constexpr uint64_t kN = 20'000;  // spans segments 0..19
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

// Across a chunk boundary (a chunk holds 1,048,576 tickets): positions still match a count
// one by one, with holes on both sides and the cursor in the first chunk.
TEST(Line, HolesAcrossChunksMatchABruteForceCount) {
  Line line;
  const uint64_t n = Line::kChunk + 5000;
  publish(line, n);
  std::vector<bool> waiting(n, true);
  std::mt19937_64 rng(7);
  for (int k = 0; k < 3000; ++k) {
    const uint64_t seq = Line::kChunk - 4000 + rng() % 9000;
    if (!waiting[seq]) continue;
    end(line, seq);
    waiting[seq] = false;
  }
  for (uint64_t i = 0; i < Line::kChunk - 6000; ++i) waiting[i] = false;
  line.advance_cursor(Line::kChunk - 6000);
  uint64_t brute = 0;
  for (uint64_t seq = 0; seq < n; ++seq) {
    if (seq % 101 == 0 || seq == n - 1) {
      ASSERT_EQ(line.waiting_before(seq), brute) << seq;
    }
    brute += waiting[seq];
  }
}

// Memory follows the live tickets: segments whose tickets all ended and that lie below the
// cursor are given back; their tickets read as an ended sentinel nobody can match.
TEST(Line, SegmentsOfEndedTicketsAreGivenBack) {
  Line line;
  publish(line, 10 * Line::kSegment);
  const size_t full = line.bytes_allocated();
  for (uint64_t seq = 0; seq < 5 * Line::kSegment; ++seq) end(line, seq);
  EXPECT_LT(line.bytes_allocated(), full * 6 / 10);
  line.advance_cursor(5 * Line::kSegment + 3);
  EXPECT_TRUE(Line::is_sentinel(line.find(17)));
  EXPECT_FALSE(Line::is_sentinel(line.find(5 * Line::kSegment)));
  EXPECT_EQ(line.waiting_before(10 * Line::kSegment), 5 * Line::kSegment - 3);
  // A ticket below the cursor that ends last gives its segment back when it ends.
  Slot* late = line.find(5 * Line::kSegment);
  late->state = pack_state(TicketState::kAllowed, EndReason::kNone);  // admitted, holding
  line.advance_cursor(6 * Line::kSegment + 1);
  for (uint64_t seq = 5 * Line::kSegment + 1; seq < 6 * Line::kSegment; ++seq) end(line, seq);
  EXPECT_FALSE(Line::is_sentinel(line.find(5 * Line::kSegment + 1)));  // still held
  end(line, 5 * Line::kSegment);
  EXPECT_TRUE(Line::is_sentinel(line.find(5 * Line::kSegment + 1)));
  drain_retired();
}

// A waiting ticket at the head that never moves does not pin the memory behind it: the
// segments after it whose tickets all ended go back too, and positions stay exact.
TEST(Line, EndedSegmentsBehindAWaitingHeadAreGivenBack) {
  Line line;
  publish(line, 20 * Line::kSegment);
  const size_t full = line.bytes_allocated();
  // Ticket 0 waits for ever; everyone from 1,024 to 16,383 leaves; 16,384 on wait too.
  for (uint64_t seq = Line::kSegment; seq < 16 * Line::kSegment; ++seq) end(line, seq);
  EXPECT_LT(line.bytes_allocated(), full * 4 / 10);
  EXPECT_TRUE(Line::is_sentinel(line.find(5000)));
  EXPECT_EQ(line.cursor(), 0u);
  EXPECT_EQ(line.waiting_before(16 * Line::kSegment), Line::kSegment);
  EXPECT_EQ(line.waiting_before(16 * Line::kSegment + 7), Line::kSegment + 7);
  EXPECT_EQ(line.waiting(), 5 * Line::kSegment);
  // The head goes: the cursor passes the given-back segments and the counts still hold.
  for (uint64_t seq = 0; seq < Line::kSegment; ++seq) end(line, seq);
  line.advance_cursor(16 * Line::kSegment);
  EXPECT_EQ(line.waiting_before(16 * Line::kSegment + 7), 7u);
  EXPECT_EQ(line.waiting(), 4 * Line::kSegment);
  drain_retired();
}

// Two million tickets pass through with at most 10,000 live: the line's memory stays within
// twice what 10,000 tickets take.
TEST(Line, MemoryFollowsTheLiveTicketsNotTheTotal) {
  constexpr uint64_t kLive = 10'000;
  Line ten_thousand;
  publish(ten_thousand, kLive);
  const size_t budget = 2 * ten_thousand.bytes_allocated();
  Line line;
  uint64_t next_end = 0;
  size_t peak = 0;
  for (uint64_t joined = 0; joined < 2'000'000; ++joined) {
    publish(line, 1);
    if (joined + 1 - next_end > kLive) {  // the oldest leaves; the line moves up
      end(line, next_end++);
      line.advance_cursor(next_end);
    }
    peak = std::max(peak, line.bytes_allocated());
  }
  EXPECT_LE(peak, budget) << "peak " << peak << " bytes, 10k tickets take " << budget / 2;
  drain_retired();
}

// Recovery's numbers without a ticket cost no memory, however far apart the tickets are.
TEST(Line, RecoveredGapsCostNoMemory) {
  Line line;
  const uint64_t far = 20'000'000;
  line.restore_begin(far + 2, 3);
  for (uint64_t seq : {uint64_t{1}, uint64_t{3}, far, far + 1}) {
    Slot& s = line.restore_slot(seq);
    s.state =
        pack_state(seq == 1 ? TicketState::kAllowed : TicketState::kWaiting, EndReason::kNone);
  }
  line.restore_end();
  EXPECT_LT(line.bytes_allocated(), size_t{1} << 20);  // a few segments, not 20 million slots
  EXPECT_EQ(line.waiting_before(far), 1u);             // only ticket 3 waits ahead of it
  EXPECT_EQ(line.waiting_before(far + 1), 2u);
  EXPECT_EQ(line.waiting(), 3u);
  EXPECT_TRUE(Line::is_sentinel(line.find(far / 2)));
  EXPECT_EQ(line.skip_ended(5000), far - (far % Line::kSegment));
  drain_retired();
}

}  // namespace
}  // namespace anteroom
