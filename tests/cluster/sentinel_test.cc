// What following a Sentinel's master rests on (cluster/node_sentinel.cc): a demoted master's
// READONLY closes the connection (so the node reconnects and asks again), a master no
// Sentinel names keeps a node from starting with that said, and a password given to a
// Redis (or Sentinel) without one is no refusal. The failover itself, with real Sentinels,
// is tests/cluster/sentinel.sh.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include "cluster/redis_connection.h"
#include "tests/cluster/cluster_fixture.h"

namespace anteroom::testing {
namespace {

// Connects, sends `args`, and runs until the connection closed or the reply came; returns
// why it closed ("" if it did not) and the reply.
std::pair<std::string, cluster::RedisReply> ask(
    uint16_t port, std::vector<std::string> args,
    std::shared_ptr<const cluster::RedisAccess> access) {
  boost::asio::io_context io;
  auto c = std::make_shared<cluster::RedisConnection>(io, "127.0.0.1", port, 2000, access);
  std::string closed, connect_error;
  cluster::RedisReply reply;
  c->on_close = [&](const std::string& why) { closed = why; };
  c->connect([&](const std::string& error) {
    connect_error = error;
    if (!error.empty()) return;
    c->command(args, [&](const cluster::RedisReply& r) {
      reply = r;
      if (!r.is_error()) c->close("done");
    });
  });
  io.run_for(std::chrono::seconds(5));
  EXPECT_EQ(connect_error, "");
  return {closed == "done" ? "" : closed, reply};
}

TEST(Sentinel, ADemotedMastersReadonlyClosesTheConnection) {
  RedisServer master;
  ASSERT_TRUE(master.running());
  RedisServer replica({"--replicaof", "127.0.0.1", std::to_string(master.port())});
  ASSERT_TRUE(replica.running());
  auto [closed, reply] = ask(replica.port(), {"SET", "k", "v"}, nullptr);
  EXPECT_NE(closed.find("is a replica now: READONLY"), std::string::npos) << closed;
  EXPECT_NE(reply.str.find("connection lost"), std::string::npos) << reply.str;
  // A read from the same replica is answered as usual.
  auto [closed2, reply2] = ask(replica.port(), {"GET", "k"}, nullptr);
  EXPECT_EQ(closed2, "");
}

TEST(Sentinel, APasswordForARedisWithoutOneIsNoRefusal) {
  RedisServer redis;
  ASSERT_TRUE(redis.running());
  auto access = cluster::RedisAccess::make("", "a-password-it-does-not-have", false, {});
  ASSERT_TRUE(access.is_ok());
  auto [closed, reply] = ask(redis.port(), {"SET", "k", "v"}, access.value());
  EXPECT_EQ(closed, "");
  EXPECT_EQ(reply.str, "OK");
}

class NoSentinelTest : public ClusterTest {};

TEST_F(NoSentinelTest, AMasterNoSentinelNamesKeepsTheNodeFromStarting) {
  // The fixture's Redis is no Sentinel: SENTINEL is an unknown command there.
  cluster::ClusterOptions o = options("n1");
  o.sentinel_master = "mymaster";
  o.start_timeout_ms = 1500;
  auto n = cluster::open_cluster_engine(o, engine_options());
  ASSERT_FALSE(n.is_ok());
  EXPECT_NE(n.status().message().find("no Sentinel named a master mymaster"), std::string::npos)
      << n.status().message();
  EXPECT_EQ(n.status().message().rfind("Sentinel at 127.0.0.1:", 0), 0u) << n.status().message();
}

}  // namespace
}  // namespace anteroom::testing
