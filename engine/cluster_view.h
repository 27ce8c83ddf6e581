// What a cluster node knows of its cluster (GET /v1/cluster): every node that reported
// lately, itself too. An engine that is a cluster node offers it through
// RoomService::cluster_view() (room_service.h); a lone engine offers none.
//
// Thread safety: cluster_info() may be called from any thread at any time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace anteroom {

struct ClusterInfo {
  struct Applied {
    std::string room;
    std::string stream_id;  // the last record applied ("ms-n" as Redis numbers it)
    uint64_t records = 0;   // its record number (1, 2, ...)
  };
  struct Node {
    std::string name;
    int64_t heartbeat_ms = 0;         // wall clock of its last report
    bool reachable = true;            // false: reported, but not within the lease time
    std::vector<std::string> leases;  // rooms it decides for
    std::vector<Applied> applied;
  };
  std::string self;
  bool redis_reachable = false;
  std::vector<Node> nodes;
};

class ClusterView {
 public:
  virtual ~ClusterView() = default;
  virtual ClusterInfo cluster_info() const = 0;
};

}  // namespace anteroom
