// Rooms with nothing that can come due sleep: run_all makes no pass over them (counted by
// EngineStats::room_passes), and any write wakes them, so what the timer owes a woken room
// (an admission, an expiry) still happens. Against the sharded engine and the persistent one
// over it (the mutex yardstick passes every room every time).
#include "tests/engine/engine_fixture.h"

namespace anteroom::testing {
namespace {

class SleepingRooms : public EngineTest {
 protected:
  uint64_t passes() { return engine_->stats().room_passes; }
  // Long enough for every idle room to be seen idle by a sweep, and so fall asleep.
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

TEST_P(SleepingRooms, ALiveRoomIsPassedEveryTime) {
  make_room("r", config(0, AdmissionMode::kManual));
  join("r");
  settle();
  const uint64_t before = passes();
  for (int i = 0; i < 10; ++i) engine_->run_all();
  EXPECT_EQ(passes() - before, 10u) << "its heartbeat deadline can come due";
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
  clock_->advance_s(6);
  engine_->run_all();
  engine_->run_all();  // a sweep is due once a second
  EXPECT_EQ(state("r", t), TicketState::kExpired) << "the woken room's sweep ran";
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

// What the server's pump sleeps on: idle() once every room sleeps, the wake hook when a
// write gives a sleeping engine work, and the room set's version.
TEST_P(SleepingRooms, AnIdleEngineSaysSoAndAWriteRingsItsHook) {
  int rings = 0;
  engine_->set_wake_hook([&rings] { ++rings; });
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

INSTANTIATE_TEST_SUITE_P(Engines, SleepingRooms,
                         ::testing::Values(EngineKind{"sharded", &make_sharded_engine},
                                           EngineKind{"persistent", &TempDirEngine::make}),
                         kind_name);

}  // namespace
}  // namespace anteroom::testing
