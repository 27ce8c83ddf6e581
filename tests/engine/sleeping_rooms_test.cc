// Work when it is due: run_all passes a room (counted by EngineStats::room_passes) only when
// something in it is due (an expiry, an admission token while someone waits) or a write woke
// it, and next_due_ms says when that is, to the millisecond. Rooms with nothing that can come
// due sleep. Against the sharded engine and the persistent one over it (the mutex yardstick
// passes every room every time).
#include "tests/engine/engine_fixture.h"

namespace anteroom::testing {
namespace {

class SleepingRooms : public EngineTest {
 protected:
  uint64_t passes() { return engine_->stats().room_passes; }
  // Long enough for what the rooms' writes called for to be done, and the rate to settle.
  void settle() {
    for (int i = 0; i < 3; ++i) {
      clock_->advance_ms(1000);
      engine_->run_all();
    }
  }
};

TEST_P(SleepingRooms, IdleRoomsCostNoPass) {
  for (int i = 0; i < 1000; ++i) make_room("r" + std::to_string(i), config(10));
  engine_->run_all();
  EXPECT_GE(passes(), 1000u) << "a new room is passed";
  settle();
  const uint64_t before = passes();
  for (int i = 0; i < 100; ++i) {
    clock_->advance_ms(5);
    engine_->run_all();
  }
  EXPECT_EQ(passes() - before, 0u) << "1,000 empty rooms, 100 runs";
}

TEST_P(SleepingRooms, ALiveRoomIsPassedOnlyAtItsDeadline) {
  RoomConfig c = config(0, AdmissionMode::kManual);
  c.heartbeat_timeout_seconds = 60;
  make_room("r", c);
  const int64_t joined = clock_->now_ms();  // the engine's start: tick 0 of the slot times
  const std::string t = join("r");
  engine_->run_all();
  const int64_t deadline = joined + 60'000;
  EXPECT_EQ(engine_->next_due_ms(), deadline) << "the heartbeat deadline, to the ms";
  const uint64_t before = passes();
  for (int i = 0; i < 10; ++i) {
    clock_->advance_ms(5'000);
    engine_->run_all();
  }
  EXPECT_EQ(passes() - before, 0u) << "nothing due for 50 s: no pass";
  clock_->advance_ms(deadline - 1 - clock_->now_ms());
  engine_->run_all();
  EXPECT_EQ(state("r", t), TicketState::kWaiting) << "1 ms before its deadline";
  clock_->advance_ms(1);
  engine_->run_all();
  EXPECT_EQ(state("r", t), TicketState::kExpired) << "at its deadline";
  EXPECT_EQ(passes() - before, 1u) << "one pass, at the deadline";
}

TEST_P(SleepingRooms, AHeartbeatMovesTheDeadlineLaterAndThePassThenFindsIt) {
  RoomConfig c = config(0, AdmissionMode::kManual);
  c.heartbeat_timeout_seconds = 60;
  make_room("r", c);
  const int64_t start = clock_->now_ms();
  const std::string t = join("r");
  engine_->run_all();
  clock_->advance_ms(30'000);
  ASSERT_TRUE(engine_->heartbeat("r", t).is_ok());  // a read: no wake, the old time stands
  EXPECT_EQ(engine_->next_due_ms(), start + 60'000);
  clock_->advance_ms(30'000);
  engine_->run_all();
  EXPECT_EQ(state("r", t), TicketState::kWaiting) << "seen 30 s ago";
  EXPECT_EQ(engine_->next_due_ms(), start + 90'000) << "the pass found the new deadline";
}

TEST_P(SleepingRooms, ASessionShorterThanTheAdmissionIsExpiredOnTime) {
  RoomConfig c = config(1);
  c.allowed_ttl_seconds = 300;
  c.session_ttl_seconds = 10;
  make_room("r", c);
  const std::string t = join("r");
  engine_->run_all();
  ASSERT_EQ(state("r", t), TicketState::kAllowed);
  clock_->advance_ms(1'000);
  ASSERT_TRUE(engine_->activate("r", t).is_ok());  // a write: its deadline is sooner
  engine_->run_all();
  clock_->advance_ms(9'999);
  engine_->run_all();
  EXPECT_EQ(state("r", t), TicketState::kActive) << "1 ms before the session's end";
  clock_->advance_ms(1);
  engine_->run_all();
  EXPECT_EQ(state("r", t), TicketState::kExpired);
  EXPECT_EQ(peek("r", t).reason, EndReason::kSessionIdle);
}

// A sweep reads every live ticket, so in a huge room the next waits 1 ms per 2,000 read:
// here 400,001 tickets put it 200 ms on, past the next deadline's 100.
TEST_P(SleepingRooms, AHugeRoomsSweepsAreSpacedByWhatTheyRead) {
  RoomConfig c = config(0, AdmissionMode::kManual);
  c.heartbeat_timeout_seconds = 1;
  make_room("r", c);
  const int64_t start = clock_->now_ms();
  for (int i = 0; i < 400'000; ++i) ASSERT_TRUE(engine_->join("r", "").is_ok());
  clock_->advance_ms(100);
  const std::string last = join("r");
  clock_->advance_ms(900);
  engine_->run_all();
  EXPECT_EQ(engine_->room_info("r")->counters.waiting, 1u) << "the first 400,000 expired";
  EXPECT_EQ(engine_->next_due_ms(), start + 1'200) << "not at its deadline, start + 1,100";
  clock_->advance_ms(100);
  engine_->run_all();
  EXPECT_EQ(state("r", last), TicketState::kWaiting);
  clock_->advance_ms(100);
  engine_->run_all();
  EXPECT_EQ(state("r", last), TicketState::kExpired);
}

TEST_P(SleepingRooms, ARateCappedRoomIsDueAtItsNextToken) {
  RoomConfig c = config(0);
  c.admit_per_second = 4;  // a token each 250 ms
  make_room("r", c);
  std::vector<std::string> tickets;
  for (int i = 0; i < 6; ++i) tickets.push_back(join("r"));
  engine_->run_all();
  ASSERT_EQ(state("r", tickets[3]), TicketState::kAllowed) << "the full bucket: 4";
  ASSERT_EQ(state("r", tickets[4]), TicketState::kWaiting);
  EXPECT_EQ(engine_->next_due_ms(), clock_->now_ms() + 250);
  clock_->advance_ms(249);
  engine_->run_all();
  EXPECT_EQ(state("r", tickets[4]), TicketState::kWaiting);
  clock_->advance_ms(1);
  engine_->run_all();
  EXPECT_EQ(state("r", tickets[4]), TicketState::kAllowed) << "its token came";
  EXPECT_EQ(state("r", tickets[5]), TicketState::kWaiting);
}

TEST_P(SleepingRooms, AJoinWakesASleepingRoomAndItsDeadlinesHold) {
  RoomConfig c = config(0, AdmissionMode::kManual);
  c.heartbeat_timeout_seconds = 5;
  make_room("r", c);
  engine_->leave("r", join("r"));
  settle();
  const uint64_t asleep = passes();
  engine_->run_all();
  ASSERT_EQ(passes(), asleep) << "the room sleeps";
  const std::string t = join("r");
  engine_->run_all();
  clock_->advance_s(6);
  engine_->run_all();
  EXPECT_EQ(state("r", t), TicketState::kExpired) << "the woken room's deadline held";
  EXPECT_EQ(peek("r", t).reason, EndReason::kAbandoned);
}

TEST_P(SleepingRooms, AConfigChangeWakesASleepingRoom) {
  make_room("r", config(0, AdmissionMode::kManual));
  const std::string t = join("r");
  ASSERT_EQ(state("r", t), TicketState::kWaiting);
  settle();  // alive: the ticket waits (and is seen)
  engine_->heartbeat("r", t);
  make_room("r", config(1, AdmissionMode::kAuto));
  engine_->run_all();
  EXPECT_EQ(state("r", t), TicketState::kAllowed);
}

TEST_P(SleepingRooms, ADeletedSleepingRoomIsNeverPassedAgain) {
  make_room("a", config(10));
  make_room("b", config(10));
  settle();
  ASSERT_TRUE(engine_->delete_room("a").is_ok());
  make_room("b", config(11));  // wakes b
  const uint64_t before = passes();
  engine_->run_all();
  EXPECT_EQ(passes() - before, 1u) << "b alone";
}

// What the server's pump sleeps on: next_due_ms (idle() once every room sleeps), the wake hook when
// a write gives a sleeping engine work, and the room set's version.
TEST_P(SleepingRooms, AnIdleEngineSaysSoAndAWriteRingsItsHook) {
  int rings = 0;
  engine_->set_wake_hook([&rings](size_t) { ++rings; });
  make_room("r", config(0, AdmissionMode::kManual));
  EXPECT_EQ(rings, 1) << "a new room needs its first pass";
  EXPECT_FALSE(engine_->idle());
  settle();
  ASSERT_TRUE(engine_->idle()) << "an empty room sleeps";
  rings = 0;
  const std::string t = join("r");
  EXPECT_EQ(rings, 1) << "the join woke the room";
  EXPECT_FALSE(engine_->idle());
  join("r");
  EXPECT_EQ(rings, 1) << "a room awake already rings nothing";
  engine_->run_all();
  EXPECT_FALSE(engine_->idle()) << "live tickets have deadlines";
  engine_->leave("r", t);
  settle();
  EXPECT_FALSE(engine_->idle()) << "one ticket still waits";
}

TEST_P(SleepingRooms, TheRoomSetsVersionMovesWithRoomsMadeAndDeletedOnly) {
  const uint64_t v0 = engine_->room_set_version();
  ASSERT_NE(v0, 0u) << "the engine can tell";
  make_room("r", config(1));
  const uint64_t v1 = engine_->room_set_version();
  EXPECT_NE(v1, v0);
  make_room("r", config(2));  // a change of config
  join("r");
  EXPECT_EQ(engine_->room_set_version(), v1);
  ASSERT_TRUE(engine_->delete_room("r").is_ok());
  EXPECT_NE(engine_->room_set_version(), v1);
  EXPECT_FALSE(engine_->idle()) << "the deleted room's memory waits to be freed";
  settle();
  EXPECT_TRUE(engine_->idle());
}

// Lanes (what the server runs side by side, one thread each): a room belongs to one lane,
// its writes ring that lane's hook, run_lane passes only its own rooms, and lane_due_ms is
// that lane's deadline alone.
TEST(Lanes, EachLaneRunsOnlyItsOwnRoomsAndSaysItsOwnDeadline) {
  auto clock = std::make_shared<ManualClock>();
  EngineOptions o;
  o.shards = 4;
  o.clock = clock;
  auto e = make_sharded_engine(o);
  ASSERT_EQ(e->lanes(), 4u);
  std::vector<int> rings(4, 0);
  e->set_wake_hook([&rings](size_t lane) { ++rings.at(lane); });
  RoomConfig c;
  c.admission = AdmissionMode::kManual;
  c.heartbeat_timeout_seconds = 60;
  std::vector<size_t> lane_of;  // of rooms r0..r15, by the lane their creation rang
  for (int i = 0; i < 16; ++i) {
    const std::vector<int> before = rings;
    ASSERT_TRUE(e->put_room("r" + std::to_string(i), c).is_ok());
    size_t rang = 4;
    for (size_t l = 0; l < 4; ++l) {
      if (rings[l] != before[l]) rang = l;
    }
    ASSERT_LT(rang, 4u) << "a new room rings its lane";
    lane_of.push_back(rang);
  }
  e->run_all();
  ASSERT_TRUE(e->idle()) << "empty rooms sleep";
  // A join into one room: its lane alone is due, and another lane's pass leaves it be.
  const size_t lane = lane_of[0], other = (lane + 1) % 4;
  std::fill(rings.begin(), rings.end(), 0);
  ASSERT_TRUE(e->join("r0", "").is_ok());
  EXPECT_EQ(rings[lane], 1);
  EXPECT_EQ(rings[other], 0);
  EXPECT_LE(e->lane_due_ms(lane), clock->now_ms()) << "woken: due now";
  EXPECT_EQ(e->lane_due_ms(other), kNoDeadline);
  const uint64_t passes = e->stats().room_passes;
  e->run_lane(other);
  EXPECT_EQ(e->stats().room_passes, passes) << "not its room";
  e->run_lane(lane);
  EXPECT_EQ(e->stats().room_passes, passes + 1);
  EXPECT_EQ(e->lane_due_ms(lane), clock->now_ms() + 60'000) << "the heartbeat deadline";
  EXPECT_EQ(e->lane_due_ms(other), kNoDeadline);
  EXPECT_EQ(e->next_due_ms(), clock->now_ms() + 60'000) << "the earliest lane's";
}

INSTANTIATE_TEST_SUITE_P(Engines, SleepingRooms,
                         ::testing::Values(EngineKind{"sharded", &make_sharded_engine},
                                           EngineKind{"persistent", &TempDirEngine::make}),
                         kind_name);

}  // namespace
}  // namespace anteroom::testing
