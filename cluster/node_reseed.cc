// A Redis that lost its data (docs/cluster.md, "When Redis loses its data"): the rooms it
// lost are refused writes (cluster/lua/append.lua answers LOST) until an operator re-seeds
// them from the copy of the node that applied the most records (cluster/lua/reseed.lua).
#include <cinttypes>
#include <cstdio>
#include <memory>

#include "cluster/lua_scripts.h"
#include "cluster/node.h"
#include "cluster/records.h"

namespace anteroom::cluster {

std::string room_snap_key(std::string_view room);
std::string room_n_key(std::string_view room);

namespace {

const std::string_view kReseed = lua_script("cluster/lua/reseed.lua");

}  // namespace

void Node::lost_room(const std::string& room, Room& r, const std::string& why) {
  if (r.lost) return;
  r.lost = true;
  fprintf(stderr,
          "anteroom cluster: room '%s': %s. This node applied %" PRIu64
          " records of it; writes into the room are refused until an operator re-seeds it "
          "from the node that applied the most (GET /v1/cluster lists them): POST "
          "/v1/cluster/reseed there\n",
          room.c_str(), why.c_str(), r.last_n);
}

void Node::take_redis_copy(const std::string& room, const std::string& why) {
  fprintf(stderr,
          "anteroom cluster: room '%s': %s: Redis holds fewer records of it than the %" PRIu64
          " this node applied (it was re-seeded from a node that was behind, or a node wrote "
          "into it after Redis lost it). This node drops what Redis does not hold and loads "
          "Redis's copy\n",
          room.c_str(), why.c_str(), rooms_[room].last_n);
  load(room);
}

void Node::reseed(std::function<void(Result<std::vector<Reseeded>>)> then) {
  post([this, then = std::move(then)] {
    if (!up_) return then(unreachable());
    std::vector<std::string> rooms;
    for (const auto& [name, r] : rooms_) {
      if (r.last_n > 0 && replica_->room_info(name).is_ok()) rooms.push_back(name);
    }
    if (rooms.empty()) return then(std::vector<Reseeded>{});
    // Every answer comes on this thread: the count needs no lock.
    auto out = std::make_shared<std::vector<Reseeded>>(rooms.size());
    auto left = std::make_shared<size_t>(rooms.size());
    for (size_t i = 0; i < rooms.size(); ++i) {
      reseed_room(rooms[i], [out, left, i, then](Reseeded one) {
        (*out)[i] = std::move(one);
        if (--*left == 0) then(std::move(*out));
      });
    }
  });
}

void Node::reseed_room(const std::string& room, std::function<void(Reseeded)> then) {
  Room& r = rooms_[room];
  Reseeded out;
  out.room = room;
  out.records = r.last_n;
  auto refuse = [&](std::string why) {
    out.what = Reseeded::What::kRefused;
    out.why = std::move(why);
    then(std::move(out));
  };
  std::string ahead;
  {
    // A node that applied more of the room holds acknowledged writes this copy lacks.
    std::lock_guard lock(state_mu_);
    for (const ClusterInfo::Node& n : info_.nodes) {
      for (const ClusterInfo::Applied& a : n.applied) {
        if (n.name != name_ && a.room == room && a.records > r.last_n && ahead.empty()) {
          ahead = "node '" + n.name + "' applied record " + std::to_string(a.records) +
                  ", this node " + std::to_string(r.last_n) + ": re-seed from it";
        }
      }
    }
  }
  if (!ahead.empty()) return refuse(std::move(ahead));
  if (r.loading || r.broken) return refuse("this node's copy of the room is not whole yet");
  auto img = replica_->image(room);
  if (!img.is_ok()) return refuse(img.status().message());
  const Snapshot s{r.last_n, r.last_id, std::move(img).value()};
  cmd_->command({"EVAL", std::string(kReseed), "3", room_n_key(room), room_snap_key(room),
                 room_snap_key(room) + "n", std::to_string(s.records), encode_snapshot(s)},
                [this, room, out = std::move(out), then](const RedisReply& reply) mutable {
                  if (reply.is_error()) {
                    out.what = Reseeded::What::kRefused;
                    out.why = "Redis: " + reply.str;
                    return then(std::move(out));
                  }
                  if (reply.integer != 1) {
                    out.what = Reseeded::What::kIntact;
                    return then(std::move(out));
                  }
                  out.what = Reseeded::What::kReseeded;
                  Room& rr = rooms_[room];
                  rr.lost = false;
                  rr.snapshot_n = out.records;
                  rr.prev_snapshot_id.clear();
                  cmd_->command({"SADD", "anteroom:rooms", room}, [](const RedisReply&) {});
                  fprintf(stderr,
                          "anteroom cluster: room '%s' re-seeded from this node's copy: record "
                          "%" PRIu64 " is its snapshot, the next record follows it\n",
                          room.c_str(), out.records);
                  then(std::move(out));
                });
}

}  // namespace anteroom::cluster
