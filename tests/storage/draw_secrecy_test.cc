// The fair draw's seed is unreadable until the start, in the log too: the log holds the
// event's public nonce, and the seed derives from it under the engine's secret (the server
// derives that from the token secret, never from the log). The seed used to sit in the log
// for the whole pre-queue: a reader of the log could join and leave until one of its tickets
// drew a front place (a chosen ticket reached place 5 of 4,001 in 300 rounds).
#include <gtest/gtest.h>

#include "engine/clock.h"
#include "engine/fair_draw.h"
#include "storage/persistent_engine.h"
#include "tests/storage/storage_fixture.h"

namespace anteroom {
namespace {

class DrawSecrecy : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test_dir("anteroom-draw-secrecy-"); }
  void TearDown() override {
    fs::remove_all(dir_);
    fs::remove_all(copy_);
  }
  std::unique_ptr<Engine> open(const fs::path& dir, uint8_t secret) {
    EngineOptions o;
    o.clock = clock_;
    o.shards = 1;
    o.wall_minus_engine_ms = 0;
    o.secret = std::array<uint8_t, 32>{secret};
    auto e = open_persistent_engine({dir.string(), LogWriter::Sync::kNo}, o, nullptr);
    EXPECT_TRUE(e.is_ok()) << e.status().message();
    return e.is_ok() ? std::move(e.value()) : nullptr;
  }
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
  fs::path dir_, copy_;
};

TEST_F(DrawSecrecy, TheLogDoesNotTellTheSeedBeforeTheStart) {
  Digest commitment{};
  {
    auto e = open(dir_, 1);
    RoomConfig c;
    c.capacity = 1;
    c.event.prequeue_at_ms = clock_->now_ms();
    c.event.start_at_ms = clock_->now_ms() + 10'000;
    c.event.shuffle = true;
    c.event.nonce = random_seed();
    ASSERT_TRUE(e->put_room("r", c).is_ok());
    e->run_all();
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(e->join("r", JoinRequest{}).is_ok());
    commitment = e->room_info("r")->config.event.seed_sha256;
  }
  // What a reader of the log has before the start: the log, not the secret.
  copy_ = dir_.string() + "-copy";
  fs::copy(dir_, copy_, fs::copy_options::recursive);
  const std::string log = read_file(dir_ / "anteroom.log");
  {
    auto stolen = open(copy_, 2);
    EXPECT_NE(stolen->room_info("r")->config.event.seed_sha256, commitment)
        << "the log alone determined the seed";
  }
  auto e = open(dir_, 1);
  EXPECT_EQ(e->room_info("r")->config.event.seed_sha256, commitment) << "the same seed again";
  clock_->advance_s(11);
  e->run_all();
  auto draw = e->draw("r");
  ASSERT_TRUE(draw.is_ok()) << draw.status().message();
  EXPECT_EQ(sha256(draw->seed.data(), draw->seed.size()), commitment);
  const std::string seed(reinterpret_cast<const char*>(draw->seed.data()), draw->seed.size());
  EXPECT_EQ(log.find(seed), std::string::npos) << "the seed's bytes were in the log";
}

// A log written before seeds were derived holds the seed itself (fields 17-20): it still
// loads, and its event keeps the commitment it was set with.
TEST_F(DrawSecrecy, AnEventFromAnOlderLogKeepsItsSeed) {
  const Seed old_seed = random_seed();
  {
    auto e = open(dir_, 1);
    RoomConfig c;
    c.event.prequeue_at_ms = clock_->now_ms() + 5'000;
    c.event.start_at_ms = clock_->now_ms() + 10'000;
    c.event.shuffle = true;
    c.event.nonce = old_seed;
    c.event.legacy_seed = true;  // written as the older build wrote it
    ASSERT_TRUE(e->put_room("r", c).is_ok());
  }
  auto e = open(dir_, 1);
  const RoomEvent ev = e->room_info("r")->config.event;
  EXPECT_TRUE(ev.legacy_seed);
  EXPECT_EQ(ev.seed_sha256, sha256(old_seed.data(), old_seed.size()));
}

}  // namespace
}  // namespace anteroom
