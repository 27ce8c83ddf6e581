// The log's sync latency (anteroom_fsync_seconds): SyncLatency's buckets, and the log writer
// timing every fdatasync it makes.
#include "storage/sync_latency.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "storage/log_writer.h"
#include "storage/persistent_engine.h"
#include "tests/storage/storage_fixture.h"

namespace anteroom {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

size_t bucket_of(double bound) {
  for (size_t i = 0; i < SyncLatency::kBounds.size(); ++i)
    if (SyncLatency::kBounds[i] == bound) return i;
  ADD_FAILURE() << "no bound " << bound;
  return 0;
}

TEST(SyncLatency, CountsEachDurationUnderItsBoundsCumulatively) {
  SyncLatency s;
  s.record(microseconds(50));         // <= 0.0001
  s.record(microseconds(100));        // exactly on the bound: counted under it
  s.record(microseconds(101));        // <= 0.00025
  s.record(milliseconds(30));         // <= 0.05
  s.record(std::chrono::seconds(3));  // above every bound: only in the count
  const LatencyHistogram h = s.snapshot();
  ASSERT_EQ(h.bounds_seconds.size(), SyncLatency::kBounds.size());
  ASSERT_EQ(h.at_most.size(), SyncLatency::kBounds.size());
  EXPECT_EQ(h.at_most[bucket_of(0.0001)], 2u);
  EXPECT_EQ(h.at_most[bucket_of(0.00025)], 3u);
  EXPECT_EQ(h.at_most[bucket_of(0.025)], 3u);
  EXPECT_EQ(h.at_most[bucket_of(0.05)], 4u);
  EXPECT_EQ(h.at_most.back(), 4u);  // 2.5 s
  EXPECT_EQ(h.count, 5u);
  EXPECT_NEAR(h.sum_seconds, 3.030251, 1e-9);
  for (size_t i = 1; i < h.at_most.size(); ++i) EXPECT_LE(h.at_most[i - 1], h.at_most[i]);
}

TEST(SyncLatency, StartsEmpty) {
  const LatencyHistogram h = SyncLatency().snapshot();
  EXPECT_EQ(h.count, 0u);
  EXPECT_EQ(h.sum_seconds, 0.0);
  for (uint64_t n : h.at_most) EXPECT_EQ(n, 0u);
}

class LogSyncs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test_dir("anteroom-syncs-");
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// Every fdatasync the writer makes is timed: as many as its own count of syncs.
TEST_F(LogSyncs, AlwaysTimesEverySync) {
  auto log = LogWriter::open((dir_ / "a.log").string(), LogWriter::Sync::kAlways);
  ASSERT_TRUE(log.is_ok());
  for (int i = 0; i < 3; ++i) {
    auto pos = log.value()->append("record");
    ASSERT_TRUE(pos.is_ok());
    ASSERT_TRUE(log.value()->wait_durable(pos.value()).is_ok());
  }
  const LatencyHistogram h = log.value()->sync_latency().snapshot();
  EXPECT_GE(h.count, 3u);
  EXPECT_EQ(h.count, log.value()->stats().syncs);
  EXPECT_GT(h.sum_seconds, 0.0);
}

TEST_F(LogSyncs, NoSyncsNothingTimed) {
  auto log = LogWriter::open((dir_ / "n.log").string(), LogWriter::Sync::kNo);
  ASSERT_TRUE(log.is_ok());
  auto pos = log.value()->append("record");
  ASSERT_TRUE(pos.is_ok());
  ASSERT_TRUE(log.value()->wait_durable(pos.value()).is_ok());
  EXPECT_EQ(log.value()->sync_latency().snapshot().count, 0u);
}

// Under everysec and no, the writer comes every 2 ms while something is queued or unsynced,
// and once all is settled sleeps until the next record wakes it: an idle log costs nothing.
TEST_F(LogSyncs, AnIdleLogSleepsUntilTheNextRecord) {
  auto log = LogWriter::open((dir_ / "i.log").string(), LogWriter::Sync::kNo);
  ASSERT_TRUE(log.is_ok());
  LogWriter& w = *log.value();
  auto pos = w.append("record");
  ASSERT_TRUE(pos.is_ok());
  ASSERT_TRUE(w.wait_durable(pos.value()).is_ok());
  const uint64_t settled = w.stats().passes;
  std::this_thread::sleep_for(milliseconds(40));  // twenty of the 2 ms passes, were it polling
  EXPECT_LE(w.stats().passes, settled + 1);       // at most the pass that found it settled
  pos = w.append("another");                      // wakes it: durable without any timer
  ASSERT_TRUE(pos.is_ok());
  ASSERT_TRUE(w.wait_durable(pos.value()).is_ok());
  EXPECT_EQ(w.stats().writes, 2u);
}

// The persistent engine reports its log's syncs in stats(); an engine that stores nothing
// reports none.
TEST_F(LogSyncs, PersistentEngineReportsThemInItsStats) {
  std::string warnings;
  auto e = open_persistent_engine({dir_.string(), LogWriter::Sync::kAlways}, {}, &warnings);
  ASSERT_TRUE(e.is_ok()) << e.status().message();
  ASSERT_TRUE(e.value()->put_room("r", manual(1)).is_ok());
  const auto stats = e.value()->stats().log_syncs;
  ASSERT_TRUE(stats.has_value());
  EXPECT_GE(stats->count, 1u);  // the new log's first record and the room were synced
  EXPECT_FALSE(make_sharded_engine()->stats().log_syncs.has_value());
}

}  // namespace
}  // namespace anteroom
