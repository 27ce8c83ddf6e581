// The change journal: every change told, once, in order; and admission inside join, which
// never waits for whoever is working on the room.
#include <future>
#include <latch>

#include "tests/engine/engine_fixture.h"

namespace anteroom::testing {
namespace {

class JournalTest : public EngineTest {};

using Kind = Change::Kind;

TEST_P(JournalTest, TellsEveryChangeOnceInOrder) {
  make_room("r", config(1, AdmissionMode::kManual));
  auto a = engine_->join("r", "ann").value();
  auto b = engine_->join("r", "").value();
  std::string c = join("r");
  std::string d = join("r");
  ASSERT_EQ(engine_->admit("r", 1).value(), 1u);
  ASSERT_TRUE(engine_->activate("r", id_view(a.ticket.id)).is_ok());
  ASSERT_TRUE(engine_->activate("r", id_view(a.ticket.id)).is_ok());  // a refresh: not told
  ASSERT_TRUE(engine_->leave("r", id_view(b.ticket.id)).is_ok());
  ASSERT_TRUE(engine_->leave("r", id_view(b.ticket.id)).is_ok());  // already left: not told
  ASSERT_EQ(engine_->clear("r").value(), 2u);
  ASSERT_TRUE(engine_->delete_room("r").is_ok());

  std::vector<RecordedChange> got = journal_.changes();
  std::vector<Kind> kinds;
  for (const auto& ch : got) kinds.push_back(ch.kind);
  EXPECT_EQ(kinds, (std::vector<Kind>{Kind::kRoomPut, Kind::kJoin, Kind::kJoin, Kind::kJoin,
                                      Kind::kJoin, Kind::kAdmit, Kind::kActivate, Kind::kLeave,
                                      Kind::kClear, Kind::kRoomDelete}));
  ASSERT_EQ(got.size(), kinds.size());
  EXPECT_EQ(got[1].seq, 0u);
  EXPECT_EQ(got[1].user, "ann");
  EXPECT_EQ(got[4].seq, 3u);
  EXPECT_EQ(got[5].seq, 0u);  // the admission names the ticket by seq, no id to decode
  EXPECT_EQ(got[7].seq, 1u);
  EXPECT_EQ(got[8].seqs, (std::vector<uint64_t>{2, 3}));
  for (const auto& ch : got) EXPECT_EQ(ch.room, "r");
}

TEST_P(JournalTest, TellsExpiriesWithTheirReason) {
  RoomConfig c = config(1, AdmissionMode::kManual);
  c.heartbeat_timeout_seconds = 10;
  c.allowed_ttl_seconds = 5;
  make_room("r", c);
  std::string a = join("r");
  std::string b = join("r");
  ASSERT_EQ(engine_->admit("r", 1).value(), 1u);
  clock_->advance_s(11);
  engine_->run_all();
  std::vector<std::pair<uint64_t, EndReason>> expired;
  for (const auto& ch : journal_.changes())
    if (ch.kind == Kind::kExpire) expired.emplace_back(ch.seq, ch.reason);
  std::sort(expired.begin(), expired.end());
  EXPECT_EQ(expired, (std::vector<std::pair<uint64_t, EndReason>>{{0, EndReason::kAllowedUnused},
                                                                  {1, EndReason::kAbandoned}}));
}

INSTANTIATE_TEST_SUITE_P(Every, JournalTest, ::testing::ValuesIn(engine_kinds()), kind_name);

// The engines whose joins never wait for a lock (all but the one-mutex yardstick).
std::vector<EngineKind> lock_free_kinds() {
  std::vector<EngineKind> out;
  for (const EngineKind& k : engine_kinds())
    if (std::string(k.name) != "mutex") out.push_back(k);
  return out;
}

class NoWaitTest : public EngineTest {};

// While one thread holds the room (it is admitting a ticket and its journal is slow), a
// join that could be admitted returns at once, WAITING; the holder admits it before it lets
// go, so by the time the holder is done the new ticket is ALLOWED.
TEST_P(NoWaitTest, AJoinNeverWaitsForWhoeverHoldsTheRoom) {
  make_room("r", config(2));
  std::latch holding(1), release(1);
  std::atomic<int> admits{0};
  journal_.hook = [&](const Change& c) {
    if (c.kind == Kind::kAdmit && admits.fetch_add(1) == 0) {
      holding.count_down();
      release.wait();  // the first admission blocks, holding the room's owner lock
    }
  };
  auto first = std::async(std::launch::async, [&] { return engine_->join("r", ""); });
  holding.wait();
  auto second = std::async(std::launch::async, [&] { return engine_->join("r", ""); });
  const bool returned = second.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
  release.count_down();
  ASSERT_TRUE(returned) << "the join waited for the room's owner";
  auto b = second.get();
  ASSERT_TRUE(b.is_ok());
  EXPECT_EQ(b->ticket.state, TicketState::kWaiting);  // the holder had the room
  auto a = first.get();
  ASSERT_TRUE(a.is_ok());
  EXPECT_EQ(a->ticket.state, TicketState::kAllowed);
  // Served by the holder before it let go: no owner pass (run_all) was needed.
  EXPECT_EQ(state("r", std::string(id_view(b->ticket.id))), TicketState::kAllowed);
}

// The same for a leave that frees a slot: it returns at once, and the holder hands the slot
// to the next in line.
TEST_P(NoWaitTest, ALeaveNeverWaitsAndItsSlotIsHandedOn) {
  make_room("r", config(1));
  std::string a = join("r");
  std::string b = join("r");
  ASSERT_EQ(state("r", a), TicketState::kAllowed);
  ASSERT_EQ(state("r", b), TicketState::kWaiting);
  make_room("q", config(1));  // blocks its first admission
  std::latch holding(1), release(1);
  journal_.hook = [&](const Change& c) {
    if (c.kind == Kind::kAdmit && c.room == "q") {
      holding.count_down();
      release.wait();
    }
  };
  // A leave in room r while room q is held: different rooms never wait for each other.
  auto other = std::async(std::launch::async, [&] { return engine_->join("q", ""); });
  holding.wait();
  auto left = std::async(std::launch::async, [&] { return engine_->leave("r", a); });
  const bool returned = left.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
  release.count_down();
  ASSERT_TRUE(returned) << "the leave waited for another room's owner";
  EXPECT_EQ(left.get()->state, TicketState::kLeft);
  EXPECT_EQ(state("r", b), TicketState::kAllowed);
  EXPECT_TRUE(other.get().is_ok());
}

INSTANTIATE_TEST_SUITE_P(LockFree, NoWaitTest, ::testing::ValuesIn(lock_free_kinds()), kind_name);

}  // namespace
}  // namespace anteroom::testing
