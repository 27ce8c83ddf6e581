// The three expiries and the ETA, driven by the manual clock, against both engines.
#include "tests/engine/engine_fixture.h"

namespace anteroom::testing {
namespace {

class ExpiryTest : public EngineTest {};

TEST_P(ExpiryTest, AllowedNotUsedInTimeExpiresAndFreesItsSlot) {
  RoomConfig c = config(1);
  c.allowed_ttl_seconds = 30;
  make_room("r", c);
  std::string a = join("r");
  std::string b = join("r");
  engine_->run_all();
  ASSERT_EQ(state("r", a), TicketState::kAllowed);
  clock_->advance_s(29);
  engine_->heartbeat("r", b);
  engine_->run_all();
  EXPECT_EQ(state("r", a), TicketState::kAllowed);
  clock_->advance_s(1);
  engine_->heartbeat("r", b);
  events();
  engine_->run_all();
  EXPECT_EQ(state("r", a), TicketState::kExpired);
  EXPECT_EQ(peek("r", a).reason, EndReason::kAllowedUnused);
  EXPECT_EQ(state("r", b), TicketState::kAllowed);
  bool told = false;
  for (const Event& e : events()) {
    told |= e.kind == Event::Kind::kExpired && id_view(e.ticket) == a &&
            e.reason == EndReason::kAllowedUnused;
  }
  EXPECT_TRUE(told);
  EXPECT_EQ(engine_->room_info("r")->counters.expired_allowed_unused, 1u);
}

TEST_P(ExpiryTest, ActiveIdleForTheSessionTtlExpires) {
  RoomConfig c = config(1);
  c.session_ttl_seconds = 60;
  make_room("r", c);
  std::string a = join("r");
  engine_->run_all();
  ASSERT_TRUE(engine_->activate("r", a).is_ok());
  clock_->advance_s(59);
  engine_->run_all();
  ASSERT_TRUE(engine_->activate("r", a).is_ok());  // used again: the session is refreshed
  clock_->advance_s(59);
  engine_->run_all();
  EXPECT_EQ(state("r", a), TicketState::kActive);
  clock_->advance_s(1);
  engine_->run_all();
  EXPECT_EQ(state("r", a), TicketState::kExpired);
  EXPECT_EQ(peek("r", a).reason, EndReason::kSessionIdle);
  EXPECT_EQ(engine_->room_info("r")->counters.active, 0u);
  EXPECT_EQ(engine_->room_info("r")->counters.expired_session_idle, 1u);
}

TEST_P(ExpiryTest, WaitingNotSeenIsAbandonedAndLeavesTheLine) {
  RoomConfig c = config(5, AdmissionMode::kManual);
  c.heartbeat_timeout_seconds = 10;
  make_room("r", c);
  std::string a = join("r");
  std::string b = join("r");
  std::string d = join("r");
  clock_->advance_s(6);
  engine_->status("r", b);     // a poll
  engine_->heartbeat("r", d);  // an open stream
  clock_->advance_s(5);
  engine_->run_all();
  EXPECT_EQ(state("r", a), TicketState::kExpired);
  EXPECT_EQ(peek("r", a).reason, EndReason::kAbandoned);
  EXPECT_EQ(position("r", b), 1u);
  EXPECT_EQ(position("r", d), 2u);
  EXPECT_EQ(engine_->room_info("r")->counters.expired_abandoned, 1u);
}

TEST_P(ExpiryTest, AbandonedTicketIsSkippedAtAdmission) {
  RoomConfig c = config(5, AdmissionMode::kManual);
  c.heartbeat_timeout_seconds = 10;
  make_room("r", c);
  std::string a = join("r");
  std::string b = join("r");
  clock_->advance_s(11);
  engine_->status("r", b);
  ASSERT_EQ(engine_->admit("r", 1).value(), 1u);  // no sweep ran: admission itself skips a
  EXPECT_EQ(state("r", a), TicketState::kExpired);
  EXPECT_EQ(state("r", b), TicketState::kAllowed);
}

TEST_P(ExpiryTest, PeekIsNotAHeartbeat) {
  RoomConfig c = config(5, AdmissionMode::kManual);
  c.heartbeat_timeout_seconds = 10;
  make_room("r", c);
  std::string a = join("r");
  clock_->advance_s(9);
  peek("r", a);
  clock_->advance_s(2);
  engine_->run_all();
  EXPECT_EQ(state("r", a), TicketState::kExpired);
}

TEST_P(ExpiryTest, EtaIsUnknownUntilAnAdmissionRateIsObserved) {
  make_room("r", config(0, AdmissionMode::kManual));
  std::vector<std::string> ids;
  for (int i = 0; i < 10; ++i) ids.push_back(join("r"));
  EXPECT_FALSE(peek("r", ids[5]).eta_seconds.has_value());
  engine_->admit("r", 2);  // 2 in this second: 2/s
  TicketView v = peek("r", ids[5]);
  ASSERT_TRUE(v.eta_seconds.has_value());
  EXPECT_EQ(v.position, 4u);
  EXPECT_DOUBLE_EQ(*v.eta_seconds, 2.0);
  clock_->advance_s(1);
  engine_->admit("r", 4);  // 6 over 2 seconds: 3/s
  v = peek("r", ids[9]);
  EXPECT_EQ(v.position, 4u);
  EXPECT_DOUBLE_EQ(*v.eta_seconds, 4.0 / 3.0);
  EXPECT_DOUBLE_EQ(peek("r", ids[0]).eta_seconds.value(), 0.0);  // admitted
  clock_->advance_s(120);  // nothing admitted for two minutes: the rate is unknown again
  engine_->run_all();
  EXPECT_FALSE(peek("r", ids[9]).eta_seconds.has_value());
}

INSTANTIATE_TEST_SUITE_P(Every, ExpiryTest, ::testing::ValuesIn(rule_kinds()), kind_name);

}  // namespace
}  // namespace anteroom::testing
