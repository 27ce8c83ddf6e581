// Nodes on one Redis: every copy applies the same records to the same rooms.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <thread>

#include "cluster/records.h"
#include "engine/replica.h"

#include "tests/cluster/cluster_fixture.h"

namespace anteroom::testing {
namespace {

// What redis-cli (Debian's redis-tools, which redis-server brings) prints, first line.
std::string redis_cli_at(uint16_t port, const std::string& args) {
  std::string cmd = "redis-cli -p " + std::to_string(port) + " " + args;
  FILE* f = popen(cmd.c_str(), "r");
  if (f == nullptr) return "";
  char buf[256] = {};
  std::string out = fgets(buf, sizeof buf, f) != nullptr ? buf : "";
  pclose(f);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::string id_of(const Result<JoinResult>& r) {
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  return r.is_ok() ? std::string(id_view(r->ticket.id)) : std::string();
}

}  // namespace

std::string ClusterTest::redis_cli(const std::string& args) {
  return redis_cli_at(redis_->port(), args);
}

namespace {

TEST_F(ClusterTest, AbandonedVisitorsExpireTheSameOnEveryNode) {
  auto& a = add_node("a");
  auto& b = add_node("b");
  RoomConfig c = config(5, AdmissionMode::kManual);
  c.heartbeat_timeout_seconds = 10;
  ASSERT_TRUE(a.put_room("r", c).is_ok());
  catch_up();
  std::string t1 = id_of(a.join("r", ""));
  std::string t2 = id_of(b.join("r", ""));
  std::string t3 = id_of(a.join("r", ""));
  catch_up();
  clock_->advance_s(6);
  ASSERT_TRUE(b.status("r", t2).is_ok());     // seen by b
  ASSERT_TRUE(a.heartbeat("r", t3).is_ok());  // seen by a
  clock_->advance_s(5);
  settle();
  EXPECT_EQ(same_everywhere("r", t1).reason, EndReason::kAbandoned);
  EXPECT_EQ(same_everywhere("r", t2).position, 1u);
  EXPECT_EQ(same_everywhere("r", t3).position, 2u);
}

// Three nodes, one room: 3,000 joins at once, spread over the nodes from three threads each.
TEST_F(ClusterTest, ThreeNodesAgreeOnEverySeqAndPositionAndAdmitTheLowestSeqs) {
  add_node("a");
  add_node("b");
  add_node("c");
  ASSERT_TRUE(nodes_[0]->put_room("r", config(0, AdmissionMode::kManual)).is_ok());
  catch_up();
  std::vector<std::string> ids(3000);
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 9; ++t) {
    threads.emplace_back([&, t] {
      auto& node = *nodes_[t % 3];
      for (size_t i = t; i < ids.size(); i += 9) {
        auto r = node.join("r", "");
        if (r.is_ok()) ids[i] = std::string(id_view(r->ticket.id));
      }
    });
  }
  for (auto& th : threads) th.join();
  catch_up();
  std::vector<uint64_t> seqs;
  for (const auto& id : ids) {
    ASSERT_FALSE(id.empty());
    TicketView v = same_everywhere("r", id);
    EXPECT_EQ(v.state, TicketState::kWaiting);
    EXPECT_EQ(v.position, v.seq + 1);  // nobody left: the position is the join order
    seqs.push_back(v.seq);
  }
  std::sort(seqs.begin(), seqs.end());
  for (size_t i = 0; i < seqs.size(); ++i) ASSERT_EQ(seqs[i], i);  // each seq once, no gap

