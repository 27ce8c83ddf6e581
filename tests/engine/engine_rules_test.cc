// One test per rule of the model (docs/engine.md): order, position, same user, capacity,
// admission modes, counts, events, bad input; run against every engine. Expiry and ETA rules
// are in engine_expiry_test.cc.
#include <future>
#include <set>
#include <thread>

#include "tests/engine/engine_fixture.h"

namespace anteroom::testing {
namespace {

TEST_P(EngineTest, TicketIdsAreOpaqueUrlSafeAndDistinct) {
  make_room("r", config(0, AdmissionMode::kManual));
  std::set<std::string> ids;
  for (int i = 0; i < 1000; ++i) {
    std::string id = join("r");
    ASSERT_EQ(id.size(), 27u);
    for (char c : id)
      ASSERT_TRUE(isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') << id;
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 1000u);
}

TEST_P(EngineTest, AlteredTicketIdIsNotFound) {
  make_room("r", config(0, AdmissionMode::kManual));
  std::string id = join("r");
  for (size_t i = 0; i < id.size(); ++i) {
    std::string bad = id;
    bad[i] = bad[i] == 'A' ? 'B' : 'A';
    EXPECT_EQ(engine_->peek("r", bad).code(), Code::kTicketNotFound) << "position " << i;
  }
  EXPECT_EQ(engine_->peek("r", "short").code(), Code::kTicketNotFound);
  EXPECT_EQ(engine_->peek("r", std::string(27, '!')).code(), Code::kTicketNotFound);
}

TEST_P(EngineTest, TicketOfOneRoomIsUnknownInAnother) {
  make_room("a", config(0, AdmissionMode::kManual));
  make_room("b", config(0, AdmissionMode::kManual));
  std::string in_a = join("a");
  join("b");
  EXPECT_EQ(engine_->peek("b", in_a).code(), Code::kTicketNotFound);
}

TEST_P(EngineTest, TicketMovesThroughTheFiveStates) {
  make_room("r", config(1, AdmissionMode::kManual));
  std::string t = join("r");
  EXPECT_EQ(state("r", t), TicketState::kWaiting);
  ASSERT_EQ(engine_->admit("r", 1).value(), 1u);
  EXPECT_EQ(state("r", t), TicketState::kAllowed);
  auto used = engine_->activate("r", t);
  ASSERT_TRUE(used.is_ok());
  EXPECT_TRUE(used->first_use);
  EXPECT_EQ(state("r", t), TicketState::kActive);
  EXPECT_FALSE(engine_->activate("r", t)->first_use);  // a refresh
  ASSERT_TRUE(engine_->leave("r", t).is_ok());
  EXPECT_EQ(state("r", t), TicketState::kLeft);
  EXPECT_EQ(peek("r", t).reason, EndReason::kLeft);
  // WAITING -> EXPIRED is covered by the abandonment test; ended tickets stay ended.
  EXPECT_EQ(engine_->activate("r", t).code(), Code::kWrongState);
}

TEST_P(EngineTest, AdmissionFollowsJoinOrder) {
  make_room("r", config(0, AdmissionMode::kManual));
  std::vector<std::string> ids;
  for (int i = 0; i < 50; ++i) ids.push_back(join("r"));
  ASSERT_EQ(engine_->admit("r", 20).value(), 20u);
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(state("r", ids[i]), i < 20 ? TicketState::kAllowed : TicketState::kWaiting) << i;
  }
  std::vector<std::string> admitted;
  for (const Event& e : events()) {
    if (e.kind == Event::Kind::kAdmitted) admitted.emplace_back(id_view(e.ticket));
  }
  EXPECT_EQ(admitted, std::vector<std::string>(ids.begin(), ids.begin() + 20));
}

TEST_P(EngineTest, PositionIsOnePlusWaitingAhead) {
  make_room("r", config(0, AdmissionMode::kManual));
  std::vector<std::string> ids;
  for (int i = 0; i < 10; ++i) ids.push_back(join("r"));
  for (int i = 0; i < 10; ++i) EXPECT_EQ(position("r", ids[i]), static_cast<uint64_t>(i + 1));
  // `seq` numbers the join order; the loadgen's order checks rely on it.
  for (int i = 1; i < 10; ++i) EXPECT_EQ(peek("r", ids[i]).seq, peek("r", ids[i - 1]).seq + 1);
  engine_->admit("r", 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(position("r", ids[i]), 0u);
  for (int i = 3; i < 10; ++i) EXPECT_EQ(position("r", ids[i]), static_cast<uint64_t>(i - 2));
  EXPECT_EQ(peek("r", ids[9]).waiting, 7u);
}

TEST_P(EngineTest, LaterJoinsNeverPushAnyoneBack) {
  make_room("r", config(0, AdmissionMode::kManual));
  std::string first = join("r");
  std::string second = join("r");
  for (int i = 0; i < 100; ++i) join("r");
  EXPECT_EQ(position("r", first), 1u);
  EXPECT_EQ(position("r", second), 2u);
}

TEST_P(EngineTest, LeavesAheadMoveEveryoneBehindUp) {
  make_room("r", config(0, AdmissionMode::kManual));
  std::vector<std::string> ids;
  for (int i = 0; i < 10; ++i) ids.push_back(join("r"));
  ASSERT_TRUE(engine_->leave("r", ids[2]).is_ok());
  ASSERT_TRUE(engine_->leave("r", ids[5]).is_ok());
  engine_->run_all();  // the owner learns of the leaves
  EXPECT_EQ(position("r", ids[1]), 2u);
  EXPECT_EQ(position("r", ids[3]), 3u);
  EXPECT_EQ(position("r", ids[6]), 5u);
  EXPECT_EQ(position("r", ids[9]), 8u);
  EXPECT_EQ(peek("r", ids[0]).waiting, 8u);
  // The leaver itself is out of the line.
  EXPECT_EQ(position("r", ids[2]), 0u);
  // Admission skips the leavers.
  engine_->admit("r", 3);
  EXPECT_EQ(state("r", ids[3]), TicketState::kAllowed);
  EXPECT_EQ(state("r", ids[4]), TicketState::kWaiting);
  EXPECT_EQ(position("r", ids[4]), 1u);
}

TEST_P(EngineTest, SameUserGetsTheSameLiveTicket) {
  make_room("r", config(0, AdmissionMode::kManual));
  auto a = engine_->join("r", "user_10000");
  auto b = engine_->join("r", "user_10000");
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  EXPECT_TRUE(a->created);
  EXPECT_FALSE(b->created);
  EXPECT_EQ(id_view(a->ticket.id), id_view(b->ticket.id));
  EXPECT_EQ(b->ticket.position, 1u);
  auto other = engine_->join("r", "user_10001");
  EXPECT_TRUE(other->created);
  EXPECT_EQ(other->ticket.position, 2u);
  // The user keeps the ticket through admission.
  engine_->admit("r", 1);
  auto again = engine_->join("r", "user_10000");
  EXPECT_EQ(id_view(again->ticket.id), id_view(a->ticket.id));
  EXPECT_EQ(again->ticket.state, TicketState::kAllowed);
}

TEST_P(EngineTest, SameUserGetsANewTicketOnceTheOldOneEnded) {
  make_room("r", config(0, AdmissionMode::kManual));
  std::string first = join("r", "u");
  ASSERT_TRUE(engine_->leave("r", first).is_ok());
  auto second = engine_->join("r", "u");
  ASSERT_TRUE(second.is_ok());
  EXPECT_TRUE(second->created);
  EXPECT_NE(id_view(second->ticket.id), first);
}

TEST_P(EngineTest, DescribeShowsTheUserWithoutAHeartbeat) {
  RoomConfig c = config(0, AdmissionMode::kManual);
  c.heartbeat_timeout_seconds = 10;
  make_room("r", c);
  std::string named = join("r", "user_7");
  std::string anon = join("r");
  EXPECT_EQ(engine_->describe("r", named)->user, "user_7");
  EXPECT_EQ(engine_->describe("r", anon)->user, "");
  EXPECT_EQ(engine_->describe("r", anon)->ticket.position, 2u);
  clock_->advance_s(9);
  engine_->describe("r", named);
  clock_->advance_s(2);
  engine_->run_all();
  EXPECT_EQ(state("r", named), TicketState::kExpired);
}

TEST_P(EngineTest, RacingJoinsForOneUserGetOneTicket) {
  make_room("r", config(0, AdmissionMode::kManual));
  constexpr int kUsers = 2000;
  std::vector<std::string> got[2];
  auto run = [&](int t) {
    for (int u = 0; u < kUsers; ++u) got[t].push_back(join("r", "user_" + std::to_string(u)));
  };
  std::thread a(run, 0), b(run, 1);
  a.join();
  b.join();
  for (int u = 0; u < kUsers; ++u) ASSERT_EQ(got[0][u], got[1][u]) << "user_" << u;
  EXPECT_EQ(engine_->room_info("r")->counters.joined_total, static_cast<uint64_t>(kUsers));
}

TEST_P(EngineTest, CapacityBoundsAllowedPlusActiveInAutoMode) {
  make_room("r", config(10));
  std::vector<std::string> ids;
  for (int i = 0; i < 20; ++i) ids.push_back(join("r"));
  engine_->run_all();
  auto info = engine_->room_info("r").value();
  EXPECT_EQ(info.counters.active, 10u);
  EXPECT_EQ(info.counters.waiting, 10u);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(engine_->activate("r", ids[i]).is_ok());
  engine_->run_all();
  EXPECT_EQ(engine_->room_info("r")->counters.active, 10u);
  EXPECT_EQ(position("r", ids[10]), 1u);
}

TEST_P(EngineTest, CapacityBoundsManualAdmission) {
  make_room("r", config(3, AdmissionMode::kManual));
  for (int i = 0; i < 10; ++i) join("r");
  EXPECT_EQ(engine_->admit("r", 5).value(), 3u);
  EXPECT_EQ(engine_->admit("r", 5).value(), 0u);
  EXPECT_EQ(engine_->room_info("r")->counters.active, 3u);
}

TEST_P(EngineTest, ZeroCapacityMeansNoLimit) {
  make_room("r", config(0));
  for (int i = 0; i < 100; ++i) join("r");
  engine_->run_all();
  EXPECT_EQ(engine_->room_info("r")->counters.active, 100u);
}

TEST_P(EngineTest, AutoModeGivesAFreedSlotToTheNextInLineAtOnce) {
  make_room("r", config(2));
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(join("r"));
  engine_->run_all();
  ASSERT_EQ(state("r", ids[2]), TicketState::kWaiting);
  // No run_all(): the leave itself hands the slot on.
  ASSERT_TRUE(engine_->leave("r", ids[0]).is_ok());
  EXPECT_EQ(state("r", ids[2]), TicketState::kAllowed);
  EXPECT_EQ(state("r", ids[3]), TicketState::kWaiting);
  EXPECT_EQ(position("r", ids[3]), 1u);
}

TEST_P(EngineTest, AutoModeAdmitPerSecondCapsEachSecond) {
  RoomConfig c = config(0);
  c.admit_per_second = 5;
  make_room("r", c);
  for (int i = 0; i < 23; ++i) join("r");
  engine_->run_all();
  EXPECT_EQ(engine_->room_info("r")->counters.active, 5u);
  engine_->run_all();  // same instant: no more
  EXPECT_EQ(engine_->room_info("r")->counters.active, 5u);
  clock_->advance_ms(400);
  engine_->run_all();
  EXPECT_EQ(engine_->room_info("r")->counters.active, 7u);  // 0.4 s of 5/s
  clock_->advance_ms(600);
  engine_->run_all();
  EXPECT_EQ(engine_->room_info("r")->counters.active, 10u);
  clock_->advance_s(10);  // the bucket holds at most one second's worth
  engine_->run_all();
  EXPECT_EQ(engine_->room_info("r")->counters.active, 15u);
}

TEST_P(EngineTest, ManualModeAdmitsOnlyWhenTheOperatorSays) {
  make_room("r", config(10, AdmissionMode::kManual));
  std::string t = join("r");
  engine_->run_all();
  clock_->advance_s(1);
  engine_->run_all();
  EXPECT_EQ(state("r", t), TicketState::kWaiting);
  EXPECT_EQ(engine_->admit("r", 1).value(), 1u);
  EXPECT_EQ(state("r", t), TicketState::kAllowed);
}

TEST_P(EngineTest, ClearDropsEveryWaitingTicket) {
  make_room("r", config(2, AdmissionMode::kManual));
  std::vector<std::string> ids;
  for (int i = 0; i < 6; ++i) ids.push_back(join("r"));
  engine_->admit("r", 2);
  EXPECT_EQ(engine_->clear("r").value(), 4u);
  EXPECT_EQ(state("r", ids[1]), TicketState::kAllowed);
  EXPECT_EQ(state("r", ids[3]), TicketState::kLeft);
  EXPECT_EQ(peek("r", ids[3]).reason, EndReason::kCleared);
  std::string late = join("r");
  EXPECT_EQ(position("r", late), 1u);
  auto info = engine_->room_info("r").value();
  EXPECT_EQ(info.counters.waiting, 1u);
  EXPECT_EQ(info.counters.cleared_total, 4u);
}

TEST_P(EngineTest, MaxWaitingRefusesJoinsAndChangesNothing) {
  RoomConfig c = config(0, AdmissionMode::kManual);
  c.max_waiting = 3;
  make_room("r", c);
  join("r");
  join("r", "known");
  join("r");
  EXPECT_EQ(engine_->join("r", "").code(), Code::kRoomFull);
  EXPECT_EQ(engine_->join("r", "newcomer").code(), Code::kRoomFull);
  EXPECT_TRUE(engine_->join("r", "known").is_ok());  // a returning user keeps the place
  EXPECT_EQ(engine_->room_info("r")->counters.waiting, 3u);
  EXPECT_EQ(engine_->room_info("r")->counters.joined_total, 3u);
}

TEST_P(EngineTest, CountersAndTotalsAddUp) {
  make_room("r", config(2, AdmissionMode::kManual));
  std::vector<std::string> ids;
  for (int i = 0; i < 6; ++i) ids.push_back(join("r"));
  engine_->admit("r", 2);
  engine_->leave("r", ids[0]);
  engine_->leave("r", ids[4]);
  engine_->run_all();
  RoomCounters c = engine_->room_info("r")->counters;
  EXPECT_EQ(c.joined_total, 6u);
  EXPECT_EQ(c.admitted_total, 2u);
  EXPECT_EQ(c.left_total, 2u);
  EXPECT_EQ(c.active, 1u);
  EXPECT_EQ(c.waiting, 3u);
}

TEST_P(EngineTest, EventsReportAdmissionsMovesAndCounts) {
  make_room("r", config(1));
  events();
  std::string a = join("r");
  std::string b = join("r");
  engine_->run_all();
  std::vector<Event> ev = events();
  ASSERT_FALSE(ev.empty());
  bool admitted_a = false, moved = false;
  const Event* counts = nullptr;  // the latest: a's admission inside its join told one too
  for (const Event& e : ev) {
    EXPECT_EQ(e.room, "r");
    if (e.kind == Event::Kind::kAdmitted) admitted_a = id_view(e.ticket) == a;
    if (e.kind == Event::Kind::kPositionsMoved) moved = true;
    if (e.kind == Event::Kind::kCountsChanged) counts = &e;
  }
  EXPECT_TRUE(admitted_a && moved);
  ASSERT_NE(counts, nullptr);
  EXPECT_EQ(counts->waiting, 1u);
  EXPECT_EQ(counts->active, 1u);
  EXPECT_EQ(counts->capacity, 1u);
  engine_->run_all();  // nothing changed: nothing to say
  EXPECT_TRUE(events().empty());
  engine_->leave("r", a);
  ev = events();
  bool admitted_b = false;
  for (const Event& e : ev)
    admitted_b |= e.kind == Event::Kind::kAdmitted && id_view(e.ticket) == b;
  EXPECT_TRUE(admitted_b);
}

TEST_P(EngineTest, BadInputIsRefusedAndChangesNothing) {
  EXPECT_EQ(engine_->put_room("", config(1)).code(), Code::kInvalidArgument);
  EXPECT_EQ(engine_->put_room(std::string(65, 'a'), config(1)).code(), Code::kInvalidArgument);
  EXPECT_EQ(engine_->put_room("a/b", config(1)).code(), Code::kInvalidArgument);
  EXPECT_TRUE(engine_->put_room(std::string(64, 'a'), config(1)).is_ok());
  RoomConfig bad = config(1);
  bad.allowed_ttl_seconds = 0;
  EXPECT_EQ(engine_->put_room("r", bad).code(), Code::kInvalidArgument);
  RoomConfig bad2 = config(1, AdmissionMode::kManual);
  bad2.admit_per_second = 3;
  EXPECT_EQ(engine_->put_room("r", bad2).code(), Code::kInvalidArgument);
  EXPECT_EQ(engine_->room_info("r").code(), Code::kRoomNotFound);
  EXPECT_EQ(engine_->join("nope", "").code(), Code::kRoomNotFound);
  make_room("r", config(1));
  EXPECT_EQ(engine_->join("r", std::string(129, 'u')).code(), Code::kInvalidArgument);
  EXPECT_EQ(engine_->join("r", std::string("a\nb")).code(), Code::kInvalidArgument);
  EXPECT_EQ(engine_->admit("nope", 1).code(), Code::kRoomNotFound);
  EXPECT_EQ(engine_->room_info("r")->counters.joined_total, 0u);
}

// User names are printable text: invisible, reordering and control characters, malformed
// UTF-8 and over-long names are refused; ordinary scripts and emoji pass.
TEST_P(EngineTest, UserNamesArePrintableUtf8) {
  make_room("r", config(0, AdmissionMode::kManual));
  for (const std::string& bad :
       {std::string("a\0b", 3), std::string("a\nb"), std::string("\x7f"), std::string("\xc2\x85"),
        std::string("al\u00adice"), std::string("\U000E0001alice"), std::string("\u3164"),
        std::string("a\u200bb"), std::string("\u202eevil"), std::string("\xef\xbb\xbfx"),
        std::string("\xc0\xaf"), std::string("\xed\xa0\x80"), std::string("\xff"),
        std::string(129, 'x'), std::string()}) {
    if (bad.empty()) continue;  // empty means anonymous, not invalid
    EXPECT_EQ(engine_->join("r", bad).code(), Code::kInvalidArgument) << bad;
  }
  for (const std::string& good :
       {std::string("user_10000"), std::string("홍길동"), std::string("José"),
        std::string("😀 party"), std::string(128, 'x')}) {
    EXPECT_TRUE(engine_->join("r", good).is_ok()) << good;
  }
  EXPECT_EQ(engine_->room_info("r")->counters.joined_total, 5u);
}

TEST_P(EngineTest, DeletedRoomAndItsTicketsAreGone) {
  make_room("r", config(1));
  std::string t = join("r");
  ASSERT_TRUE(engine_->delete_room("r").is_ok());
  EXPECT_EQ(engine_->peek("r", t).code(), Code::kRoomNotFound);
  EXPECT_EQ(engine_->delete_room("r").code(), Code::kRoomNotFound);
  make_room("r", config(1));
  EXPECT_EQ(engine_->peek("r", t).code(), Code::kTicketNotFound);
  EXPECT_EQ(engine_->rooms().size(), 1u);
}

TEST_P(EngineTest, UpdatingConfigKeepsTheLine) {
  make_room("r", config(1));
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(join("r"));
  engine_->run_all();
  make_room("r", config(3));  // more capacity: two more get in at once
  EXPECT_EQ(state("r", ids[2]), TicketState::kAllowed);
  EXPECT_EQ(position("r", ids[3]), 1u);
  EXPECT_EQ(engine_->room_info("r")->config.capacity, 3u);
}

INSTANTIATE_TEST_SUITE_P(Every, EngineTest, ::testing::ValuesIn(rule_kinds()), kind_name);

}  // namespace
}  // namespace anteroom::testing
