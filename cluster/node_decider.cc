// What runs on the cluster thread's clock: leases and the decisions of the rooms this node
// decides for, seen-reports, snapshots and trimming, the node's report (docs/cluster.md).
#include <algorithm>
#include <boost/json.hpp>
#include <charconv>
#include <future>
#include <set>
#include <thread>

#include "cluster/lua_scripts.h"
#include "cluster/node.h"

namespace anteroom::cluster {

std::string room_log_key(std::string_view room);
std::string room_owner_key(std::string_view room);
std::string room_snap_key(std::string_view room);
std::string room_n_key(std::string_view room);

namespace {

// Stores a snapshot only for the lease holder, and only one newer than the stored one (its
// record number is kept beside it).
const std::string_view kSnapshot = lua_script("cluster/lua/snapshot.lua");

constexpr const char* kNodes = "anteroom:nodes";
constexpr int64_t kForgetNodeMs = 60'000;  // a node silent this long leaves the report
constexpr uint64_t kSweepReports = 30;     // each room fetched once in this many reports

}  // namespace

void Node::tick() {
  if (stopping_) return;
  const auto now = Steady::now();
  if (up_) {
    expire_batches();
    flush_seen(false);
    decide_due(clock_->now_ms());
    if (now - last_report_ >= std::chrono::milliseconds(options_.report_interval_ms)) {
      last_report_ = now;
      ++reports_;
      refresh_rooms();
      report();
      std::vector<std::string> rooms;
      for (auto& [room, r] : rooms_) {
        if (replica_->join_rules(room).is_ok()) rooms.push_back(room);
        if (r.lease_until > now) store_snapshot(room);
        // A reader waits for a ticket no record may ever bring (one nobody joined with).
        if (!r.caught_up.empty()) fetch(room);
      }
      renew_leases(std::move(rooms), nullptr);
    }
  }
  ticker_.expires_after(std::chrono::milliseconds(options_.decide_interval_ms));
  ticker_.async_wait([this](boost::system::error_code ec) {
    if (!ec) tick();
  });
}

// A write Redis never answered fails with the connection (its watchdog); one Redis stored
// is answered when applied, however late. Only a record that never comes back (Redis lost
// it) is given up, after a minute.
void Node::expire_batches() {
  const auto now = Steady::now();
  std::vector<uint64_t> old;
  for (auto& [id, b] : batches_) {
    if (now - b.since > std::chrono::seconds(60)) old.push_back(id);
  }
  for (uint64_t id : old) {
    fail_batch(id, Status(Code::kUnavailable, "the record was not seen back from Redis"));
  }
}

// Every room in the cluster is in the set anteroom:rooms; a room deleted everywhere leaves
// this node's list too. A room's records ring the bell, which this node hears while its
// connection is up (a dropped one reconnects and fetches every room): a bell missed anyway
// (a Redis Cluster shard that did not pass it on) is caught by a sweep that fetches each
// room once in kSweepReports reports.
void Node::refresh_rooms(std::function<void()> loaded) {
  cmd_->command({"SMEMBERS", "anteroom:rooms"},
                [this, loaded = std::move(loaded), cmd = cmd_](const RedisReply& reply) {
                  if (cmd != cmd_ || !reply.is_array()) return;
                  const uint64_t turn = reports_ % kSweepReports;
                  for (const auto& e : reply.elements) {
                    if (!valid_room_name(e.str)) continue;
                    auto it = rooms_.find(e.str);
                    if (it == rooms_.end()) {
                      track(e.str);
                    } else if (it->second.broken) {
                      load(e.str);  // perhaps a newer snapshot covers the gap now
                    } else if (std::hash<std::string>{}(e.str) % kSweepReports == turn) {
                      fetch(e.str);
                    }
                  }
                  if (loaded) fetch_all(loaded);
                });
}

// The decider's turn: what is due now, as one record, the next only after this one applied.
void Node::decide(const std::string& room) {
  const int64_t now = clock_->now_ms();
  ReplicaEngine::Decision due = replica_->decide(room, now);
  Room& r = rooms_[room];
  r.decide_at_ms = due.next_ms;
  if (due.ops.empty()) return;
  std::vector<Op> ops = std::move(due.ops);
  r.deciding = true;
  std::vector<Done> done(ops.size());
  append(room, std::move(ops), std::move(done), now, Kind::kDecision);
}

// The room as applied so far, with the record it covers; the stream is trimmed to the
// snapshot before it, so a node a little behind still finds its next records.
void Node::store_snapshot(const std::string& room) {
  Room& r = rooms_[room];
  // Only a copy that is caught up: a decider that just took over may still be behind.
  if (r.snapshotting || r.last_n == r.snapshot_n || r.fetching || r.fetch_again || r.loading ||
      r.broken) {
    return;
  }
  const auto now = Steady::now();
  if (now - r.last_snapshot < std::chrono::milliseconds(options_.snapshot_interval_ms) &&
      r.last_n - r.snapshot_n < options_.snapshot_records) {
    return;
  }
  auto img = replica_->image(room);
  if (!img.is_ok()) return;
  Snapshot s{r.last_n, r.last_id, std::move(img).value()};
  r.snapshotting = true;
  r.last_snapshot = now;
  cmd_->command({"EVAL", std::string(kSnapshot), "3", room_owner_key(room), room_snap_key(room),
                 room_snap_key(room) + "n", name_, std::to_string(s.records), encode_snapshot(s)},
                [this, room, n = s.records, id = s.stream_id, cmd = cmd_](const RedisReply& reply) {
                  if (cmd != cmd_) return;
                  Room& rr = rooms_[room];
                  rr.snapshotting = false;
                  if (reply.is_error() || reply.integer != 1) return;
                  rr.snapshot_n = n;
                  if (!rr.prev_snapshot_id.empty()) {
                    cmd_->command({"XTRIM", room_log_key(room), "MINID", rr.prev_snapshot_id},
                                  [](const RedisReply&) {});
                  }
                  rr.prev_snapshot_id = id;
                });
}

// Visitors seen by this node since the last report, one record per room, stamped with the
// latest sighting. Reported every quarter of the room's shortest timeout (1 to 15 s).
void Node::flush_seen(bool all) {
  const auto now = Steady::now();
  if (!up_ || (!all && now - last_seen_flush_ < std::chrono::milliseconds(250))) return;
  last_seen_flush_ = now;
  // Which rooms report now, decided once for every stripe (a room's visitors are spread
  // over all of them); only rooms someone was seen in are looked at.
  std::set<std::string, std::less<>> seen;
  for (auto& stripe : seen_) {
    std::lock_guard lock(stripe.mu);
    for (const auto& [room, sightings] : stripe.rooms) seen.insert(room);
  }
  std::set<std::string, std::less<>> due;
  for (const std::string& room : seen) {
    auto r = rooms_.find(room);
    if (r == rooms_.end()) continue;
    auto info = replica_->room_info(room);
    if (!info.is_ok()) continue;
    const int64_t shortest =
        std::min(info->config.heartbeat_timeout_seconds, info->config.session_ttl_seconds) *
        int64_t{1000};
    const int64_t every = std::clamp<int64_t>(shortest / 4, 1000, 15'000);
    if (all || now - r->second.last_seen_report >= std::chrono::milliseconds(every)) {
      due.insert(room);
    }
  }
  std::map<std::string, std::pair<std::vector<uint64_t>, int64_t>> taken;
  for (auto& stripe : seen_) {
    std::lock_guard lock(stripe.mu);
    for (auto it = stripe.rooms.begin(); it != stripe.rooms.end();) {
      if (!rooms_.contains(it->first) || !replica_->join_rules(it->first).is_ok()) {
        it = stripe.rooms.erase(it);  // a room deleted since
        continue;
      }
      if (!due.contains(it->first)) {
        ++it;
        continue;
      }
      auto& t = taken[it->first];
      t.first.insert(t.first.end(), it->second.seqs.begin(), it->second.seqs.end());
      t.second = std::max(t.second, it->second.latest_ms);
      it = stripe.rooms.erase(it);
    }
  }
  for (const auto& room : due) rooms_[room].last_seen_report = now;
  for (auto& [room, t] : taken) {
    auto& seqs = t.first;
    std::sort(seqs.begin(), seqs.end());
    std::vector<Op> ops;
    ops.emplace_back(op::Seen{std::move(seqs)});
    append(room, std::move(ops), std::vector<Done>(1), t.second, Kind::kSeen);
  }
}

void Node::mark_seen(std::string_view room, uint64_t seq) {
  SeenStripe& s = seen_[(std::hash<std::string_view>{}(room) ^ seq) % kSeenStripes];
  const int64_t now = clock_->now_ms();
  std::lock_guard lock(s.mu);
  SeenRoom& r = s.rooms[std::string(room)];
  r.seqs.insert(seq);  // a visitor polling many times between reports counts once
  r.latest_ms = std::max(r.latest_ms, now);
}

// This node's report (what it decides for, how far it applied each room) and everybody's,
// for GET /v1/cluster.
void Node::report() {
  namespace json = boost::json;
  const auto now = Steady::now();
  json::object self;
  const int64_t wall = WallClock().now_ms();
  self["heartbeat_ms"] = wall;
  json::array leases, lost;
  json::object applied;
  for (auto& [room, r] : rooms_) {
    if (r.lease_until > now) leases.emplace_back(room);
    if (r.last_n > 0) {
      applied[room] = json::array{json::value(r.last_id), json::value(r.last_n)};
    }
    if (r.lost) {
      lost.emplace_back(room);
      // Re-seeded by another node: writes go again (the next record clears it too).
      cmd_->command({"EXISTS", room_n_key(room)},
                    [this, name = room, cmd = cmd_](const RedisReply& x) {
                      if (cmd == cmd_ && x.integer == 1) rooms_[name].lost = false;
                    });
    }
  }
  self["leases"] = std::move(leases);
  self["applied"] = std::move(applied);
  self["lost"] = std::move(lost);
  cmd_->command({"HSET", kNodes, name_, json::serialize(self)}, [](const RedisReply&) {});
  cmd_->command({"HGETALL", kNodes}, [this, wall, cmd = cmd_](const RedisReply& reply) {
    if (cmd != cmd_ || !reply.is_array()) return;
    ClusterInfo info;
    for (size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
      ClusterInfo::Node n;
      n.name = reply.elements[i].str;
      boost::system::error_code ec;
      json::value v = json::parse(reply.elements[i + 1].str, ec);
      if (ec || !v.is_object()) continue;
      const json::object& o = v.as_object();
      if (const auto* hb = o.if_contains("heartbeat_ms"); hb && hb->is_int64()) {
        n.heartbeat_ms = hb->as_int64();
      }
      if (wall - n.heartbeat_ms > kForgetNodeMs) {
        cmd_->command({"HDEL", kNodes, n.name}, [](const RedisReply&) {});
        continue;
      }
      n.reachable = wall - n.heartbeat_ms <= options_.lease_ms;
      if (const auto* l = o.if_contains("leases"); l && l->is_array()) {
        for (const auto& x : l->as_array()) {
          if (x.is_string()) n.leases.emplace_back(x.as_string());
        }
      }
      if (const auto* a = o.if_contains("applied"); a && a->is_object()) {
        for (const auto& [room, x] : a->as_object()) {
          if (!x.is_array() || x.as_array().size() != 2) continue;
          const auto& arr = x.as_array();
          if (!arr[0].is_string() || !arr[1].is_number()) continue;
          n.applied.push_back(
              {std::string(room), std::string(arr[0].as_string()), arr[1].to_number<uint64_t>()});
        }
      }
      if (const auto* l = o.if_contains("lost"); l && l->is_array()) {
        for (const auto& x : l->as_array()) {
          if (x.is_string()) n.lost.emplace_back(x.as_string());
        }
      }
      info.nodes.push_back(std::move(n));
    }
    std::sort(info.nodes.begin(), info.nodes.end(),
              [](const auto& a, const auto& b) { return a.name < b.name; });
    std::lock_guard lock(state_mu_);
    info_ = std::move(info);
  });
}

void Node::run_here(const std::function<void(std::function<void()>)>& fn) {
  std::promise<void> p;
  post([&] { fn([&p] { p.set_value(); }); });
  p.get_future().wait();
}

void Node::fetch_all(const std::function<void()>& done) {
  auto left = std::make_shared<size_t>(1);
  auto one = [left, done] {
    if (--*left == 0) done();
  };
  for (auto& [room, r] : rooms_) {
    if (!up_) break;
    ++*left;
    r.caught_up.emplace_back(one);
    fetch(room);
  }
  one();
}

// Until nothing this node appended is still on its way back (bounded: a second).
void Node::wait_quiet() {
  for (int i = 0; i < 1000; ++i) {
    std::promise<bool> p;
    post([&] {
      bool busy = !batches_.empty();
      for (auto& [room, r] : rooms_) busy = busy || r.appending || !r.queue.empty();
      p.set_value(busy && up_);
    });
    if (!p.get_future().get()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void Node::catch_up() {
  wait_quiet();
  run_here([this](const std::function<void()>& done) { fetch_all(done); });
}

// What this node holds back goes out (seen-reports), leases are asked for, due decisions
// are proposed, and everything is applied.
void Node::report_seen() {
  run_here([this](const std::function<void()>& done) {
    flush_seen(true);
    done();
  });
  catch_up();
}

void Node::settle() {
  report_seen();
  run_here([this](const std::function<void()>& done) {
    std::vector<std::string> rooms;
    for (auto& [room, r] : rooms_) {
      if (replica_->join_rules(room).is_ok()) rooms.push_back(room);
    }
    if (!up_) return done();
    renew_leases(std::move(rooms), done);
  });
  catch_up();
  run_here([this](const std::function<void()>& done) {
    for (auto& [room, r] : rooms_) {
      if (r.lease_until > Steady::now() && !r.deciding) decide(room);
    }
    done();
  });
  catch_up();
}

}  // namespace anteroom::cluster
