// Memory follows the live tickets and rooms: ended tickets' segments, user entries and
// deleted rooms are given back, a room with one named visitor costs kilobytes, and freeing
// waits for the readers still inside.
#include <latch>
#include <thread>

#include "engine/epoch.h"
#include "tests/engine/engine_fixture.h"

namespace anteroom::testing {
namespace {

class MemoryTest : public EngineTest {};

void drain_retired() {
  for (int i = 0; i < 4; ++i) epoch::reclaim();
}

// Sharded and persistent only: the yardstick keeps every ticket by design.
std::vector<EngineKind> reclaiming_kinds() {
  std::vector<EngineKind> out;
  for (const EngineKind& k : engine_kinds())
    if (std::string(k.name) != "mutex") out.push_back(k);
  return out;
}

TEST_P(MemoryTest, ARoomWithOneNamedVisitorCostsKilobytes) {
  make_room("r", config(10));
  const size_t empty = engine_->stats().bytes_allocated;
  join("r", "the-only-user");
  const size_t one = engine_->stats().bytes_allocated;
  EXPECT_LT(one - empty, size_t{64} << 10);  // was 2 MiB: the user index's whole bucket array
}

TEST_P(MemoryTest, TicketsAndUsersComeAndGoWithoutGrowth) {
  RoomConfig c = config(0, AdmissionMode::kManual);
  make_room("r", c);
  auto round = [&](int r) {
    std::vector<std::string> ids;
    for (int i = 0; i < 20'000; ++i)
      ids.push_back(join("r", "user-" + std::to_string(r * 20'000 + i)));
    for (const std::string& id : ids) engine_->leave("r", id);
    engine_->run_all();
  };
  round(0);
  drain_retired();
  const size_t after_one = engine_->stats().bytes_allocated;
  for (int r = 1; r < 6; ++r) round(r);  // 100,000 more named tickets pass through
  drain_retired();
  EXPECT_LE(engine_->stats().bytes_allocated, after_one + (size_t{64} << 10));
  // The users' entries went with their tickets: the same names get fresh tickets.
  auto again = engine_->join("r", "user-17");
  ASSERT_TRUE(again.is_ok());
  EXPECT_TRUE(again->created);
}

// The review's case: a full room (someone always waiting at the head) while others join
// and leave behind them. The ended tickets' memory goes back all the same.
TEST_P(MemoryTest, ChurnBehindAWaitingHeadDoesNotGrow) {
  make_room("r", config(1));
  join("r");          // admitted: the room is full
  join("r", "head");  // waits at the head for ever
  auto churn = [&](int from, int n) {
    for (int i = from; i < from + n; ++i) {
      std::string id = join("r", std::string(100, 'u') + std::to_string(i));
      engine_->leave("r", id);
    }
    engine_->run_all();
  };
  churn(0, 20'000);
  drain_retired();
  const size_t after_one = engine_->stats().bytes_allocated;
  churn(20'000, 100'000);
  drain_retired();
  EXPECT_LE(engine_->stats().bytes_allocated, after_one + (size_t{64} << 10));
}

// A deleted room is freed only once no call is still inside it, and then at once.
TEST_P(MemoryTest, ADeletedRoomIsFreedWhenItsLastReaderLeaves) {
  make_room("r", config(10));
  for (int i = 0; i < 5000; ++i) join("r");
  drain_retired();
  const size_t before = epoch::pending();
  std::latch pinned(1), done(1);
  std::thread reader([&] {
    epoch::Guard inside;  // a call that started before the delete and has not returned
    pinned.count_down();
    done.wait();
  });
  pinned.wait();
  ASSERT_TRUE(engine_->delete_room("r").is_ok());
  drain_retired();
  EXPECT_GT(epoch::pending(), before);  // still held for the reader
  done.count_down();
  reader.join();
  drain_retired();
  EXPECT_EQ(epoch::pending(), before);
}

// What is still waiting to be freed when the process ends stays reachable: the list of
// retired pointers is never destroyed, so a leak check at exit (ASan's, or the fuzzers')
// does not report it. Under ASan this test's process fails at exit if that ever changes.
TEST(Retired, WhatIsRetiredAtExitIsNotReportedAsALeak) {
  auto* left = new std::string(4000, 'x');  // a heap block only the retired list points to
  epoch::retire(
      left, [](void* p) { delete static_cast<std::string*>(p); }, left->size());
  EXPECT_GT(epoch::pending(), 0U);
}

INSTANTIATE_TEST_SUITE_P(Reclaiming, MemoryTest, ::testing::ValuesIn(reclaiming_kinds()),
                         kind_name);

}  // namespace
}  // namespace anteroom::testing
