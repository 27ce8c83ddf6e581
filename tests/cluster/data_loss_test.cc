// A Redis that lost its data (FLUSHALL here, as a restart without persistence leaves it):
// writes into its rooms are refused with a message that names the way out, reads go on from
// the copies, and an operator's re-seed from the node that applied the most records brings
// the room back with every ticket; a re-seed from a node behind another is refused.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "tests/cluster/cluster_fixture.h"

namespace anteroom::testing {
namespace {

std::string id_of(const Result<JoinResult>& r) {
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  return r.is_ok() ? std::string(id_view(r->ticket.id)) : std::string();
}

std::vector<Reseeded> reseed(cluster::ClusterEngine& node) {
  std::promise<Result<std::vector<Reseeded>>> p;
  auto f = p.get_future();
  node.cluster_control()->reseed(
      [&p](Result<std::vector<Reseeded>> r) { p.set_value(std::move(r)); });
  auto r = f.get();
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  return r.is_ok() ? r.value() : std::vector<Reseeded>{};
}

// Until `pred` holds for the node's view of the cluster (its report comes every second).
bool until_view(cluster::ClusterEngine& node, const std::function<bool(const ClusterInfo&)>& pred) {
  for (int i = 0; i < 100; ++i) {
    if (pred(node.cluster_info())) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

const ClusterInfo::Node* find(const ClusterInfo& info, const std::string& name) {
  for (const auto& n : info.nodes) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

TEST_F(ClusterTest, ARedisThatLostItsDataRefusesWritesUntilANodeReseedsIt) {
  auto& a = add_node("a");
  auto& b = add_node("b");
  ASSERT_TRUE(a.put_room("r", config(0, AdmissionMode::kManual)).is_ok());
  std::vector<std::string> ids;
  ids.reserve(5);
  for (int i = 0; i < 5; ++i) ids.push_back(id_of(a.join("r", "")));
  ASSERT_TRUE(a.leave("r", ids[1]).is_ok());
  settle();

  ASSERT_EQ(redis_cli("FLUSHALL"), "OK");
  auto refused = b.join("r", "");
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.status().code(), Code::kUnavailable);
  EXPECT_NE(refused.status().message().find("POST /v1/cluster/reseed"), std::string::npos)
      << refused.status().message();
  EXPECT_EQ(same_everywhere("r", ids[4]).position, 4u);  // reads go on from the copies
  // b says so in its report, which every node shows.
  ASSERT_TRUE(until_view(a, [](const ClusterInfo& info) {
    const auto* n = find(info, "b");
    return n != nullptr && n->lost == std::vector<std::string>{"r"};
  }));

  // A node that reported a later record of the room: re-seeding from a is refused.
  const int64_t wall = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
  redis_cli("HSET anteroom:nodes ghost '{\"heartbeat_ms\":" + std::to_string(wall) +
            ",\"applied\":{\"r\":[\"9999999999999-0\",99]}}'");
  ASSERT_TRUE(until_view(a, [](const ClusterInfo& info) { return find(info, "ghost"); }));
  auto no = reseed(a);
  ASSERT_EQ(no.size(), 1u);
  EXPECT_EQ(no[0].what, Reseeded::What::kRefused);
  EXPECT_NE(no[0].why.find("'ghost' applied record 99"), std::string::npos) << no[0].why;
  EXPECT_EQ(redis_cli("EXISTS anteroom:{r}:n"), "0");

  redis_cli("HDEL anteroom:nodes ghost");
  ASSERT_TRUE(until_view(a, [](const ClusterInfo& info) { return !find(info, "ghost"); }));
  auto yes = reseed(a);
  ASSERT_EQ(yes.size(), 1u);
  EXPECT_EQ(yes[0].what, Reseeded::What::kReseeded) << yes[0].why;
  const uint64_t records = yes[0].records;
  EXPECT_GT(records, 0u);
  EXPECT_EQ(redis_cli("GET anteroom:{r}:n"), std::to_string(records));
  auto again = reseed(b);  // Redis holds the room now: nothing to do
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].what, Reseeded::What::kIntact);

  // Writes go on where the line was, on every node, and a new node loads the re-seed.
  auto next = b.join("r", "");
  ASSERT_TRUE(next.is_ok()) << next.status().message();
  EXPECT_EQ(next->ticket.seq, 5u);
  catch_up();
  add_node("c").catch_up();
  EXPECT_EQ(same_everywhere("r", id_of(next)).position, 5u);
  EXPECT_EQ(same_everywhere("r", ids[4]).position, 4u);
  EXPECT_EQ(same_everywhere("r", ids[1]).state, TicketState::kLeft);
  EXPECT_TRUE(until_view(a, [](const ClusterInfo& info) {
    const auto* n = find(info, "b");
    return n != nullptr && n->lost.empty();
  }));
}

// Redis holds a history of a room that a node's copy is ahead of: here a node that never saw
// the room writes it anew after the loss (a re-seed from a node that was behind does the
// same). The node ahead takes Redis's copy, both when Redis's records reach it and when its
// own write is refused (append.lua answers BEHIND), instead of numbering tickets apart.
TEST_F(ClusterTest, ANodeAheadOfRedisTakesRedisCopyInsteadOfDriftingApart) {
  auto& a = add_node("a");
  ASSERT_TRUE(a.put_room("r", config(0, AdmissionMode::kManual)).is_ok());
  for (int i = 0; i < 5; ++i) id_of(a.join("r", ""));
  settle();
  ASSERT_EQ(redis_cli("FLUSHALL"), "OK");
  auto& c = add_node("c");
  ASSERT_TRUE(c.put_room("r", config(0, AdmissionMode::kManual)).is_ok());
  const std::string first = id_of(c.join("r", ""));

  Result<JoinResult> next = a.join("r", "");
  for (int i = 0; i < 100 && !next.is_ok(); ++i) {
    // Refused while a takes Redis's copy (which, without a snapshot, starts from nothing).
    EXPECT_TRUE(next.status().code() == Code::kUnavailable ||
                next.status().code() == Code::kRoomNotFound)
        << next.status().message();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    next = a.join("r", "");
  }
  ASSERT_TRUE(next.is_ok()) << next.status().message();
  EXPECT_EQ(next->ticket.seq, 1u);  // after c's, as Redis numbers it; a's five are gone
  catch_up();
  EXPECT_EQ(same_everywhere("r", first).position, 1u);
  EXPECT_EQ(same_everywhere("r", id_of(next)).position, 2u);
  EXPECT_EQ(redis_cli("GET anteroom:{r}:n"), "3");
}

}  // namespace
}  // namespace anteroom::testing
