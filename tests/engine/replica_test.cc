// The replica engine (engine/replica.h): the same records give the same rooms; time decides
// nothing while applying; a decider's stale decisions change nothing; an image carries a
// room exactly.
#include <gtest/gtest.h>

#include <random>

#include "engine/replica.h"

namespace anteroom::testing {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000;  // records carry wall-clock times

std::unique_ptr<ReplicaEngine> replica() {
  EngineOptions o;
  o.shards = 2;
  o.id_key = std::array<uint64_t, 2>{7, 11};  // the same on every copy, as in a cluster
  return make_replica_engine(o);
}

RoomConfig config(uint32_t capacity, uint32_t per_second = 0) {
  RoomConfig c;
  c.capacity = capacity;
  c.admit_per_second = per_second;
  c.heartbeat_timeout_seconds = 30;
  c.allowed_ttl_seconds = 60;
  c.session_ttl_seconds = 120;
  return c;
}

op::Join join_op(uint32_t n, std::string user = {}) {
  op::Join j;
  j.tag = {n, n * 3 + 1, n * 7 + 2};
  j.user = std::move(user);
  return j;
}

// Every ticket the room ever had, as both copies report it.
void expect_same(ReplicaEngine& a, ReplicaEngine& b, std::string_view room,
                 const std::vector<TicketId>& ids) {
  auto ia = a.room_info(room), ib = b.room_info(room);
  ASSERT_TRUE(ia.is_ok() && ib.is_ok());
  EXPECT_EQ(ia->counters.waiting, ib->counters.waiting);
  EXPECT_EQ(ia->counters.active, ib->counters.active);
  EXPECT_EQ(ia->counters.joined_total, ib->counters.joined_total);
  EXPECT_EQ(ia->counters.admitted_total, ib->counters.admitted_total);
  EXPECT_EQ(ia->counters.expired_abandoned, ib->counters.expired_abandoned);
  for (const TicketId& id : ids) {
    auto va = a.peek(room, id_view(id)), vb = b.peek(room, id_view(id));
    // Every ticket the one knows, ended or not, the other answers alike (an image carries
    // the ended tickets whose memory the room still holds); and none the one forgot.
    ASSERT_EQ(va.is_ok(), vb.is_ok()) << id_view(id);
    if (!va.is_ok()) continue;
    EXPECT_EQ(va->seq, vb->seq);
    EXPECT_EQ(va->state, vb->state);
    EXPECT_EQ(va->reason, vb->reason);
    EXPECT_EQ(va->position, vb->position);
    EXPECT_EQ(va->admitted_at_ms, vb->admitted_at_ms);
    EXPECT_EQ(va->valid_until_ms, vb->valid_until_ms);
  }
}

TEST(Replica, TheSameRecordsGiveTheSameRoomsEverywhere) {
  auto a = replica(), b = replica();
  std::mt19937_64 rng(3);
  std::vector<std::pair<int64_t, Op>> records;
  records.emplace_back(kT0, op::PutRoom{config(20)});
  int64_t t = kT0;
  uint64_t joined = 0;
  for (int i = 0; i < 3000; ++i) {
    t += static_cast<int64_t>(rng() % 50);
    const uint64_t r = rng() % 10;
    if (r < 6 || joined == 0) {
      records.emplace_back(
          t, join_op(static_cast<uint32_t>(i), i % 3 == 0 ? "u" + std::to_string(i % 97) : ""));
      ++joined;
    } else if (r < 8) {
      records.emplace_back(t, op::Leave{rng() % joined});
    } else if (r < 9) {
      records.emplace_back(t, op::Seen{{rng() % joined, rng() % joined}});
    } else {
      records.emplace_back(t, op::Expire{rng() % joined, EndReason::kAbandoned});
    }
  }
  std::vector<TicketId> ids;
  for (auto& [at, op] : records) {
    Applied ra = a->apply("r", at, op);
    Applied rb = b->apply("r", at, op);
    EXPECT_EQ(ra.status.code(), rb.status.code());
    if (ra.join && ra.join->created) ids.push_back(ra.join->ticket.id);
    if (ra.join && rb.join) {
      EXPECT_EQ(ra.join->ticket.id, rb.join->ticket.id);
    }
  }
  expect_same(*a, *b, "r", ids);
  auto info = a->room_info("r");
  EXPECT_GT(info->counters.admitted_total, 20u);  // leaves handed slots on while applying
  EXPECT_GT(info->counters.expired_abandoned, 0u);
}

TEST(Replica, AJoinIntoAFreeSlotIsAdmittedWhileApplyingAndTheClockDecidesNothing) {
  auto e = replica();
  ASSERT_TRUE(e->apply("r", kT0, op::PutRoom{config(1)}).status.is_ok());
  Applied first = e->apply("r", kT0 + 10, join_op(1));
  Applied second = e->apply("r", kT0 + 20, join_op(2));
  ASSERT_TRUE(first.join && second.join);
  EXPECT_EQ(first.join->ticket.state, TicketState::kAllowed);
  EXPECT_EQ(first.join->ticket.admitted_at_ms, kT0);  // a 100 ms tick from the room's origin
  EXPECT_EQ(second.join->ticket.state, TicketState::kWaiting);
  // Long past every deadline by any clock: run_all expires nothing on a replica.
  for (int i = 0; i < 3; ++i) e->run_all();
  EXPECT_EQ(e->peek("r", id_view(second.join->ticket.id))->state, TicketState::kWaiting);
  // The Engine interface's own writes are refused.
  EXPECT_EQ(e->join("r", "x").status().code(), Code::kUnavailable);
  EXPECT_EQ(e->admit("r", 1).status().code(), Code::kUnavailable);
  // A leave hands the slot on, at the leave's time.
  Applied left = e->apply("r", kT0 + 5'000, op::Leave{first.join->ticket.seq});
  ASSERT_TRUE(left.ticket);
  EXPECT_EQ(left.ticket->ticket.state, TicketState::kLeft);
  auto v = e->peek("r", id_view(second.join->ticket.id));
  EXPECT_EQ(v->state, TicketState::kAllowed);
  EXPECT_EQ(v->admitted_at_ms, kT0 + 5'000);
}

TEST(Replica, TheDecidersExpiriesAreRecheckedWhenApplied) {
  auto e = replica();
  e->apply("r", kT0, op::PutRoom{config(0)});
  e->apply("r", kT0, op::PutRoom{[] {
             RoomConfig c = config(1);
             c.admission = AdmissionMode::kManual;
             return c;
           }()});
  Applied a = e->apply("r", kT0, join_op(1));
  Applied b = e->apply("r", kT0, join_op(2));
  ASSERT_TRUE(a.join && b.join);
  EXPECT_TRUE(e->decide("r", kT0 + 29'000).ops.empty());
  std::vector<Op> due = e->decide("r", kT0 + 31'000).ops;
  ASSERT_EQ(due.size(), 2u);  // both waiting tickets were last seen at the join
  // Ticket a is seen (on some node) before the decision comes back: it stays.
  e->apply("r", kT0 + 30'500, op::Seen{{a.join->ticket.seq}});
  for (const Op& op : due) e->apply("r", kT0 + 31'000, op);
  EXPECT_EQ(e->peek("r", id_view(a.join->ticket.id))->state, TicketState::kWaiting);
  EXPECT_EQ(e->peek("r", id_view(b.join->ticket.id))->state, TicketState::kExpired);
  // The same decision again (a second decider): nothing more happens.
  for (const Op& op : due) e->apply("r", kT0 + 31'000, op);
  EXPECT_EQ(e->room_info("r")->counters.expired_abandoned, 1u);
  // An ALLOWED ticket expires unused only past its own deadline.
  e->apply("r", kT0 + 31'000, op::Admit{1, 0, {}});
  EXPECT_EQ(e->peek("r", id_view(a.join->ticket.id))->state, TicketState::kAllowed);
  e->apply("r", kT0 + 31'000, op::Expire{a.join->ticket.seq, EndReason::kAllowedUnused});
  EXPECT_EQ(e->peek("r", id_view(a.join->ticket.id))->state, TicketState::kAllowed);
  e->apply("r", kT0 + 91'000, op::Expire{a.join->ticket.seq, EndReason::kAllowedUnused});
  EXPECT_EQ(e->peek("r", id_view(a.join->ticket.id))->state, TicketState::kExpired);
}

TEST(Replica, AnAdmissionRateIsTheDecidersAndCapacityIsRecheckedWhenApplied) {
  auto e = replica();
  e->apply("r", kT0, op::PutRoom{config(3, 2)});
  std::vector<Applied> joins;
  for (uint32_t i = 0; i < 6; ++i) joins.push_back(e->apply("r", kT0, join_op(i)));
  for (const Applied& j : joins) EXPECT_EQ(j.join->ticket.state, TicketState::kWaiting);
  // The bucket starts full (2 tokens): the decider proposes 2, then none until time passes.
  std::vector<Op> due = e->decide("r", kT0).ops;
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(std::get<op::Admit>(due[0]).count, 2u);
  EXPECT_TRUE(e->decide("r", kT0).ops.empty());
  EXPECT_EQ(e->apply("r", kT0, due[0]).count, 2u);
  // Two deciders at once propose too much: capacity still holds.
  EXPECT_EQ(e->apply("r", kT0 + 1000, op::Admit{5, 0, {}}).count, 1u);
  EXPECT_EQ(e->room_info("r")->counters.active, 3u);
}

// The decider asks a room again only when it said (or a record came): an idle room, a
// waiting ticket's deadline, the next admission token, an event's next phase.
TEST(Replica, ADecisionSaysWhenTheRoomIsNextDue) {
  auto e = replica();
  e->apply("r", kT0, op::PutRoom{config(3)});
  EXPECT_EQ(e->decide("r", kT0 + 1).next_ms, kNoDeadline);  // empty: nothing, ever
  Applied a = e->apply("r", kT0 + 1000, join_op(1));
  ASSERT_TRUE(a.join);
  EXPECT_EQ(a.join->ticket.state, TicketState::kAllowed);  // a free slot: admitted at the join
  // An ALLOWED ticket is due to expire unused 60 s after its admission. The first answer
  // may come early (the join's own deadline, had it waited), never late; the sweep then
  // learns the real one.
  ReplicaEngine::Decision d = e->decide("r", kT0 + 2000);
  EXPECT_TRUE(d.ops.empty());
  EXPECT_GT(d.next_ms, kT0 + 2000);
  EXPECT_LE(d.next_ms, kT0 + 61'000);
  d = e->decide("r", d.next_ms);
  EXPECT_TRUE(d.ops.empty());
  EXPECT_EQ(d.next_ms, kT0 + 61'000);
  EXPECT_TRUE(e->decide("r", kT0 + 60'900).ops.empty());
  d = e->decide("r", kT0 + 61'000);
  ASSERT_EQ(d.ops.size(), 1u);
  EXPECT_EQ(std::get<op::Expire>(d.ops[0]).reason, EndReason::kAllowedUnused);
  // A rate-capped room with someone waiting: due when the next token comes (2 a second).
  auto rated = replica();
  rated->apply("q", kT0, op::PutRoom{config(0, 2)});
  for (uint32_t i = 0; i < 4; ++i) rated->apply("q", kT0, join_op(i));
  d = rated->decide("q", kT0);
  ASSERT_EQ(d.ops.size(), 1u);  // the full bucket's 2
  EXPECT_EQ(d.next_ms, kT0 + 500);
  // Waiting tickets' heartbeats: the earliest deadline, 30 s after the joins.
  auto manual = replica();
  RoomConfig c = config(3);
  c.admission = AdmissionMode::kManual;
  manual->apply("m", kT0, op::PutRoom{c});
  manual->apply("m", kT0 + 200, join_op(1));
  EXPECT_EQ(manual->decide("m", kT0 + 300).next_ms, kT0 + 30'200);
  manual->apply("m", kT0 + 100, join_op(2));  // a record may bring a deadline sooner
  EXPECT_EQ(manual->decide("m", kT0 + 300).next_ms, kT0 + 30'100);
}

TEST(Replica, AnImageCarriesTheRoomExactly) {
  auto a = replica(), b = replica();
  a->apply("r", kT0, op::PutRoom{config(2)});
  std::vector<TicketId> ids;
  for (uint32_t i = 0; i < 40; ++i) {
    Applied j = a->apply("r", kT0 + i * 100, join_op(i, i % 2 ? "name" + std::to_string(i) : ""));
    ids.push_back(j.join->ticket.id);
  }
  for (uint64_t seq : {0, 5, 6, 39}) a->apply("r", kT0 + 5000, op::Leave{seq});
  a->apply("r", kT0 + 6000, op::Seen{{10, 11, 12}});
  auto img = a->image("r");
  ASSERT_TRUE(img.is_ok());
  EXPECT_EQ(img->next_seq, 40u);
  ASSERT_TRUE(b->load_image("r", img.value()).is_ok());
  expect_same(*a, *b, "r", ids);
  // ... and both go on alike: the next join gets seq 40 (the last one left), and expiries
  // follow the seen times the image kept.
  Applied ja = a->apply("r", kT0 + 7000, join_op(99));
  Applied jb = b->apply("r", kT0 + 7000, join_op(99));
  EXPECT_EQ(ja.join->ticket.seq, 40u);
  EXPECT_EQ(ja.join->ticket.id, jb.join->ticket.id);
  ids.push_back(ja.join->ticket.id);
  EXPECT_EQ(a->decide("r", kT0 + 35'000).ops.size(), b->decide("r", kT0 + 35'000).ops.size());
  for (auto* e : {a.get(), b.get()}) {
    for (const Op& op : e->decide("r", kT0 + 35'000).ops) {
      a->apply("r", kT0 + 35'000, op);
      b->apply("r", kT0 + 35'000, op);
    }
  }
  expect_same(*a, *b, "r", ids);
  // A user's name is still theirs after the image (ticket 11 was seen, so it is still live).
  Applied again = b->apply("r", kT0 + 36'000, join_op(100, "name11"));
  EXPECT_FALSE(again.join->created);
  // Replacing a room that readers are inside leaves them a consistent one.
  ASSERT_TRUE(b->load_image("r", a->image("r").value()).is_ok());
  expect_same(*a, *b, "r", ids);
}

}  // namespace
}  // namespace anteroom::testing
