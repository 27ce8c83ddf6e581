// Lanes and probation (docs/policies.md, "Lanes"; docs/api.md, the gate's own admissions),
// against every engine: the sharded one, the one-mutex yardstick (which walks the schedule
// turn by turn, positions too), the persistent one and two cluster nodes.
#include <algorithm>
#include <atomic>
#include <map>
#include <thread>

#include "tests/engine/engine_fixture.h"

namespace anteroom::testing {
namespace {

class LanesTest : public EngineTest {
 protected:
  RoomConfig lanes(std::vector<uint32_t> weights, uint32_t capacity = 0,
                   AdmissionMode mode = AdmissionMode::kManual) {
    RoomConfig c = config(capacity, mode);
    c.lanes = std::move(weights);
    return c;
  }
  std::string join_lane(const std::string& room, uint8_t lane) {
    JoinRequest req;
    req.lane = lane;
    auto r = engine_->join(room, req);
    EXPECT_TRUE(r.is_ok()) << r.status().message();
    return r.is_ok() ? std::string(id_view(r->ticket.id)) : std::string();
  }
  // The tickets admitted since the last call, in the order they were.
  std::vector<std::string> admitted() {
    std::vector<std::string> out;
    for (const Event& e : events()) {
      if (e.kind == Event::Kind::kAdmitted) out.emplace_back(id_view(e.ticket));
    }
    return out;
  }
};

TEST_P(LanesTest, AdmissionsTakeTheLanesTurnsInJoinOrderInsideEachLane) {
  make_room("r", lanes({3, 1}));
  std::vector<std::string> members, others;
  for (int i = 0; i < 8; ++i) {  // the public joined first: order across lanes does not count
    others.push_back(join_lane("r", 1));
    members.push_back(join_lane("r", 0));
  }
  events();
  ASSERT_EQ(engine_->admit("r", 8).value(), 8u);
  // Weights 3 and 1: turns A A B A A A B A (lane_schedule.h).
  EXPECT_EQ(admitted(), (std::vector<std::string>{members[0], members[1], others[0], members[2],
                                                  members[3], members[4], others[1], members[5]}));
}

TEST_P(LanesTest, APositionIsTheAdmissionThatWillTakeTheTicket) {
  make_room("r", lanes({2, 5, 1}));
  std::vector<std::string> all;
  for (int i = 0; i < 30; ++i) all.push_back(join_lane("r", static_cast<uint8_t>(i * 7 % 3)));
  ASSERT_EQ(engine_->admit("r", 4).value(), 4u);  // somewhere into the schedule
  ASSERT_TRUE(engine_->leave("r", all[20]).is_ok());
  std::map<std::string, uint64_t> told;
  for (const std::string& t : all) {
    if (state("r", t) == TicketState::kWaiting) told[t] = position("r", t);
  }
  events();
  uint64_t n = 0;
  while (engine_->admit("r", 1).value() == 1) {
    for (const std::string& t : admitted()) {
      ++n;
      EXPECT_EQ(told[t], n) << t;
    }
  }
  EXPECT_EQ(n, told.size());
}

TEST_P(LanesTest, ALaneNobodyWaitsInPassesItsTurns) {
  make_room("r", lanes({1000, 1}));
  std::vector<std::string> others;
  for (int i = 0; i < 5; ++i) others.push_back(join_lane("r", 1));
  EXPECT_EQ(position("r", others[4]), 5u);
  events();
  ASSERT_EQ(engine_->admit("r", 5).value(), 5u);
  EXPECT_EQ(admitted(), others);
}

TEST_P(LanesTest, AJoinWithoutALaneOrPastTheLastWaitsInTheLast) {
  make_room("r", lanes({1, 1}));
  const std::string first = join("r");  // no lane named
  const std::string far = join_lane("r", 9);
  const std::string member = join_lane("r", 0);
  EXPECT_EQ(peek("r", first).lane, 1u);
  EXPECT_EQ(peek("r", far).lane, 1u);
  EXPECT_EQ(peek("r", member).lane, 0u);
  EXPECT_EQ(position("r", member), 1u);  // lane 0's first turn comes first (a tie)
  EXPECT_EQ(position("r", first), 2u);
  EXPECT_EQ(position("r", far), 3u);
}

TEST_P(LanesTest, AnAutoRoomFillsItsCapacityByTheLanes) {
  make_room("r", lanes({1, 1}, 2, AdmissionMode::kAuto));
  const std::string a = join_lane("r", 1), b = join_lane("r", 1);  // admitted at once
  const std::string c = join_lane("r", 1), d = join_lane("r", 0);
  engine_->run_all();
  EXPECT_EQ(state("r", a), TicketState::kAllowed);
  EXPECT_EQ(state("r", b), TicketState::kAllowed);
  EXPECT_EQ(state("r", c), TicketState::kWaiting);
  ASSERT_TRUE(engine_->leave("r", a).is_ok());
  engine_->run_all();
  // The turns so far went to lane 1 twice: lane 0's next turn comes first.
  EXPECT_EQ(state("r", d), TicketState::kAllowed);
  EXPECT_EQ(state("r", c), TicketState::kWaiting);
}

TEST_P(LanesTest, LanesSwitchedOnTakeWhoAlreadyWaitsIntoTheLastLane) {
  make_room("r", config(0, AdmissionMode::kManual));
  const std::string early = join("r");
  const std::string member = join_lane("r", 0);  // no lanes yet: its lane is kept
  make_room("r", lanes({3, 1}));
  EXPECT_EQ(position("r", member), 1u);
  EXPECT_EQ(position("r", early), 2u);
  make_room("r", config(0, AdmissionMode::kManual));  // off again: join order
  EXPECT_EQ(position("r", early), 1u);
  EXPECT_EQ(position("r", member), 2u);
}

TEST_P(LanesTest, BadLanesAreRefusedNamingTheField) {
  RoomConfig one = lanes({5});
  EXPECT_EQ(engine_->put_room("r", one).code(), Code::kInvalidArgument);
  RoomConfig zero = lanes({0, 1});
  EXPECT_NE(engine_->put_room("r", zero).message().find("lanes"), std::string::npos);
  RoomConfig heavy = lanes({1001, 1});
  EXPECT_EQ(engine_->put_room("r", heavy).code(), Code::kInvalidArgument);
  RoomConfig random = lanes({1, 1});
  random.mode = RoomMode::kRandom;
  EXPECT_EQ(engine_->put_room("r", random).code(), Code::kInvalidArgument);
  EXPECT_EQ(engine_->room_info("r").code(), Code::kRoomNotFound);
}

TEST_P(LanesTest, AProbationAdmissionHoldsItsSlotOnlyThatLongUnused) {
  RoomConfig c = config(2);
  c.allowed_ttl_seconds = 300;
  make_room("r", c);
  JoinRequest req;
  req.probation_s = 30;
  auto probed = engine_->join("r", req);
  ASSERT_TRUE(probed.is_ok());
  const std::string p(id_view(probed->ticket.id));
  auto kept = engine_->join("r", req);
  ASSERT_TRUE(kept.is_ok());
  const std::string k(id_view(kept->ticket.id));
  const std::string plain = join("r");  // waits: both slots are held
  engine_->run_all();
  ASSERT_EQ(state("r", p), TicketState::kAllowed);
  EXPECT_EQ(peek("r", p).valid_until_ms, peek("r", p).admitted_at_ms + 30'000);
  ASSERT_TRUE(engine_->activate("r", k).is_ok());  // its visitor came back: a session now
  clock_->advance_s(30);
  engine_->heartbeat("r", plain);
  engine_->run_all();
  EXPECT_EQ(state("r", p), TicketState::kExpired);
  EXPECT_EQ(peek("r", p).reason, EndReason::kAllowedUnused);
  EXPECT_EQ(state("r", k), TicketState::kActive);
  EXPECT_EQ(state("r", plain), TicketState::kAllowed);  // the freed slot went on
  EXPECT_EQ(peek("r", plain).valid_until_ms, peek("r", plain).admitted_at_ms + 300'000);
}

// Joins from two threads while lanes are switched on and off and admissions run: every
// ticket that waits has a place, and the places are 1 to the number waiting, each once (a
// join the switch missed would fall back to join order and share a place).
TEST_P(LanesTest, JoinsRacingALaneSwitchAllFindTheirPlace) {
  make_room("r", config(0, AdmissionMode::kManual));
  std::atomic<bool> stop{false};
  std::vector<std::string> ids[2];
  std::vector<std::thread> joiners;
  for (int t = 0; t < 2; ++t) {
    joiners.emplace_back([&, t] {
      for (int i = 0; i < 400 && !stop.load(); ++i) {
        JoinRequest req;
        req.lane = static_cast<uint8_t>((i + t) % 3);
        auto r = engine_->join("r", req);
        if (r.is_ok()) ids[t].emplace_back(id_view(r->ticket.id));
      }
    });
  }
  for (uint32_t round = 0; round < 6; ++round) {
    make_room("r", round % 3 == 2 ? config(0, AdmissionMode::kManual) : lanes({2 + round, 1, 3}));
    engine_->admit("r", 3);
  }
  make_room("r", lanes({5, 1, 2}));
  for (auto& j : joiners) j.join();
  std::vector<uint64_t> places;
  for (const auto& list : ids) {
    for (const std::string& id : list) {
      auto v = engine_->peek("r", id);
      ASSERT_TRUE(v.is_ok());
      if (v->state == TicketState::kWaiting) places.push_back(v->position);
    }
  }
  std::sort(places.begin(), places.end());
  for (size_t i = 0; i < places.size(); ++i) ASSERT_EQ(places[i], i + 1) << "of " << places.size();
  EXPECT_EQ(places.size(), engine_->room_info("r")->counters.waiting);
}

INSTANTIATE_TEST_SUITE_P(Every, LanesTest, ::testing::ValuesIn(rule_kinds()), kind_name);

}  // namespace
}  // namespace anteroom::testing
