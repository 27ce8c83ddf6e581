// Leases: a node asks for the leases of many rooms in a few scripts, not one per room.
#include <gtest/gtest.h>

#include <string>

#include "tests/cluster/cluster_fixture.h"

namespace anteroom::testing {
namespace {

class LeaseTest : public ClusterTest {
 protected:
  std::string owned_by(const std::string& node) {
    return redis_cli(
        "EVAL \"local n = 0 for _, k in ipairs(redis.call('KEYS', 'anteroom:*:owner')) do if "
        "redis.call('GET', k) == ARGV[1] then n = n + 1 end end return n\" 0 " +
        node);
  }
};

TEST_F(LeaseTest, ANodeRenewsTheLeasesOfManyRoomsInAFewScripts) {
  auto& a = add_quiet_node("a");
  constexpr int kRooms = 600;
  for (int i = 0; i < kRooms; ++i) {
    ASSERT_TRUE(a.put_room("r" + std::to_string(i), config(5)).is_ok());
  }
  a.catch_up();
  ASSERT_EQ(redis_cli("CONFIG RESETSTAT"), "OK");
  a.settle();  // asks for every room's lease
  const uint64_t evals = command_calls("eval");
  EXPECT_GE(evals, 1U);
  EXPECT_LE(evals, 3U) << "one script per room rather than per 256 rooms";
  EXPECT_EQ(owned_by("a"), std::to_string(kRooms));  // ... and holds every one of them
  EXPECT_EQ(redis_cli("GET anteroom:{r0}:owner"), "a");
  EXPECT_EQ(redis_cli("GET anteroom:{r599}:owner"), "a");
}

// A second node finds every lease held and takes none, then takes them all once the first
// node's lapse (deleted here, as Redis deletes a lease nobody renewed).
TEST_F(LeaseTest, ALeaseHeldElsewhereIsNotTakenUntilItLapses) {
  auto& a = add_quiet_node("a");
  for (int i = 0; i < 300; ++i) ASSERT_TRUE(a.put_room("r" + std::to_string(i), config(5)).is_ok());
  a.settle();
  auto& b = add_quiet_node("b");
  b.catch_up();
  b.settle();
  EXPECT_EQ(owned_by("a"), "300");
  EXPECT_EQ(owned_by("b"), "0");
  ASSERT_EQ(redis_cli("EVAL \"for _, k in ipairs(redis.call('KEYS', 'anteroom:*:owner')) do "
                      "redis.call('DEL', k) end return 1\" 0"),
            "1");
  b.settle();
  EXPECT_EQ(owned_by("b"), "300");
  EXPECT_EQ(owned_by("a"), "0");
}

}  // namespace
}  // namespace anteroom::testing
