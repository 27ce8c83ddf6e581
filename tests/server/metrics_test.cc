// /metrics text (server/app/metrics.cc) from engines whose health and stats a test sets:
// storage and Redis readiness, the log's sync latency, the per-room counters.
#include "server/app/metrics.h"

#include <gtest/gtest.h>

#include "engine/clock.h"
#include "engine/cluster_view.h"
#include "engine/fair_draw.h"
#include "engine/forwarding_engine.h"
#include "engine/sharded_engine.h"

namespace anteroom {
namespace {

// A real engine whose health, cluster membership and log syncs the test decides.
class StagedEngine : public ForwardingEngine {
 public:
  StagedEngine() : ForwardingEngine(make_sharded_engine()) {}
  Status health() const override { return health_; }
  const ClusterView* cluster_view() const override { return cluster_ ? &view_ : nullptr; }
  EngineStats stats() const override {
    EngineStats s = inner().stats();
    s.log_syncs = syncs_;
    return s;
  }
  Status health_;
  bool cluster_ = false;
  std::optional<LatencyHistogram> syncs_;
  struct View final : ClusterView {
    ClusterInfo cluster_info() const override { return {}; }
  } view_;
};

bool has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}
bool mentions(const std::string& text, const std::string& name) {
  return text.find(name) != std::string::npos;
}

TEST(MetricsText, StorageUpFollowsTheEngineHealth) {
  Metrics m;
  StagedEngine e;
  std::string text = m.render(e);
  EXPECT_TRUE(has(text, "anteroom_storage_up 1")) << text;
  EXPECT_TRUE(has(text, "# TYPE anteroom_storage_up gauge"));
  EXPECT_FALSE(mentions(text, "anteroom_redis_up"));
  e.health_ = Status(Code::kUnavailable, "the log could not be written or synced");
  text = m.render(e);
  EXPECT_TRUE(has(text, "anteroom_storage_up 0")) << text;
}

TEST(MetricsText, RedisUpInAClusterInsteadOfStorageUp) {
  Metrics m;
  StagedEngine e;
  e.cluster_ = true;
  std::string text = m.render(e);
  EXPECT_TRUE(has(text, "anteroom_redis_up 1")) << text;
  EXPECT_FALSE(mentions(text, "anteroom_storage_up"));
  e.health_ = Status(Code::kUnavailable, "Redis unreachable: connection refused");
  text = m.render(e);
  EXPECT_TRUE(has(text, "anteroom_redis_up 0")) << text;
}

TEST(MetricsText, FsyncHistogramOnlyWhenTheEngineStores) {
  Metrics m;
  StagedEngine e;
  EXPECT_FALSE(mentions(m.render(e), "anteroom_fsync_seconds"));
  e.syncs_ = LatencyHistogram{{0.001, 0.01}, {3, 5}, 6, 1.25};
  const std::string text = m.render(e);
  EXPECT_TRUE(has(text, "# TYPE anteroom_fsync_seconds histogram")) << text;
  EXPECT_TRUE(has(text, "anteroom_fsync_seconds_bucket{le=\"0.001\"} 3")) << text;
  EXPECT_TRUE(has(text, "anteroom_fsync_seconds_bucket{le=\"0.01\"} 5"));
  EXPECT_TRUE(has(text, "anteroom_fsync_seconds_bucket{le=\"+Inf\"} 6"));
  EXPECT_TRUE(has(text, "anteroom_fsync_seconds_sum 1.250000"));
  EXPECT_TRUE(has(text, "anteroom_fsync_seconds_count 6"));
}

TEST(MetricsText, PerRoomCountersAndDrops) {
  Metrics m;
  StagedEngine e;
  RoomConfig c;
  c.capacity = 1;
  ASSERT_TRUE(e.put_room("sale", c).is_ok());
  ASSERT_TRUE(e.join("sale", "a").is_ok());  // admitted at once: a free slot
  ASSERT_TRUE(e.join("sale", "b").is_ok());  // waits
  ASSERT_TRUE(e.join("sale", "c").is_ok());  // waits
  ASSERT_EQ(e.clear("sale").value(), 2u);
  m.slow_consumer_dropped();
  const std::string text = m.render(e);
  EXPECT_TRUE(has(text, "anteroom_room_joins_total{room=\"sale\"} 3")) << text;
  EXPECT_TRUE(has(text, "anteroom_room_admissions_total{room=\"sale\"} 1"));
  EXPECT_TRUE(has(text, "anteroom_room_cleared_total{room=\"sale\"} 2"));
  EXPECT_TRUE(has(text, "anteroom_room_left_total{room=\"sale\"} 0"));
  EXPECT_TRUE(has(text, "anteroom_room_waiting{room=\"sale\"} 0"));
  EXPECT_TRUE(has(text, "anteroom_room_active{room=\"sale\"} 1"));
  EXPECT_TRUE(has(text, "anteroom_room_expiries_total{room=\"sale\",reason=\"abandoned\"} 0"));
  EXPECT_TRUE(has(text, "anteroom_dropped_slow_consumers_total 1"));
  EXPECT_TRUE(has(text, "anteroom_push_hints_dropped_total 0"));
  // Without per-room series no room name appears, the totals stay.
  const std::string bare = m.render(e, false);
  EXPECT_FALSE(mentions(bare, "sale")) << bare;
  EXPECT_TRUE(has(bare, "anteroom_storage_up 1"));
}

// The queue alert's filter: 1 only for rooms that let their line in by themselves.
TEST(MetricsText, AdmittingIsZeroWhilePausedByHandOrInAPrequeue) {
  auto clock = std::make_shared<ManualClock>();
  EngineOptions o;
  o.clock = clock;
  o.wall_minus_engine_ms = 0;  // event times on the test's clock
  auto e = make_sharded_engine(o);
  const int64_t now = clock->now_ms();
  RoomConfig c;
  ASSERT_TRUE(e->put_room("auto", c).is_ok());
  c.mode = RoomMode::kQueueAll;
  ASSERT_TRUE(e->put_room("paused", c).is_ok());
  c = RoomConfig{};
  c.admission = AdmissionMode::kManual;
  ASSERT_TRUE(e->put_room("by_hand", c).is_ok());
  c = RoomConfig{};
  c.event.prequeue_at_ms = now;  // the pre-queue is open, the start an hour away
  c.event.start_at_ms = now + 3'600'000;
  c.event.nonce = random_seed();
  ASSERT_TRUE(e->put_room("prequeue", c).is_ok());
  c.event.prequeue_at_ms = now - 2'000;  // started, and paused while the event runs
  c.event.start_at_ms = now - 1'000;
  c.event.mode = RoomMode::kQueueAll;
  ASSERT_TRUE(e->put_room("event_paused", c).is_ok());
  c.event.mode = RoomMode::kFifo;  // started, admitting
  ASSERT_TRUE(e->put_room("event_running", c).is_ok());
  clock->advance_ms(1);
  e->run_all();  // the rooms move their events to the phase their times say
  Metrics m;
  const std::string text = m.render(*e);
  EXPECT_TRUE(has(text, "# TYPE anteroom_room_admitting gauge")) << text;
  EXPECT_TRUE(has(text, "anteroom_room_admitting{room=\"auto\"} 1")) << text;
  EXPECT_TRUE(has(text, "anteroom_room_admitting{room=\"paused\"} 0"));
  EXPECT_TRUE(has(text, "anteroom_room_admitting{room=\"by_hand\"} 0"));
  EXPECT_TRUE(has(text, "anteroom_room_admitting{room=\"prequeue\"} 0"));
  EXPECT_TRUE(has(text, "anteroom_room_admitting{room=\"event_paused\"} 0"));
  EXPECT_TRUE(has(text, "anteroom_room_admitting{room=\"event_running\"} 1"));
}

}  // namespace
}  // namespace anteroom
