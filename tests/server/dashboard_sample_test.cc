// The dashboard's second-by-second sample reads the whole room list only when it must (a
// frame is built, or the room set moved): with 100,000 idle rooms and no dashboard open, it
// looks up the rooms its history keeps, and nothing else.
#include <gtest/gtest.h>

#include <atomic>

#include "engine/forwarding_engine.h"
#include "server/app/dashboard_feed.h"

namespace anteroom {
namespace {

// Counts the whole-list reads; `versioned` false: an engine that cannot tell whether its
// rooms changed (version 0).
class CountingEngine final : public ForwardingEngine {
 public:
  explicit CountingEngine(bool versioned = true)
      : ForwardingEngine(make_sharded_engine()), versioned_(versioned) {}
  std::vector<RoomInfo> rooms() const override {
    ++lists;
    return ForwardingEngine::rooms();
  }
  uint64_t room_set_version() const override {
    return versioned_ ? ForwardingEngine::room_set_version() : 0;
  }
  mutable std::atomic<int> lists{0};

 private:
  const bool versioned_;
};

TEST(DashboardSample, TheWholeListIsReadOnlyWhenTheRoomSetMoved) {
  CountingEngine e;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(e.put_room("r" + std::to_string(i), {}).is_ok());
  DashboardFeed feed;
  feed.sample(1'000, e, false);
  EXPECT_EQ(e.lists, 1) << "the first sample reads the list";
  ASSERT_TRUE(e.join("r1", JoinRequest{}).is_ok());
  feed.sample(2'000, e, false);
  feed.sample(3'000, e, false);
  EXPECT_EQ(e.lists, 1) << "the same rooms: looked up one by one";
  EXPECT_EQ(feed.history().samples("r1").size(), 3u);
  HistorySample s;
  ASSERT_TRUE(feed.history().latest("r1", &s));
  EXPECT_EQ(s.waiting + s.active, 1u) << "a lookup reads the room as it is";

  ASSERT_TRUE(e.put_room("r3", {}).is_ok());
  feed.sample(4'000, e, false);
  EXPECT_EQ(e.lists, 2) << "a new room: the list again";
  EXPECT_EQ(feed.history().samples("r3").size(), 1u);
  ASSERT_TRUE(e.delete_room("r0").is_ok());
  feed.sample(5'000, e, false);
  EXPECT_EQ(e.lists, 3) << "a deleted room: the list again";
  EXPECT_TRUE(feed.history().samples("r0").empty());
  EXPECT_EQ(feed.history().rooms(), 3u);

  feed.sample(6'000, e, true);
  EXPECT_EQ(e.lists, 4) << "a frame carries every room";
  ASSERT_NE(feed.frame(), nullptr);
}

// An engine that cannot tell whether its rooms changed is listed every time.
TEST(DashboardSample, AnEngineWithoutAVersionIsListedEachSecond) {
  CountingEngine e(false);
  ASSERT_TRUE(e.put_room("r", {}).is_ok());
  DashboardFeed feed;
  for (int i = 1; i <= 3; ++i) feed.sample(i * 1'000, e, false);
  EXPECT_EQ(e.lists, 3);
}

}  // namespace
}  // namespace anteroom
