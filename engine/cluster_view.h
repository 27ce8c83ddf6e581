// What a cluster node knows of its cluster (GET /v1/cluster): every node that reported
// lately, itself too. An engine that is a cluster node offers it through
// RoomService::cluster_view() (room_service.h), and what an operator may do to the cluster
// through RoomService::cluster_control(); a lone engine offers neither.
//
// Thread safety: cluster_info() and reseed() may be called from any thread at any time.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/status.h"

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
    std::vector<std::string> lost;  // rooms whose records Redis lost, as this node found
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

// What re-seeding did to one room.
struct Reseeded {
  enum class What : uint8_t {
    kReseeded,  // Redis had lost the room: this node's copy is its snapshot now
    kIntact,    // Redis has the room's records: nothing done
    kRefused,   // another node reported a later record: re-seed from that one
  };
  std::string room;
  What what = What::kIntact;
  uint64_t records = 0;  // this node's last record of the room
  std::string why;       // kRefused: which node is ahead, how far
};

class ClusterControl {
 public:
  virtual ~ClusterControl() = default;
  // For every room of this node's copy that Redis no longer holds (it restarted without its
  // data; writes into such a room are refused until then): stores the copy as the room's
  // snapshot and numbers the room's next record after it, unless a node that reported
  // within the last minute applied a later record of the room. `then` (any thread) gets
  // one entry per room of the copy, or kUnavailable while Redis is out of reach.
  virtual void reseed(std::function<void(Result<std::vector<Reseeded>>)> then) = 0;
};

}  // namespace anteroom
