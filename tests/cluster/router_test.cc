// Redis Cluster's slot of a key, as the router computes it (the full router is tested
// against a real Redis Cluster by tests/cluster/redis_cluster.sh).
#include "cluster/redis_router.h"

#include <gtest/gtest.h>

namespace anteroom::cluster {
namespace {

TEST(KeySlot, MatchesRedisClusterNumbering) {
  EXPECT_EQ(key_slot("123456789"), 0x31C3 & 16383);  // CRC16/XMODEM's check value
  EXPECT_EQ(key_slot("foo"), 12182);                 // CLUSTER KEYSLOT foo
  EXPECT_EQ(key_slot("{user1000}.following"), key_slot("{user1000}.followers"));
  EXPECT_EQ(key_slot("{user1000}.following"), key_slot("user1000"));
  EXPECT_EQ(key_slot("foo{}{bar}"), key_slot("foo{}{bar}"));  // empty tag: the whole key
  EXPECT_NE(key_slot("foo{}{bar}"), key_slot("bar"));
  // A room's keys share its slot, so its scripts run on one shard.
  EXPECT_EQ(key_slot("anteroom:{sale}:log"), key_slot("anteroom:{sale}:owner"));
  EXPECT_EQ(key_slot("anteroom:{sale}:snap"), key_slot("sale"));
}

}  // namespace
}  // namespace anteroom::cluster
