// Nodes on one Redis: every copy applies the same records to the same rooms.
#include <gtest/gtest.h>

#include "tests/cluster/cluster_fixture.h"

namespace anteroom::testing {
namespace {

std::string id_of(const Result<JoinResult>& r) {
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  return r.is_ok() ? std::string(id_view(r->ticket.id)) : std::string();
}

TEST_F(ClusterTest, AbandonedVisitorsExpireTheSameOnEveryNode) {
  auto& a = add_node("a");
  auto& b = add_node("b");
  RoomConfig c = config(5, AdmissionMode::kManual);
  c.heartbeat_timeout_seconds = 10;
  ASSERT_TRUE(a.put_room("r", c).is_ok());
  catch_up();
  std::string t1 = id_of(a.join("r", ""));
  std::string t2 = id_of(b.join("r", ""));
  std::string t3 = id_of(a.join("r", ""));
  catch_up();
  clock_->advance_s(6);
  ASSERT_TRUE(b.status("r", t2).is_ok());     // seen by b
  ASSERT_TRUE(a.heartbeat("r", t3).is_ok());  // seen by a
  clock_->advance_s(5);
  settle();
  EXPECT_EQ(same_everywhere("r", t1).reason, EndReason::kAbandoned);
  EXPECT_EQ(same_everywhere("r", t2).position, 1u);
  EXPECT_EQ(same_everywhere("r", t3).position, 2u);
}

}  // namespace
}  // namespace anteroom::testing
