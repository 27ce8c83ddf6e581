// Recovery's engine side: a room rebuilt from recorded tickets has the same ids, states,
// positions and users as the one they came from, and goes on admitting in join order.
#include "engine/ticket_id.h"
#include "tests/engine/engine_fixture.h"

namespace anteroom::testing {
namespace {

class RestoreTest : public EngineTest {};

constexpr std::array<uint64_t, 2> kKey = {0x1234, 0x5678};

TEST_P(RestoreTest, RebuiltRoomMatchesTheOriginalAndKeepsOrder) {
  EngineOptions o;
  o.clock = clock_;
  o.id_key = kKey;
  auto before = GetParam().make(o);
  RoomConfig c = config(2, AdmissionMode::kManual);
  ASSERT_TRUE(before->put_room("r", c).is_ok());
  std::vector<std::string> ids;
  for (int i = 0; i < 12; ++i) {
    ids.emplace_back(
        id_view(before->join("r", i % 3 == 0 ? "user_" + std::to_string(i) : "")->ticket.id));
  }
  before->admit("r", 2);
  before->activate("r", ids[1]);
  before->leave("r", ids[4]);
  before->leave("r", ids[7]);
  before->run_all();

  // What a log would have recorded, with seq 9 lost (claimed, never written).
  IdCodec codec(kKey);
  std::vector<RestoredTicket> recorded;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i == 9) continue;
    RestoredTicket t;
    Tag tag{};
    ASSERT_TRUE(codec.decode(ids[i], &t.seq, &tag));
    ASSERT_EQ(t.seq, i);
    t.tag = tag;
    auto d = before->describe("r", ids[i]).value();
    t.user = d.user;
    t.state = d.ticket.state;
    t.reason = d.ticket.reason;
    t.admitted_at_ms = d.ticket.admitted_at_ms;
    recorded.push_back(t);
  }
  auto after = GetParam().make(o);
  ASSERT_TRUE(after->restore_room("r", c, recorded).is_ok());
  EXPECT_EQ(after->restore_room("r", c, recorded).code(), Code::kInvalidArgument);  // exists

  for (size_t i = 0; i < ids.size(); ++i) {
    if (i == 9) {
      EXPECT_EQ(after->peek("r", ids[i]).code(), Code::kTicketNotFound);
      continue;
    }
    TicketView b = before->peek("r", ids[i]).value(), a = after->peek("r", ids[i]).value();
    EXPECT_EQ(a.state, b.state) << i;
    EXPECT_EQ(a.reason, b.reason) << i;
    // Ticket 9 was waiting before; lost, it no longer counts ahead of 10 and 11.
    EXPECT_EQ(a.position, i > 9 ? b.position - 1 : b.position) << i;
    EXPECT_EQ(a.admitted_at_ms, b.admitted_at_ms) << i;
  }
  auto info = after->room_info("r").value();
  EXPECT_EQ(info.counters.active, 2u);
  EXPECT_EQ(info.counters.waiting, 7u);
  // The same user gets the same ticket back; an ended user's ticket is not resurrected.
  auto again = after->join("r", "user_3");
  EXPECT_FALSE(again->created);
  EXPECT_EQ(id_view(again->ticket.id), ids[3]);
  // Admission goes on in join order, past the lost ticket.
  after->leave("r", ids[0]);  // frees one of the two slots
  EXPECT_EQ(after->admit("r", 1).value(), 1u);
  EXPECT_EQ(after->peek("r", ids[2])->state, TicketState::kAllowed);
  EXPECT_EQ(after->peek("r", ids[10])->position, 5u);  // 3 5 6 8 ahead
}

TEST_P(RestoreTest, ExportThenRestoreKeepsEveryLiveTicket) {
  EngineOptions o;
  o.clock = clock_;
  o.id_key = kKey;
  auto before = GetParam().make(o);
  before->put_room("r", config(2, AdmissionMode::kManual));
  std::vector<std::string> ids;
  for (int i = 0; i < 8; ++i)
    ids.emplace_back(id_view(before->join("r", i == 5 ? "user_5" : "")->ticket.id));
  before->admit("r", 2);
  before->activate("r", ids[1]);
  before->leave("r", ids[3]);
  before->run_all();  // positions behind a leaver move at the owner's next pass
  auto live = before->export_tickets("r");
  ASSERT_TRUE(live.is_ok());
  EXPECT_EQ(live->size(), 7u);  // the leaver is forgotten
  auto after = GetParam().make(o);
  ASSERT_TRUE(after->restore_room("r", config(2, AdmissionMode::kManual), live.value()).is_ok());
  for (int i = 0; i < 8; ++i) {
    if (i == 3) {
      EXPECT_EQ(after->peek("r", ids[i]).code(), Code::kTicketNotFound);
      continue;
    }
    EXPECT_EQ(after->peek("r", ids[i])->state, before->peek("r", ids[i])->state) << i;
    EXPECT_EQ(after->peek("r", ids[i])->position, before->peek("r", ids[i])->position) << i;
  }
  EXPECT_EQ(id_view(after->join("r", "user_5")->ticket.id), ids[5]);
  EXPECT_EQ(after->export_tickets("nope").code(), Code::kRoomNotFound);
}

TEST_P(RestoreTest, RefusesOutOfOrderTickets) {
  std::vector<RestoredTicket> bad(2);
  bad[0].seq = 5;
  bad[1].seq = 3;
  EXPECT_EQ(engine_->restore_room("r", config(1), bad).code(), Code::kInvalidArgument);
}

INSTANTIATE_TEST_SUITE_P(Every, RestoreTest, ::testing::ValuesIn(engine_kinds()), kind_name);

}  // namespace
}  // namespace anteroom::testing
