// Persistence: the engine rebuilt from its log is the engine that wrote it.
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

#include "storage/log_records.h"
#include "engine/ticket_id.h"

namespace anteroom {
namespace {

namespace fs = std::filesystem;

class Persistence : public ::testing::TestWithParam<LogWriter::Sync> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("anteroom-persist-" + std::to_string(getpid()) + "-" + std::to_string(counter_++));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<Engine> open(std::string* warnings = nullptr, const fs::path& dir = {}) {
    PersistenceOptions p{dir.empty() ? dir_.string() : dir.string(), GetParam()};
    EngineOptions o;
    o.shards = 2;
    std::string w;
    auto e = open_persistent_engine(p, o, &w);
    if (warnings != nullptr) *warnings = w;
    EXPECT_TRUE(e.is_ok()) << e.status().message();
    return e.is_ok() ? std::move(e.value()) : nullptr;
  }
  std::string log_path() const { return (dir_ / "anteroom.log").string(); }
  std::string read_log() const {
    std::ifstream in(log_path(), std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  fs::path dir_;
  static inline int counter_ = 0;
};

RoomConfig manual(uint32_t capacity) {
  RoomConfig c;
  c.capacity = capacity;
  c.admission = AdmissionMode::kManual;
  c.heartbeat_timeout_seconds = 3600;
  return c;
}

TEST_P(Persistence, RestartRestoresRoomsTicketsStatesOrderAndUsers) {
  std::vector<std::string> ids;
  std::map<std::string, TicketView> before;
  {
    auto e = open();
    ASSERT_TRUE(e->put_room("r", manual(3)).is_ok());
    ASSERT_TRUE(e->put_room("gone", manual(1)).is_ok());
    e->join("gone", "");
    ASSERT_TRUE(e->delete_room("gone").is_ok());
    for (int i = 0; i < 10; ++i)
      ids.emplace_back(id_view(e->join("r", i % 2 ? "user_" + std::to_string(i) : "")->ticket.id));
    e->admit("r", 2);
    e->activate("r", ids[0]);
    e->leave("r", ids[5]);
    e->run_all();
    for (const auto& id : ids) before[id] = e->peek("r", id).value();
  }
  auto e = open();
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->room_info("gone").code(), Code::kRoomNotFound);
  EXPECT_EQ(e->room_info("r")->config.capacity, 3u);
  for (const auto& id : ids) {
    auto v = e->peek("r", id);
    ASSERT_TRUE(v.is_ok()) << id;
    EXPECT_EQ(v->state, before[id].state) << id;
    EXPECT_EQ(v->position, before[id].position) << id;
    EXPECT_EQ(v->reason, before[id].reason) << id;
  }
  EXPECT_EQ(id_view(e->join("r", "user_3")->ticket.id), ids[3]);  // same user, same place
  auto late = e->join("r", "");
  EXPECT_EQ(late->ticket.position, 8u);                           // 7 still waiting ahead
  EXPECT_EQ(e->admit("r", 5).value(), 1u);                        // capacity 3, two held
  EXPECT_EQ(e->peek("r", ids[2])->state, TicketState::kAllowed);  // in join order
}

TEST_P(Persistence, ClearAndExpiryAreRestored) {
  std::string a, b;
  {
    auto e = open();
    e->put_room("r", manual(1));
    a = std::string(id_view(e->join("r", "")->ticket.id));
    b = std::string(id_view(e->join("r", "")->ticket.id));
    e->admit("r", 1);
    e->clear("r");
  }
  auto e = open();
  EXPECT_EQ(e->peek("r", a)->state, TicketState::kAllowed);
  EXPECT_EQ(e->peek("r", b)->state, TicketState::kLeft);
  EXPECT_EQ(e->peek("r", b)->reason, EndReason::kCleared);
}

TEST_P(Persistence, TornTailIsCutWithAWarning) {
  std::string id;
  {
    auto e = open();
    e->put_room("r", manual(1));
    id = std::string(id_view(e->join("r", "")->ticket.id));
  }
  const size_t good = read_log().size();
  {
    std::ofstream out(log_path(), std::ios::binary | std::ios::app);
    out.write("\x12\x34\x56", 3);  // an unfinished header
  }
  std::string warnings;
  auto e = open(&warnings);
  ASSERT_NE(e, nullptr);
  EXPECT_NE(warnings.find("offset " + std::to_string(good)), std::string::npos) << warnings;
  EXPECT_EQ(e->peek("r", id)->position, 1u);
  e.reset();
  EXPECT_EQ(read_log().size(), good);  // cut, and nothing new was written after it
}

TEST_P(Persistence, DamageInTheMiddleStopsStartUpNamingFileAndOffset) {
  {
    auto e = open();
    e->put_room("r", manual(1));
    for (int i = 0; i < 20; ++i) e->join("r", "");
  }
  std::string log = read_log();
  log[log.size() / 2] ^= 0x10;
  std::ofstream(log_path(), std::ios::binary | std::ios::trunc) << log;
  PersistenceOptions p{dir_.string(), GetParam()};
  auto e = open_persistent_engine(p, EngineOptions{}, nullptr);
  ASSERT_FALSE(e.is_ok());
  EXPECT_NE(e.status().message().find("anteroom.log"), std::string::npos) << e.status().message();
  EXPECT_NE(e.status().message().find("offset"), std::string::npos);
  EXPECT_NE(e.status().message().find("anteroom check-log --fix"), std::string::npos);
}

TEST_P(Persistence, EmptyLogAndWrongVersion) {
  fs::create_directories(dir_);
  std::ofstream(log_path(), std::ios::binary).close();  // empty file: a fresh start
  auto fresh = open();
  ASSERT_NE(fresh, nullptr);
  EXPECT_TRUE(fresh->rooms().empty());
  fresh.reset();
  std::string other;
  logrec::encode(logrec::Meta{99, {1, 2}}, &other);
  std::ofstream(log_path(), std::ios::binary | std::ios::trunc) << other;
  PersistenceOptions p{dir_.string(), GetParam()};
  auto e = open_persistent_engine(p, EngineOptions{}, nullptr);
  ASSERT_FALSE(e.is_ok());
  EXPECT_NE(e.status().message().find("version 99"), std::string::npos) << e.status().message();
}

INSTANTIATE_TEST_SUITE_P(AllSyncModes, Persistence,
                         ::testing::Values(LogWriter::Sync::kAlways, LogWriter::Sync::kEverySec,
                                           LogWriter::Sync::kNo),
                         [](const ::testing::TestParamInfo<LogWriter::Sync>& p) {
                           return p.param == LogWriter::Sync::kAlways     ? "always"
                                  : p.param == LogWriter::Sync::kEverySec ? "everysec"
                                                                          : "no";
                         });

// Random operations; then the log is cut at every record boundary and inside every record.
// Each cut recovers to exactly what the records before the cut say (replayed into the
// simple Recovery model): same states, positions 1..N in join order, nothing else.
TEST(PersistenceModel, EveryCutRecoversToTheWholeRecordsBeforeIt) {
  fs::path dir = fs::temp_directory_path() / ("anteroom-model-" + std::to_string(getpid()));
  fs::remove_all(dir);
  {
    auto e = open_persistent_engine({dir.string(), LogWriter::Sync::kNo}, EngineOptions{}, nullptr)
                 .value();
    e->put_room("a", manual(3));
    e->put_room("b", manual(0));
    std::mt19937 rng(7);
    std::vector<std::pair<std::string, std::string>> live;
    for (int op = 0; op < 150; ++op) {
      const std::string room = rng() % 2 ? "a" : "b";
      switch (rng() % 6) {
        case 0:
        case 1:
        case 2:
          live.emplace_back(
              room,
              std::string(id_view(
                  e->join(room, rng() % 3 ? "" : "u" + std::to_string(rng() % 10))->ticket.id)));
          break;
        case 3:
          e->admit(room, 1 + rng() % 2);
          break;
        case 4:
          if (!live.empty())
            e->leave(live[rng() % live.size()].first, live[rng() % live.size()].second);
          break;
        case 5:
          if (!live.empty())
            e->activate(live[rng() % live.size()].first, live[rng() % live.size()].second);
          break;
      }
    }
  }
  std::string log;
  {
    std::ifstream in(dir / "anteroom.log", std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    log = s.str();
  }
  std::vector<size_t> cuts;
  logfmt::Reader reader(log);
  logfmt::Record rec;
  while (reader.next(&rec)) {
    cuts.push_back(rec.offset);
    cuts.push_back(rec.offset + logfmt::kHeaderSize + rec.payload.size() / 2);
  }
  cuts.push_back(log.size());
  fs::path cut_dir = fs::temp_directory_path() / ("anteroom-model-cut-" + std::to_string(getpid()));
  IdCodec* codec = nullptr;
  for (size_t cut : cuts) {
    fs::remove_all(cut_dir);
    fs::create_directories(cut_dir);
    std::ofstream(cut_dir / "anteroom.log", std::ios::binary) << log.substr(0, cut);
    // The model: the whole records before the cut.
    logrec::Recovery model;
    logfmt::Reader r(std::string_view(log).substr(0, cut));
    while (r.next(&rec)) model.apply(logrec::decode(rec).value());
    auto e =
        open_persistent_engine({cut_dir.string(), LogWriter::Sync::kNo}, EngineOptions{}, nullptr);
    ASSERT_TRUE(e.is_ok()) << "cut at " << cut << ": " << e.status().message();
    ASSERT_EQ(e.value()->rooms().size(), model.rooms().size()) << "cut at " << cut;
    if (!model.id_key()) continue;
    IdCodec c(*model.id_key());
    codec = &c;
    for (const auto& [name, room] : model.rooms()) {
      uint64_t waiting_ahead = 0;
      for (const auto& [seq, t] : room.tickets) {
        std::string id(id_view(c.encode(seq, t.tag)));
        auto v = e.value()->peek(name, id);
        ASSERT_TRUE(v.is_ok()) << "cut at " << cut << " seq " << seq;
        ASSERT_EQ(v->state, t.state) << "cut at " << cut << " seq " << seq;
        if (t.state == TicketState::kWaiting) {
          ASSERT_EQ(v->position, ++waiting_ahead) << "cut at " << cut;
        }
      }
      ASSERT_EQ(e.value()->room_info(name)->counters.waiting, waiting_ahead);
    }
  }
  EXPECT_NE(codec, nullptr);
  EXPECT_GT(cuts.size(), 200u);
  fs::remove_all(dir);
  fs::remove_all(cut_dir);
}

TEST(PersistenceAlways, JoinsAreOnDiskWhenAcknowledgedWithGroupCommit) {
  fs::path dir = fs::temp_directory_path() / ("anteroom-always-" + std::to_string(getpid()));
  fs::remove_all(dir);
  auto e =
      open_persistent_engine({dir.string(), LogWriter::Sync::kAlways}, EngineOptions{}, nullptr)
          .value();
  e->put_room("r", manual(0));
  std::vector<std::string> acked[4];
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        auto j = e->join("r", "").value();
        ASSERT_NE(j.durable_at, 0u);
        std::promise<Status> stored;
        e->when_durable(j.durable_at, [&](Status st) { stored.set_value(st); });
        ASSERT_TRUE(stored.get_future().get().is_ok());  // the acknowledgement
        acked[t].emplace_back(id_view(j.ticket.id));
      }
    });
  }
  for (auto& t : threads) t.join();
  // Read the file behind the engine's back: every acknowledged join is in it.
  std::ifstream in(dir / "anteroom.log", std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  std::string log = s.str();
  logrec::Recovery model;
  logfmt::Reader r(log);
  logfmt::Record rec;
  while (r.next(&rec)) model.apply(logrec::decode(rec).value());
  IdCodec codec(*model.id_key());
  size_t found = 0;
  for (auto& ids : acked) {
    for (auto& id : ids) {
      uint64_t seq = 0;
      Tag tag{};
      codec.decode(id, &seq, &tag);
      found += model.rooms().at("r").tickets.count(seq);
    }
  }
  EXPECT_EQ(found, 800u);
  e.reset();
  fs::remove_all(dir);
}

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
