// Logs written by someone other than anteroom: every record is checked as the API would
// check it, a bad one stops start-up naming the record, its offset and what is wrong, and
// check-log (the same scan) says the same; a far-away sequence number costs no memory.
#include <gtest/gtest.h>

#include "storage/log_records.h"
#include "storage/persistent_engine.h"
#include "storage/recovery.h"
#include "tests/storage/storage_fixture.h"

namespace anteroom {
namespace {

using namespace logrec;

std::string log_of(const std::vector<Any>& records) {
  std::string out;
  encode(Meta{kVersion, {1, 2}}, &out);
  for (const Any& r : records) encode(r, &out);
  return out;
}

Any put(const std::string& room, const RoomConfig& config) {
  return RoomOp{room, 0, op::PutRoom{config}};
}

Any join(uint64_t seq, const std::string& user) {
  return RoomOp{"r", 0, op::Join{{1, 2, 3}, user, {}, seq}};
}

RoomConfig fine_config() {
  RoomConfig c;
  c.capacity = 0;
  c.admission = AdmissionMode::kManual;
  return c;
}

class HostileLog : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test_dir("anteroom-hostile-"); }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& log) {
    fs::create_directories(dir_);
    std::ofstream(dir_ / "anteroom.log", std::ios::binary) << log;
  }
  Result<std::unique_ptr<Engine>> open() {
    return open_persistent_engine({dir_.string(), LogWriter::Sync::kNo}, EngineOptions{}, nullptr);
  }
  fs::path dir_;
};

TEST_F(HostileLog, EveryBadFieldStopsStartUpNamingTheRecordAndWhy) {
  RoomConfig no_heartbeat = fine_config();
  no_heartbeat.heartbeat_timeout_seconds = 0;
  struct Case {
    const char* what;
    Any record;
    const char* says;
  };
  const std::vector<Case> cases = {
      {"room named ../etc", put("../etc", fine_config()), "room name"},
      {"heartbeat timeout 0", put("r", no_heartbeat), "heartbeat_timeout_seconds"},
      {"user with NUL", join(0, std::string("a\0b", 3)), "user"},
      {"user with a newline", join(0, "a\nb"), "user"},
      {"user of 100 KB", join(0, std::string(100'000, 'x')), "user"},
      {"seq beyond any room", join(uint64_t{1} << 40, ""), "seq"},
      {"expired for leaving", RoomOp{"r", 0, op::Expire{0, EndReason::kLeft}}, "reason"},
      {"a join without its seq", RoomOp{"r", 0, op::Join{{1, 2, 3}, "", {}, {}}}, "seq"},
      {"an admit by count", RoomOp{"r", 0, op::Admit{3, 0, {}}}, "count"},
      {"a cluster's seen", RoomOp{"r", 0, op::Seen{{0}}}, "seen"},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.what);
    const std::string log = log_of({put("r", fine_config()), k.record});
    write(log);
    auto e = open();
    ASSERT_FALSE(e.is_ok());
    const std::string m = e.status().message();
    EXPECT_NE(m.find("record 3"), std::string::npos) << m;
    EXPECT_NE(m.find("offset"), std::string::npos) << m;
    EXPECT_NE(m.find(k.says), std::string::npos) << m;
    // check-log runs the same scan: it does not say "ok", and it names the same record.
    const LogScan scan = scan_log(log, nullptr);
    EXPECT_EQ(scan.end, logfmt::Reader::End::kCorrupt);
    EXPECT_EQ(scan.problem.substr(0, 8), "record 3");
    EXPECT_EQ(scan.records, 2u);
  }
}

// The review's finding: check-log said "ok" for a log of more rooms than a server holds,
// and start-up then refused it naming no record. Now both stop at the room too many.
TEST_F(HostileLog, MoreRoomsThanAServerHoldsIsNamed) {
  std::vector<Any> rooms;
  for (int i = 0; i <= 10'000; ++i) rooms.push_back(put("r" + std::to_string(i), fine_config()));
  const std::string log = log_of(rooms);
  const LogScan scan = scan_log(log, nullptr);
  EXPECT_EQ(scan.end, logfmt::Reader::End::kCorrupt);
  EXPECT_NE(scan.problem.find("record 10002"), std::string::npos) << scan.problem;
  write(log);
  auto e = open();
  ASSERT_FALSE(e.is_ok());
  EXPECT_NE(e.status().message().find("record 10002"), std::string::npos) << e.status().message();
}

// A 55-byte log with one join at seq 20,000,000 took 636 MB to start; now a few segments.
TEST_F(HostileLog, AFarAwaySeqCostsNoMemory) {
  write(log_of({put("r", fine_config()), join(20'000'000, "")}));
  auto e = open();
  ASSERT_TRUE(e.is_ok()) << e.status().message();
  EXPECT_LT(e.value()->stats().bytes_allocated, size_t{1} << 20);
  auto info = e.value()->room_info("r");
  ASSERT_TRUE(info.is_ok());
  EXPECT_EQ(info->counters.waiting, 1u);
  EXPECT_EQ(info->counters.joined_total, 20'000'001u);
}

}  // namespace
}  // namespace anteroom
