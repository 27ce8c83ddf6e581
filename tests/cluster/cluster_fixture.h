// Cluster nodes in this process on a real redis-server (tests/support/redis_server.h), with
// one manual clock for all of them, and ways to read each node's copy.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "cluster/cluster_engine.h"
#include "tests/support/redis_server.h"

namespace anteroom::testing {

class ClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    redis_ = std::make_unique<RedisServer>(redis_args());
    ASSERT_TRUE(redis_->running());
    clock_ = std::make_shared<ManualClock>();
  }
  virtual std::vector<std::string> redis_args() { return {}; }

  cluster::ClusterOptions options(const std::string& name) {
    cluster::ClusterOptions c;
    c.redis_port = redis_->port();
    c.node_name = name;
    c.secret_check = "secret-one";
    c.start_timeout_ms = 3000;
    return c;
  }
  EngineOptions engine_options() {
    EngineOptions o;
    o.clock = clock_;
    o.shards = 2;
    o.id_key = std::array<uint64_t, 2>{11, 22};
    o.secret = std::array<uint8_t, 32>{1, 2, 3};  // the nodes' shared secret
    return o;
  }
  cluster::ClusterEngine& add_node(const std::string& name) {
    auto n = cluster::open_cluster_engine(options(name), engine_options());
    EXPECT_TRUE(n.is_ok()) << n.status().message();
    nodes_.push_back(std::move(n.value()));
    return *nodes_.back();
  }
  // A node whose own clockwork (the rooms' list, which reads every room; leases; reports;
  // the decider's tick, whose records ring the bell) waits an hour after its start, so that
  // every Redis call counted is one a settle or a read asked for: under a sanitizer a tick
  // fell inside a measurement.
  cluster::ClusterEngine& add_quiet_node(const std::string& name) {
    cluster::ClusterOptions o = options(name);
    o.report_interval_ms = 3'600'000;
    o.decide_interval_ms = 3'600'000;
    auto n = cluster::open_cluster_engine(o, engine_options());
    EXPECT_TRUE(n.is_ok()) << n.status().message();
    nodes_.push_back(std::move(n.value()));
    return *nodes_.back();
  }
  // How many times Redis ran `command` ("xrange", "eval"), by INFO commandstats.
  uint64_t command_calls(const std::string& command);  // unknown_ticket_test.cc
  void catch_up() {
    for (auto& n : nodes_) n->catch_up();
  }
  void settle() {
    for (auto& n : nodes_) n->report_seen();
    for (auto& n : nodes_) {
      n->run_all();
      n->settle();
    }
    catch_up();
  }
  RoomConfig config(uint32_t capacity, AdmissionMode mode = AdmissionMode::kAuto) {
    RoomConfig c;
    c.capacity = capacity;
    c.admission = mode;
    return c;
  }
  // Every node's view of the ticket is the same; returns it.
  TicketView same_everywhere(const std::string& room, const std::string& ticket) {
    auto first = nodes_.front()->peek(room, ticket);
    EXPECT_TRUE(first.is_ok()) << first.status().message();
    if (!first.is_ok()) return {};
    for (auto& n : nodes_) {
      auto v = n->peek(room, ticket);
      EXPECT_TRUE(v.is_ok()) << n->node_name() << ": " << v.status().message();
      if (!v.is_ok()) continue;
      EXPECT_EQ(v->seq, first->seq) << n->node_name();
      EXPECT_EQ(v->state, first->state) << n->node_name();
      EXPECT_EQ(v->position, first->position) << n->node_name();
      EXPECT_EQ(v->reason, first->reason) << n->node_name();
      EXPECT_EQ(v->waiting, first->waiting) << n->node_name();
      EXPECT_EQ(v->active, first->active) << n->node_name();
    }
    return first.value();
  }

  std::string redis_cli(const std::string& args);  // cluster_test.cc

  std::unique_ptr<RedisServer> redis_;
  std::shared_ptr<ManualClock> clock_;
  std::vector<std::unique_ptr<cluster::ClusterEngine>> nodes_;
};

}  // namespace anteroom::testing
