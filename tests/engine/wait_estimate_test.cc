// The wait estimate (engine/wait_estimate.h) as visitors see it, with a manual clock: short,
// long and mixed sessions, a rate cap, and a room after a burst.
#include <string>
#include <vector>

#include "tests/engine/engine_fixture.h"

namespace anteroom::testing {
namespace {

class WaitEstimateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    clock_ = std::make_shared<ManualClock>();
    EngineOptions o;
    o.clock = clock_;
    o.shards = 1;
    engine_ = make_sharded_engine(o);
  }
  void room(uint32_t capacity, uint32_t admit_per_second = 0) {
    RoomConfig c;
    c.capacity = capacity;
    c.admit_per_second = admit_per_second;
    c.session_ttl_seconds = 3600;
    c.heartbeat_timeout_seconds = 86400;
    ASSERT_TRUE(engine_->put_room("r", c).is_ok());
  }
  std::string join() { return std::string(id_view(engine_->join("r", "").value().ticket.id)); }
  void use(const std::string& id) { ASSERT_TRUE(engine_->activate("r", id).is_ok()); }
  void leave(const std::string& id) { ASSERT_TRUE(engine_->leave("r", id).is_ok()); }
  void run() { engine_->run_all(); }
  TicketView view(const std::string& id) { return engine_->peek("r", id).value(); }
  // Runs `n` holds of `seconds` each through a room of capacity `cap`, `cap` at a time.
  void cycle(int cap, int seconds, int rounds) {
    for (int r = 0; r < rounds; ++r) {
      std::vector<std::string> in;
      for (int i = 0; i < cap; ++i) in.push_back(join());
      run();
      for (const auto& id : in) use(id);
      clock_->advance_s(seconds);
      for (const auto& id : in) leave(id);
      run();
    }
  }

  std::shared_ptr<ManualClock> clock_;
  std::unique_ptr<Engine> engine_;
};

// The report: capacity 1, the one admitted visitor stays 15 minutes; position 1 was told "2 s".
TEST_F(WaitEstimateTest, LongSessionSaysCalculatingThenTheHoldItSaw) {
  room(1);
  std::string a = join();
  use(a);
  std::string b = join();
  clock_->advance_s(1);
  run();
  EXPECT_FALSE(view(b).eta_seconds.has_value()) << "no place has freed yet: calculating";
  clock_->advance_s(899);
  run();
  EXPECT_FALSE(view(b).eta_seconds.has_value());
  leave(a);  // 15 minutes later
  run();
  ASSERT_EQ(view(b).state, TicketState::kAllowed);
  std::string c = join();
  run();
  ASSERT_TRUE(view(c).eta_seconds.has_value());
  EXPECT_GE(*view(c).eta_seconds, 899.0);  // one place per 15 minutes, not per second
  EXPECT_GT(*view(c).eta_high_seconds, *view(c).eta_seconds);
}

TEST_F(WaitEstimateTest, ShortSessions) {
  room(2);
  cycle(2, 10, 3);  // holds of 10 s, two at a time: a place every 5 s
  std::vector<std::string> in = {join(), join()};
  std::vector<std::string> waiting = {join(), join(), join(), join()};
  run();
  ASSERT_TRUE(view(waiting[3]).eta_seconds.has_value());
  EXPECT_NEAR(*view(waiting[3]).eta_seconds, 20.0, 0.5);  // position 4 x 5 s
}

TEST_F(WaitEstimateTest, MixedSessions) {
  room(2);
  for (int r = 0; r < 3; ++r) {  // one of each pair stays 10 s, the other 50 s
    std::string quick = join(), slow = join();
    run();
    clock_->advance_s(10);
    leave(quick);
    clock_->advance_s(40);
    leave(slow);
    run();
  }
  std::vector<std::string> in = {join(), join()};
  std::string w1 = join(), w2 = join();
  run();
  ASSERT_TRUE(view(w2).eta_seconds.has_value());
  EXPECT_NEAR(*view(w2).eta_seconds, 30.0, 0.5);  // mean hold 30 s over 2 places: 15 s each
}

TEST_F(WaitEstimateTest, RateCapIsKnownAtOnce) {
  room(0, 5);
  std::vector<std::string> ids;
  for (int i = 0; i < 60; ++i) ids.push_back(join());
  run();
  const TicketView last = view(ids.back());
  ASSERT_EQ(last.state, TicketState::kWaiting);
  ASSERT_TRUE(last.eta_seconds.has_value());
  EXPECT_NEAR(*last.eta_seconds, static_cast<double>(last.position) / 5.0, 0.01);
}

TEST_F(WaitEstimateTest, AfterABurstTheRunningHoldsCount) {
  room(10);
  cycle(10, 1, 1);  // ten visitors leave after a second: holds of 1 s
  std::vector<std::string> in;
  for (int i = 0; i < 10; ++i) in.push_back(join());
  std::string w = join();
  run();
  const double right_after = view(w).eta_seconds.value_or(0);
  EXPECT_LT(right_after, 1.5);
  clock_->advance_s(60);  // the new ten stay: a minute and counting
  run();
  ASSERT_TRUE(view(w).eta_seconds.has_value());
  EXPECT_GE(*view(w).eta_seconds, 5.9) << "holds run 60 s now: 10 places free no faster than 1/6 s";
}

}  // namespace
}  // namespace anteroom::testing