  auto admitted = nodes_[1]->admit("r", 100);
  ASSERT_TRUE(admitted.is_ok());
  EXPECT_EQ(admitted.value(), 100u);
  catch_up();
  for (const auto& id : ids) {
    TicketView v = same_everywhere("r", id);
    EXPECT_EQ(v.state == TicketState::kAllowed, v.seq < 100) << v.seq;
  }
}

TEST_F(ClusterTest, ANodeWithAnotherSecretRefusesToStart) {
  add_node("a");
  cluster::ClusterOptions other = options("b");
  other.secret_check = "secret-two";
  auto b = cluster::open_cluster_engine(other, engine_options());
  ASSERT_FALSE(b.is_ok());
  EXPECT_NE(b.status().message().find("another token secret"), std::string::npos)
      << b.status().message();
}

TEST_F(ClusterTest, ANewNodeLoadsTheSnapshotAndTheRecordsAfterIt) {
  auto& a = add_node("a");
  ASSERT_TRUE(a.put_room("r", config(2)).is_ok());
  std::vector<std::string> ids;
  for (int i = 0; i < 10; ++i) ids.push_back(id_of(a.join("r", "user" + std::to_string(i))));
  settle();  // a holds the lease now
  ASSERT_TRUE(a.leave("r", ids[0]).is_ok());
  // A snapshot needs its interval; a node with a short one stores it at its next report.
  cluster::ClusterOptions fast = options("s");
  fast.snapshot_interval_ms = 0;
  fast.snapshot_records = 1;
  nodes_.clear();
  auto s = cluster::open_cluster_engine(fast, engine_options());
  ASSERT_TRUE(s.is_ok());
  nodes_.push_back(std::move(s.value()));
  auto& snapper = *nodes_.back();
  // The old node is gone: once its lease lapses the new one takes it, and its next report
  // stores a snapshot (and a second one trims the stream to the first).
  for (int i = 0; i < 200 && redis_cli("EXISTS anteroom:{r}:snap") != "1"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(redis_cli("EXISTS anteroom:{r}:snap"), "1");
  ASSERT_TRUE(snapper.join("r", "late").is_ok());
  auto& fresh = add_node("fresh");
  fresh.catch_up();
  // Every ticket as the snapshot's node answers it, the one that left before the snapshot too
  // (the snapshot keeps the ended tickets whose memory the room still holds).
  for (const auto& id : ids) {
    auto want = snapper.peek("r", id);
    auto got = fresh.peek("r", id);
    ASSERT_TRUE(want.is_ok());
    ASSERT_TRUE(got.is_ok()) << got.status().message();
    EXPECT_EQ(got->seq, want->seq);
    EXPECT_EQ(got->state, want->state);
    EXPECT_EQ(got->reason, want->reason);
    EXPECT_EQ(got->position, want->position);
  }
  EXPECT_EQ(fresh.peek("r", ids[0])->state, TicketState::kLeft);
  EXPECT_EQ(fresh.room_info("r")->counters.joined_total, 11u);
}

// Without settle(): the node's own clockwork reports sightings (every second here) and its
// decider sweeps. Every visitor seen is reported, whichever stripe holds the sighting.
TEST_F(ClusterTest, EverySightingIsReportedOnTime) {
  auto& a = add_node("a");
  RoomConfig c = config(0, AdmissionMode::kManual);
  c.heartbeat_timeout_seconds = 4;  // reports every second
  ASSERT_TRUE(a.put_room("r", c).is_ok());
  const std::string unseen = id_of(a.join("r", ""));
  std::vector<std::string> seen;
  for (int i = 0; i < 64; ++i) seen.push_back(id_of(a.join("r", "")));
  clock_->advance_s(3);
  const std::string before = redis_cli("XLEN anteroom:{r}:log");
  for (const auto& id : seen) ASSERT_TRUE(a.status("r", id).is_ok());
  for (int i = 0; i < 100 && redis_cli("XLEN anteroom:{r}:log") == before; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_NE(redis_cli("XLEN anteroom:{r}:log"), before) << "no seen-report within 5 s";
  clock_->advance_ms(2500);  // 5.5 s: the unseen one is due, the seen ones (at 3 s) are not
  for (int i = 0; i < 200 && a.peek("r", unseen)->state == TicketState::kWaiting; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(a.peek("r", unseen)->reason, EndReason::kAbandoned) << "the decider never swept";
  for (const auto& id : seen) EXPECT_EQ(a.peek("r", id)->state, TicketState::kWaiting);
}

// Every record of the room's stream, decoded, applied in order to a fresh replica: the
// room as any node would rebuild it. `after_each` sees the replica after every record.
void replay(const std::string& port_args, const std::string& room,
            const std::function<void(ReplicaEngine&)>& after_each) {
  // The records come back as bulk strings; a hex form keeps binary bytes intact.
  const std::string hexcmd = "redis-cli " + port_args +
                             " EVAL \"local out = {} for _, e in ipairs(redis.call('XRANGE', "
                             "KEYS[1], '-', '+')) do local f = e[2] for i = 1, #f, 2 do if f[i] "
                             "== 'r' then out[#out+1] = string.gsub(f[i+1], '.', function(c) "
                             "return string.format('%02x', string.byte(c)) end) end end end "
                             "return out\" 1 'anteroom:{" +
                             room + "}:log'";
  FILE* f = popen(hexcmd.c_str(), "r");
  ASSERT_NE(f, nullptr);
  EngineOptions o;
  o.id_key = std::array<uint64_t, 2>{11, 22};
  auto replica = make_replica_engine(o);
  std::string line;
  char buf[65536];
  size_t records = 0;
  while (fgets(buf, sizeof buf, f) != nullptr) {
    line = buf;
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    std::string bytes;
    for (size_t i = 0; i + 1 < line.size(); i += 2) {
      bytes.push_back(static_cast<char>(std::stoi(line.substr(i, 2), nullptr, 16)));
    }
    auto rec = cluster::decode_record(bytes);
    ASSERT_TRUE(rec.is_ok()) << rec.status().message() << " in record " << records;
    for (const Op& op : rec->ops) replica->apply(room, rec->at_ms, op);
    replica->publish(room);
    after_each(*replica);
    ++records;
  }
  pclose(f);
  EXPECT_GT(records, 0u);
}

// The decider dies (its node gone without a word, its lease left in Redis): the admitted
// who never show up expire and the next are admitted once another node holds the lease,
// within the lease time + the TTL + 2 s; replaying the stream, capacity is never exceeded.
TEST_F(ClusterTest, WhenTheDeciderDiesAnotherTakesOverAndNeverOverAdmits) {
  clock_.reset();
  auto wall = std::make_shared<WallClock>();
  auto start = [&](const std::string& name) {
    EngineOptions o = engine_options();
    o.clock = wall;
    auto n = cluster::open_cluster_engine(options(name), o);
    EXPECT_TRUE(n.is_ok()) << n.status().message();
    nodes_.push_back(std::move(n.value()));
    return nodes_.back().get();
  };
  auto* a = start("a");
  RoomConfig c = config(2);
  c.allowed_ttl_seconds = 2;
  ASSERT_TRUE(a->put_room("r", c).is_ok());
  // a takes the lease at its first report.
  for (int i = 0; i < 100 && redis_cli("GET anteroom:{r}:owner") != "a"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(redis_cli("GET anteroom:{r}:owner"), "a");
  std::vector<std::string> ids;
  for (int i = 0; i < 6; ++i) ids.push_back(id_of(a->join("r", "")));
  ASSERT_EQ(a->peek("r", ids[1])->state, TicketState::kAllowed);  // 2 admitted at join
  auto* b = start("b");
  // The waiting ones keep polling b; the two admitted never show up.
  const auto killed = std::chrono::steady_clock::now();
  nodes_.erase(nodes_.begin());  // a is gone; its lease stays in Redis until it lapses
  bool next_admitted = false;
  while (std::chrono::steady_clock::now() - killed < std::chrono::seconds(12)) {
    for (size_t i = 2; i < ids.size(); ++i) ASSERT_TRUE(b->status("r", ids[i]).is_ok());
    if (b->peek("r", ids[2])->state == TicketState::kAllowed) {
      next_admitted = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const auto took = std::chrono::steady_clock::now() - killed;
  ASSERT_TRUE(next_admitted) << "the next in line was never admitted";
  EXPECT_LE(took, std::chrono::milliseconds(5000 + 2000 + 2000));
  EXPECT_EQ(b->peek("r", ids[0])->reason, EndReason::kAllowedUnused);
  EXPECT_EQ(redis_cli("GET anteroom:{r}:owner"), "b");
  b->catch_up();
  uint64_t most = 0;
  replay("-p " + std::to_string(redis_->port()), "r", [&](ReplicaEngine& e) {
    auto info = e.room_info("r");
    if (info.is_ok()) most = std::max(most, info->counters.active);
  });
  EXPECT_LE(most, 2u);  // never more than capacity at any record
  EXPECT_EQ(most, 2u);  // and the replay did see the room full
}

class DurableRedisTest : public ClusterTest {
 protected:
  std::vector<std::string> redis_args() override {
    return {"--appendonly", "yes", "--appendfsync", "always"};
  }
};

// Redis stops: writes fail at once with unavailable, reads go on from memory; Redis comes
// back: the node reconnects and catches up, nothing acknowledged lost.
TEST_F(DurableRedisTest, WithoutRedisWritesFailAndReadsGoOnThenItCatchesUp) {
  auto& a = add_node("a");
  auto& b = add_node("b");
  ASSERT_TRUE(a.put_room("r", config(0, AdmissionMode::kManual)).is_ok());
  std::string t1 = id_of(a.join("r", ""));
  catch_up();
  redis_->stop();
  auto refused = a.join("r", "");
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.status().code(), Code::kUnavailable);
  // The join fails as the connection's commands are failed; the node marks itself down as
  // the connection's close reaches it, a moment later on a busy machine.
  for (int i = 0; i < 100 && a.health().is_ok(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_FALSE(a.health().is_ok());
  EXPECT_EQ(b.peek("r", t1)->position, 1u);  // from memory
  ASSERT_TRUE(redis_->start());
  Result<JoinResult> t2 = Status(Code::kUnavailable, "");
  for (int i = 0; i < 100 && !t2.is_ok(); ++i) {  // reconnects within half a second or so
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    t2 = b.join("r", "");
  }
  ASSERT_TRUE(t2.is_ok()) << t2.status().message();
  // Each node reconnects on its own timer: b's join may come before a is back (a busy
  // machine), so a is given as long as b was.
  for (int i = 0; i < 100 && !a.health().is_ok(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(a.health().is_ok());
  catch_up();
  EXPECT_EQ(same_everywhere("r", std::string(id_view(t2->ticket.id))).position, 2u);
  EXPECT_EQ(same_everywhere("r", t1).position, 1u);
}

}  // namespace
}  // namespace anteroom::testing
