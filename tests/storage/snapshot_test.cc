// Snapshots compact the log and keep the live line; a failed write is sticky.
#include "storage/persistent_engine.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include "engine/ticket_id.h"
#include "storage/log_records.h"
#include "storage/recovery.h"
#include "tests/storage/storage_fixture.h"

namespace anteroom {
namespace {

class Snapshots : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("anteroom-snap-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::unique_ptr<Engine> open(LogWriter::Sync sync = LogWriter::Sync::kEverySec,
                               uint64_t auto_after = 0) {
    auto e = open_persistent_engine({dir_.string(), sync, auto_after}, EngineOptions{}, nullptr);
    EXPECT_TRUE(e.is_ok()) << e.status().message();
    return e.is_ok() ? std::move(e.value()) : nullptr;
  }
  uint64_t log_size() const { return fs::file_size(dir_ / "anteroom.log"); }
  fs::path dir_;
};

TEST_F(Snapshots, CompactTheLogAndKeepTheLiveLine) {
  std::vector<std::string> ids;
  std::map<std::string, TicketView> before;
  {
    auto e = open();
    e->put_room("r", manual(5));
    for (int i = 0; i < 3000; ++i)
      ids.emplace_back(id_view(e->join("r", i % 4 ? "" : "u" + std::to_string(i))->ticket.id));
    for (int i = 100; i < 2900; ++i) e->leave("r", ids[static_cast<size_t>(i)]);
    e->admit("r", 5);
    e->activate("r", ids[0]);
    e->run_all();
    auto info = e->snapshot();
    ASSERT_TRUE(info.is_ok()) << info.status().message();
    EXPECT_EQ(info->tickets, 200u);
    EXPECT_LT(info->bytes_after * 5, info->bytes_before);  // 2800 leavers forgotten
    EXPECT_EQ(log_size(), info->bytes_after);
    for (int i = 0; i < 10; ++i)
      ids.emplace_back(id_view(e->join("r", "")->ticket.id));  // after it
    e->leave("r", ids[50]);
    e->run_all();
    for (const auto& id : ids) {
      if (auto v = e->peek("r", id); v.is_ok()) before[id] = v.value();
    }
  }
  auto e = open();
  for (const auto& [id, v] : before) {
    auto now = e->peek("r", id);
    if (!is_live(v.state)) {
      continue;  // an ended ticket may be forgotten by the snapshot
    }
    ASSERT_TRUE(now.is_ok()) << id;
    EXPECT_EQ(now->state, v.state);
    EXPECT_EQ(now->position, v.position);
  }
  EXPECT_EQ(e->peek("r", ids[2000]).code(), Code::kTicketNotFound);  // left before the snapshot
  EXPECT_EQ(e->peek("r", ids[50])->state, TicketState::kLeft);       // left after it
  EXPECT_EQ(id_view(e->join("r", "u2996")->ticket.id), ids[2996]);   // users survive
}

TEST_F(Snapshots, JoinsDuringSnapshotsAreKept) {
  std::vector<std::string> acked;
  {
    auto e = open(LogWriter::Sync::kAlways);
    e->put_room("r", manual(0));
    std::atomic<bool> stop{false};
    std::atomic<size_t> progress{0};  // acked.size(), for the main thread to read
    std::thread joiner([&] {
      while (!stop.load()) {
        auto j = e->join("r", "").value();
        std::promise<Status> stored;
        e->when_durable(j.durable_at, [&](Status st) { stored.set_value(st); });
        if (stored.get_future().get().is_ok()) {
          acked.emplace_back(id_view(j.ticket.id));
          progress.store(acked.size());
        }
      }
    });
    for (int i = 0; i < 5; ++i) {
      while (progress.load() < static_cast<size_t>(100 * (i + 1))) std::this_thread::yield();
      ASSERT_TRUE(e->snapshot().is_ok());
    }
    stop = true;
    joiner.join();
  }
  auto e = open();
  uint64_t position = 0;
  for (const auto& id : acked) {
    auto v = e->peek("r", id);
    ASSERT_TRUE(v.is_ok()) << "lost " << id;
    EXPECT_EQ(v->position, ++position);
  }
}

TEST_F(Snapshots, LeftoverSnapshotFileIsIgnoredAndBadChecksumStopsStartUp) {
  {
    auto e = open();
    e->put_room("r", manual(1));
    e->join("r", "");
    ASSERT_TRUE(e->snapshot().is_ok());
  }
  std::ofstream(dir_ / "anteroom.log.snapshot") << "half a snapshot from a crash";
  EXPECT_NE(open(), nullptr);
  EXPECT_FALSE(fs::exists(dir_ / "anteroom.log.snapshot"));
  // Same records, but the trailing checksum does not match them.
  std::ifstream in(dir_ / "anteroom.log", std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string log = ss.str(), rewritten;
  logfmt::Reader reader(log);
  logfmt::Record rec;
  while (reader.next(&rec)) {
    auto any = logrec::decode(rec).value();
    if (auto* end = std::get_if<logrec::SnapshotEnd>(&any)) end->crc ^= 1;
    logrec::encode(any, &rewritten);
  }
  std::ofstream(dir_ / "anteroom.log", std::ios::binary | std::ios::trunc) << rewritten;
  auto e =
      open_persistent_engine({dir_.string(), LogWriter::Sync::kNo, 0}, EngineOptions{}, nullptr);
  ASSERT_FALSE(e.is_ok());
  EXPECT_NE(e.status().message().find("checksum"), std::string::npos) << e.status().message();
}

TEST_F(Snapshots, TakenByThemselvesPastTheThreshold) {
  auto e = open(LogWriter::Sync::kNo, 4096);
  e->put_room("r", manual(0));
  std::vector<std::string> ids;
  for (int i = 0; i < 400; ++i) ids.emplace_back(id_view(e->join("r", "")->ticket.id));
  for (auto& id : ids) e->leave("r", id);
  // The writer flushes every 2 ms: wait (bounded) until the file is past the threshold;
  // nothing has run the owner yet, so no snapshot can have started.
  uint64_t peak = 0;
  for (int i = 0; i < 1000 && peak <= 8192; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    peak = log_size();
  }
  ASSERT_GT(peak, 8192u);
  bool shrank = false;
  for (int i = 0; i < 1000 && !shrank; ++i) {  // bounded: the background snapshot takes ms
    e->run_all();
    shrank = log_size() < peak / 4;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_TRUE(shrank) << "peak " << peak << ", now " << log_size();
}

TEST(LogWriterFailure, AFailedWriteIsStickyAndRefusesMore) {
  auto w = LogWriter::open("/dev/full", LogWriter::Sync::kAlways);
  ASSERT_TRUE(w.is_ok());
  auto pos = w.value()->append("some record bytes");
  ASSERT_TRUE(pos.is_ok());
  EXPECT_EQ(w.value()->wait_durable(pos.value()).code(), Code::kUnavailable);
  EXPECT_FALSE(w.value()->health().is_ok());
  EXPECT_FALSE(w.value()->append("more").is_ok());
}

}  // namespace
}  // namespace anteroom
