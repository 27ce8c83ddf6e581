// Leases and the decider's queue (docs/cluster.md, "Leases"). Once a report interval a node
// asks for the lease of every room it has: one script for up to kLeasesPerScript rooms (on
// a Redis Cluster, one per slot, as a script's keys must share one). Of the rooms whose
// lease it holds, only those with something due are looked at, in the order of their
// deadlines: an empty room costs the decider nothing until a record comes.
#include <map>

#include "cluster/lua_scripts.h"
#include "cluster/node.h"

namespace anteroom::cluster {

std::string room_owner_key(std::string_view room);

namespace {

const std::string_view kLeases = lua_script("cluster/lua/leases.lua");

// Rooms per lease script: a script holds Redis up while it runs (about a microsecond a key).
constexpr size_t kLeasesPerScript = 256;

}  // namespace

void Node::set_due(const std::string& room, Room& r, int64_t at_ms) {
  r.decide_at_ms = at_ms;
  if (at_ms == kNoDeadline || at_ms >= r.queued_ms) return;  // an entry comes as early
  r.queued_ms = at_ms;
  due_.emplace(at_ms, room);
}

void Node::decide_due(int64_t now_ms) {
  // Taken out first: a decision that fails at once queues its room again.
  std::vector<std::string> now;
  while (!due_.empty() && due_.top().first <= now_ms) {
    auto [at, room] = due_.top();
    due_.pop();
    auto it = rooms_.find(room);
    if (it == rooms_.end() || it->second.queued_ms != at) continue;  // a later entry's turn
    it->second.queued_ms = kNoDeadline;
    now.push_back(std::move(room));
  }
  const auto steady = Steady::now();
  for (const std::string& room : now) {
    Room& r = rooms_[room];
    if (r.decide_at_ms > now_ms) {
      set_due(room, r, r.decide_at_ms);  // moved later since it was queued
    } else if (r.lease_until > steady && !r.deciding) {
      decide(room);
    }
    // Otherwise: not this node's (a lease taken queues it), or its decision is on the way
    // (applied or failed, that queues it).
  }
}

void Node::renew_leases(std::vector<std::string> rooms, std::function<void()> done) {
  std::map<uint16_t, std::vector<std::string>> groups;  // by slot; one group on a lone Redis
  for (auto& room : rooms) {
    groups[cmd_->clustered() ? key_slot(room_owner_key(room)) : 0].push_back(std::move(room));
  }
  auto left = std::make_shared<size_t>(1);
  auto one = [left, done = std::move(done)] {
    if (--*left == 0 && done) done();
  };
  const auto sent = Steady::now();
  for (auto& [slot, group] : groups) {
    for (size_t at = 0; at < group.size(); at += kLeasesPerScript) {
      const size_t n = std::min(kLeasesPerScript, group.size() - at);
      std::vector<std::string> args{"EVAL", std::string(kLeases), std::to_string(n)};
      std::vector<std::string> names(group.begin() + at, group.begin() + at + n);
      for (const auto& room : names) args.push_back(room_owner_key(room));
      args.push_back(name_);
      args.push_back(std::to_string(options_.lease_ms));
      ++*left;
      cmd_->command(
          args, [this, names = std::move(names), sent, one, cmd = cmd_](const RedisReply& reply) {
            if (cmd == cmd_) {
              for (size_t i = 0; i < names.size(); ++i) {
                const bool held =
                    reply.is_array() && i < reply.elements.size() && reply.elements[i].integer == 1;
                took_lease(names[i], held, sent);
              }
            }
            one();
          });
    }
  }
  one();
}

void Node::took_lease(const std::string& room, bool held, Steady::time_point sent) {
  Room& r = rooms_[room];
  if (!held) {
    r.lease_until = {};
    return;
  }
  const bool taken = r.lease_until <= sent;
  // Counted from when the request left, less a second for clocks that drift.
  r.lease_until = sent + std::chrono::milliseconds(options_.lease_ms - 1000);
  if (taken) set_due(room, r, 0);  // taken over: look afresh
}

}  // namespace anteroom::cluster
