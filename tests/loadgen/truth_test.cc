// The truth checks and the bytes workers send to the coordinator.
#include <gtest/gtest.h>

#include "loadgen/recorder.h"

namespace anteroom::loadgen {
namespace {

VisitorRecord rec(uint64_t seq, int64_t sent, int64_t acked) {
  VisitorRecord r;
  r.seq = seq;
  r.join_sent_us = sent;
  r.join_acked_us = acked;
  r.outcome = Outcome::kLeft;
  return r;
}

TEST(Truth, AnOrderlyRunHasNothingToReport) {
  std::vector<VisitorRecord> rs;
  for (uint64_t i = 0; i < 100; ++i) {
    VisitorRecord r = rec(i, 1000 + 10 * i, 1005 + 10 * i);
    r.allowed_seen_us = 100000 + 1000 * static_cast<int64_t>(i);
    r.last_waiting_sent_us = r.allowed_seen_us - 500;
    rs.push_back(r);
  }
  TruthChecks t = check_truth(rs, false);
  EXPECT_EQ(t.inversions, 0u);
  EXPECT_EQ(t.join_order_violations, 0u);
  EXPECT_EQ(t.positions_grew, 0u);
  EXPECT_EQ(t.unresolved, 0u);
}

TEST(Truth, ALaterJoinerAdmittedWhileAnEarlierOneWaitsIsAnInversion) {
  VisitorRecord a = rec(1, 0, 10);
  VisitorRecord b = rec(2, 20, 30);
  b.allowed_seen_us = 5000;
  a.last_waiting_sent_us = 6000;  // a was still WAITING after b was seen ALLOWED
  a.allowed_seen_us = 9000;
  EXPECT_EQ(check_truth({b, a}, false).inversions, 1u);
  a.last_waiting_sent_us = 4000;  // a's last WAITING answer came before: no proof
  EXPECT_EQ(check_truth({b, a}, false).inversions, 0u);
}

TEST(Truth, SeqContradictingTheClientsOwnOrderIsCaught) {
  // b's join was answered (t=30) before a's was even sent (t=40), yet a has the lower seq.
  VisitorRecord a = rec(1, 40, 50);
  VisitorRecord b = rec(2, 20, 30);
  EXPECT_EQ(check_truth({a, b}, false).join_order_violations, 1u);
  // Overlapping joins may be ordered either way.
  a = rec(1, 25, 50);
  EXPECT_EQ(check_truth({a, b}, false).join_order_violations, 0u);
}

TEST(Truth, GrowthAndUnresolvedTicketsAreCounted) {
  VisitorRecord grew = rec(1, 0, 1);
  grew.position_grew = true;
  VisitorRecord stuck = rec(2, 2, 3);
  stuck.outcome = Outcome::kPending;
  VisitorRecord admitted_then_cut = rec(3, 4, 5);
  admitted_then_cut.outcome = Outcome::kPending;
  admitted_then_cut.allowed_seen_us = 100;
  TruthChecks t = check_truth({grew, stuck, admitted_then_cut}, false);
  EXPECT_EQ(t.positions_grew, 1u);
  EXPECT_EQ(t.unresolved, 1u);
  EXPECT_EQ(check_truth({stuck}, true).unresolved, 0u);  // hold keeps tickets on purpose
}

TEST(Recorder, BytesRoundTripEverything) {
  Recorder r(1'000'000);
  r.request(RequestKind::kJoin, 1'000'000, 1'002'500);
  r.request(RequestKind::kStatus, 2'000'000, 2'000'300);
  r.error(ErrorKind::k5xx, 3'500'000);
  r.admitted(1'000'000, 4'000'000);
  r.visits.planned = 7;
  r.visits.left = 3;
  r.records.push_back(rec(5, 6, 7));
  Recorder back;
  ASSERT_TRUE(back.decode(r.encode()));
  Phase a;
  Phase b;
  r.merge_into(&a);
  back.merge_into(&b);
  EXPECT_EQ(b.latency[0].count(), 1u);
  EXPECT_EQ(b.latency[0].max(), 2500u);
  EXPECT_EQ(b.errors[static_cast<int>(ErrorKind::k5xx)], 1u);
  EXPECT_EQ(b.time_to_admission.percentile(50), a.time_to_admission.percentile(50));
  ASSERT_EQ(b.seconds.size(), 4u);
  EXPECT_EQ(b.seconds[2].errors, 1u);
  EXPECT_EQ(b.seconds[3].admitted, 1u);
  EXPECT_EQ(b.visits.planned, 7u);
  EXPECT_EQ(b.visits.left, 3u);
  ASSERT_EQ(back.records.size(), 1u);
  EXPECT_EQ(back.records[0].seq, 5u);
  std::string bytes = r.encode();
  EXPECT_FALSE(back.decode(bytes.substr(0, bytes.size() - 1)));
  EXPECT_FALSE(back.decode("nonsense"));
}

}  // namespace
}  // namespace anteroom::loadgen
