// Room internals that the public interface cannot reach deterministically.
#include "engine/room.h"

#include <gtest/gtest.h>

#include <vector>

namespace anteroom {
namespace {

struct CollectingSink : EventSink {
  void emit(Event&& e) override { events.push_back(std::move(e)); }
  std::vector<Event> events;
};

TEST(Room, AdmissionStopsAtAJoinThatClaimedButHasNotPublished) {
  ManualClock clock;
  IdCodec codec;
  RoomConfig config;
  config.capacity = 0;
  config.admission = AdmissionMode::kManual;
  EngineTotals totals;
  RoomEnv env{codec, clock, nullptr, clock.now_ms(), totals};
  CollectingSink sink;
  Room room("r", config, env, sink);

  auto first = room.join(JoinRequest{});
  uint64_t in_flight = 0;  // a join between claim and publish
  ASSERT_TRUE(room.line_for_test().claim(&in_flight));
  auto third = room.join(JoinRequest{});
  ASSERT_TRUE(first.is_ok() && third.is_ok());
  EXPECT_EQ(third->ticket.position, 3u);  // the in-flight join counts as ahead

  EXPECT_EQ(room.admit(10), 1u);  // only the one before the gap
  EXPECT_EQ(room.status(id_view(third->ticket.id), false)->state, TicketState::kWaiting);

  Slot& slot = room.line_for_test().slot_for_publish(in_flight);
  slot.last_seen = 0;
  slot.state = pack_state(TicketState::kWaiting, EndReason::kNone);
  EXPECT_EQ(room.admit(10), 2u);
  EXPECT_EQ(room.status(id_view(third->ticket.id), false)->state, TicketState::kAllowed);
}

}  // namespace
}  // namespace anteroom
