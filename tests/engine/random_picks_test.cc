// Random mode picks with a keyed PRF (HMAC-SHA256) under a key of its own, derived from the
// engine's secret: not from the id key whose masks visitors see something of in their own
// tickets. So the picks follow the secret and nothing else: the same secret picks the same
// tickets whatever the id key (every node of a cluster picks alike), another secret picks
// others. (They were mix64 under the id key.)
#include <gtest/gtest.h>

#include <set>

#include "engine/sharded_engine.h"

namespace anteroom {
namespace {

// The seqs a random room admits first, 10 of 200 waiting.
std::set<uint64_t> picks(std::array<uint64_t, 2> id_key, uint8_t secret,
                         const std::string& room = "r") {
  EngineOptions o;
  o.shards = 1;
  o.clock = std::make_shared<ManualClock>();
  o.id_key = id_key;
  o.secret = std::array<uint8_t, 32>{secret};
  auto e = make_sharded_engine(o);
  RoomConfig c;
  c.capacity = 0;
  c.admission = AdmissionMode::kManual;
  c.mode = RoomMode::kRandom;
  EXPECT_TRUE(e->put_room(room, c).is_ok());
  std::vector<std::string> ids;
  for (int i = 0; i < 200; ++i)
    ids.emplace_back(id_view(e->join(room, JoinRequest{}).value().ticket.id));
  EXPECT_EQ(e->admit(room, 10).value(), 10u);
  std::set<uint64_t> admitted;
  for (const auto& id : ids) {
    auto v = e->peek(room, id);
    if (v.is_ok() && v->state == TicketState::kAllowed) admitted.insert(v->seq);
  }
  EXPECT_EQ(admitted.size(), 10u);
  return admitted;
}

TEST(RandomPicks, FollowTheSecretNotTheIdKey) {
  EXPECT_EQ(picks({1, 2}, 7), picks({3, 4}, 7)) << "the id key changed the picks";
  EXPECT_NE(picks({1, 2}, 7), picks({1, 2}, 8)) << "the secret did not change the picks";
}

// The review's finding: two rooms of the same shape picked the same seqs, so what one showed
// foretold the other's picks.
TEST(RandomPicks, RoomsOfTheSameShapePickApart) {
  EXPECT_NE(picks({1, 2}, 7, "a"), picks({1, 2}, 7, "b"));
}

}  // namespace
}  // namespace anteroom
