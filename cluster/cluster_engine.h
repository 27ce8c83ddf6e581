// A cluster node: an Engine whose rooms live in Redis Streams, one stream per room, and whose
// every copy (one per node) applies the same records in the same order (docs/cluster.md).
// Reads (status, peek, describe, pushes) are answered from this node's copy in memory;
// writes are records appended to Redis and answered once this node has applied them.
//
// What the server needs to know: writes answer through the *_async calls (the synchronous
// ones wait for them, so never call those on the cluster's own thread); a read of a ticket
// this copy has not seen yet may wait for it with when_caught_up; health() is an error while
// Redis is unreachable, and writes then fail with kUnavailable at once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cluster/redis_access.h"
#include "engine/cluster_view.h"
#include "engine/engine.h"

namespace anteroom::cluster {

struct ClusterOptions {
  std::string redis_host = "127.0.0.1";
  uint16_t redis_port = 6379;
  // More Redis endpoints to start from (a Redis Cluster's nodes): tried in order after
  // redis_host:redis_port; a cluster's other masters are learned from it.
  std::vector<std::pair<std::string, uint16_t>> more_redis;
  std::shared_ptr<const RedisAccess> access;  // AUTH and TLS; none: plain TCP, no AUTH
  // Set: redis_host:redis_port and more_redis are Sentinels, and the Redis is the master
  // they name so (asked again at every reconnection: a failover is followed).
  std::string sentinel_master;
  std::string node_name;             // unique within the cluster; empty = host name and process id
  std::string secret_check;          // what this node's token secret proves (an HMAC): a node whose
                                     // value differs from the cluster's refuses to start
  unsigned redis_wait = 0;           // > 0: a record counts once this many Redis replicas have it
  int64_t lease_ms = 5000;           // a decider's lease; another node takes over after it lapses
  int64_t timeout_ms = 2000;         // a Redis command unanswered this long: connection lost
  int64_t decide_interval_ms = 100;  // how often a decider asks its rooms what is due
  int64_t report_interval_ms = 1000;      // node reports, lease renewal, the rooms' list
  int64_t snapshot_interval_ms = 30'000;  // a decider's snapshot at most this far apart
  uint64_t snapshot_records = 50'000;     // ... or after this many records
  int64_t start_timeout_ms = 10'000;      // Redis must answer within this at start
};

class ClusterEngine : public Engine, public ClusterView, public ClusterControl {
 public:
  const ClusterView* cluster_view() const final { return this; }
  ClusterControl* cluster_control() final { return this; }
  // For tests: returns once this node has proposed what it holds back (visitors seen, due
  // decisions of the rooms it decides for) and applied every record Redis held when called.
  virtual void settle() = 0;
  // For tests: returns once the visitors this node saw are reported and applied (settle()
  // does it too; call it on every node first so that a decider knows them all).
  virtual void report_seen() = 0;
  // For tests: returns once this node applied every record Redis held when called.
  virtual void catch_up() = 0;
  virtual const std::string& node_name() const = 0;
};

// Connects, checks the secret, loads every room (snapshot, then the rest of its stream) and
// starts tailing. An error if Redis does not answer within start_timeout_ms or the cluster
// uses another token secret. `engine.clock` stamps records: give every node a wall clock
// (WallClock) in production, one shared ManualClock in tests.
Result<std::unique_ptr<ClusterEngine>> open_cluster_engine(const ClusterOptions& options,
                                                           EngineOptions engine);

}  // namespace anteroom::cluster
