// Leases: a node asks for the leases of many rooms in a few scripts, not one per room.
#include <gtest/gtest.h>

#include <string>

#include "tests/cluster/cluster_fixture.h"

namespace anteroom::testing {
namespace {

// The number after `field=` in the line of INFO commandstats naming `cmd`; -1 if none.
long calls_of(const std::string& stats, const std::string& cmd) {
  const std::string head = "cmdstat_" + cmd + ":calls=";
  const auto at = stats.find(head);
  return at == std::string::npos ? -1 : std::stol(stats.substr(at + head.size()));
}

std::string redis_info(uint16_t port) {
  const std::string cmd = "redis-cli -p " + std::to_string(port) + " INFO commandstats";
  FILE* f = popen(cmd.c_str(), "r");
  if (f == nullptr) return "";
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, f) != nullptr) out += buf;
  pclose(f);
  return out;
}

class LeaseTest : public ClusterTest {
 protected:
  // A node whose own clockwork renews no lease after its first report (at its start): only
  // settle() asks for them.
  cluster::ClusterEngine& add_quiet_node(const std::string& name) {
    cluster::ClusterOptions o = options(name);
    o.report_interval_ms = 3'600'000;
    auto opened = cluster::open_cluster_engine(o, engine_options());
    EXPECT_TRUE(opened.is_ok()) << opened.status().message();
    nodes_.push_back(std::move(opened.value()));
    return *nodes_.back();
  }
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
  const std::string stats = redis_info(redis_->port());
  const long evals = calls_of(stats, "eval");
  EXPECT_GE(evals, 1) << stats;
  EXPECT_LE(evals, 3) << "one script per room rather than per 256 rooms\n" << stats;
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
