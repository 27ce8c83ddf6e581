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

#include "engine/ticket_id.h"
#include "storage/log_records.h"
#include "storage/recovery.h"
#include "tests/storage/storage_fixture.h"

namespace anteroom {
namespace {

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

// Admissions reach the log through the journal, not through the push hints: with room for
// only 16 unread hints (so nearly all of them are dropped), 10,000 admissions all come back.
TEST_P(Persistence, EveryAdmissionIsBackAfterARestartThoughHintsWereDropped) {
  std::vector<std::string> ids;
  {
    PersistenceOptions p{dir_.string(), GetParam()};
    EngineOptions o;
    o.max_queued_events = 16;
    auto e = open_persistent_engine(p, o, nullptr).value();
    ASSERT_TRUE(e->put_room("r", manual(0)).is_ok());
    for (int i = 0; i < 10'000; ++i) ids.emplace_back(id_view(e->join("r", "")->ticket.id));
    ASSERT_EQ(e->admit("r", 10'000).value(), 10'000u);
    EXPECT_GT(e->stats().events_dropped, 9'000u);  // the hints were lost...
  }
  auto e = open();
  ASSERT_NE(e, nullptr);
  size_t allowed = 0;
  for (const auto& id : ids) allowed += e->peek("r", id)->state == TicketState::kAllowed;
  EXPECT_EQ(allowed, 10'000u);  // ...the admissions were not
  EXPECT_EQ(e->room_info("r")->counters.active, 10'000u);
}

// What a join binds (the key's hash, the user) and every room field come back after a
// restart, and survive a snapshot too.
TEST_P(Persistence, KeysUsersAndRoomFieldsSurviveARestart) {
  KeyHash key{};
  key.fill(0xab);
  std::string bound, anonymous;
  RoomConfig c = manual(2);
  c.trust_user = true;
  c.ip_joins_per_minute = 30;
  c.pow_difficulty = RoomConfig::kPowAuto;
  {
    auto e = open();
    ASSERT_TRUE(e->put_room("r", c).is_ok());
    bound = std::string(id_view(e->join("r", JoinRequest{"ann", key})->ticket.id));
    anonymous = std::string(id_view(e->join("r", JoinRequest{"", key})->ticket.id));
  }
  for (int round = 0; round < 2; ++round) {
    auto e = open();
    ASSERT_NE(e, nullptr);
    EXPECT_TRUE(e->room_info("r")->config.trust_user);
    EXPECT_EQ(e->room_info("r")->config.ip_joins_per_minute, 30u);
    EXPECT_EQ(e->join_rules("r")->pow_difficulty, RoomConfig::kPowAuto);
    auto d = e->describe("r", bound);
    ASSERT_TRUE(d.is_ok());
    EXPECT_EQ(d->user, "ann");
    ASSERT_TRUE(d->key_hash);
    EXPECT_EQ(*d->key_hash, key);
    EXPECT_EQ(e->describe("r", anonymous)->key_hash, key);
    if (round == 0) {
      ASSERT_TRUE(e->snapshot().is_ok());  // and then from the snapshot
    }
  }
}

// Lanes: every ticket's lane, its probation and the schedule's last turn come back, so
// every position after a restart (from the log, then from a snapshot, then from the
// snapshot and the log after it) is what it was.
TEST_P(Persistence, LanesProbationAndTheLastTurnSurviveARestart) {
  RoomConfig c = manual(0);
  c.lanes = {3, 2, 1};
  c.gate = R"({"queueing_status_code":202})";
  std::vector<std::string> ids;
  std::map<std::string, TicketView> before;
  std::string probed;
  auto remember = [&](Engine& e) {
    for (const auto& id : ids) before[id] = e.peek("r", id).value();
  };
  {
    auto e = open();
    ASSERT_TRUE(e->put_room("r", c).is_ok());
    for (int i = 0; i < 24; ++i) {
      JoinRequest req;
      req.lane = static_cast<uint8_t>(i % 4);  // 3 is past the last: the last
      ids.emplace_back(id_view(e->join("r", req)->ticket.id));
    }
    JoinRequest req;
    req.probation_s = 20;
    probed = std::string(id_view(e->join("r", req)->ticket.id));
    ASSERT_EQ(e->admit("r", 5).value(), 5u);  // the turns move on from the start
    remember(*e);
  }
  for (int round = 0; round < 3; ++round) {
    auto e = open();
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->room_info("r")->config.lanes, c.lanes);
    EXPECT_EQ(e->room_info("r")->config.gate, c.gate);
    for (const auto& id : ids) {
      auto v = e->peek("r", id);
      ASSERT_TRUE(v.is_ok());
      EXPECT_EQ(v->state, before[id].state) << "round " << round << " " << id;
      EXPECT_EQ(v->position, before[id].position) << "round " << round << " " << id;
      EXPECT_EQ(v->lane, before[id].lane) << id;
    }
    if (round == 0) ASSERT_TRUE(e->snapshot().is_ok());
    if (round == 1) {  // more turns after the snapshot, replayed on top of it
      ASSERT_EQ(e->admit("r", 4).value(), 4u);
      remember(*e);
    }
  }
  auto e = open();
  ASSERT_EQ(e->admit("r", 100).value(), 16u);  // the probation ticket too, last
  auto v = e->peek("r", probed);
  ASSERT_EQ(v->state, TicketState::kAllowed);
  EXPECT_EQ(v->valid_until_ms, v->admitted_at_ms + 20'000);
}

INSTANTIATE_TEST_SUITE_P(AllSyncModes, Persistence,
                         ::testing::Values(LogWriter::Sync::kAlways, LogWriter::Sync::kEverySec,
                                           LogWriter::Sync::kNo),
                         [](const ::testing::TestParamInfo<LogWriter::Sync>& p) {
                           return p.param == LogWriter::Sync::kAlways     ? "always"
                                  : p.param == LogWriter::Sync::kEverySec ? "everysec"
                                                                          : "no";
                         });

}  // namespace
}  // namespace anteroom
