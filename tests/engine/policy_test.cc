// Room modes, the scheduled event, the fair draw and no-show compensation,
// against the sharded engine, the persistent engine and two cluster nodes, with a manual
// clock. Event times are the manual clock's milliseconds (wall_minus_engine_ms = 0).
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "engine/fair_draw.h"
#include "tests/engine/engine_fixture.h"
#include "tests/support/hex.h"

namespace anteroom::testing {
namespace {

std::vector<EngineKind> policy_kinds() {
  std::vector<EngineKind> out;
  for (const EngineKind& k : rule_kinds()) {
    if (std::string(k.name) != "mutex") out.push_back(k);  // the yardstick has no policies
  }
  return out;
}

// The spec's ref and order, computed here with OpenSSL's one-shot calls, not the engine's.
std::string ref_of(const std::string& id) {
  unsigned char d[32];
  unsigned n = 0;
  EVP_Digest(id.data(), id.size(), d, &n, EVP_sha256(), nullptr);
  return hex_of(d, 8);
}
std::string mac_hex(const Seed& seed, const std::string& ref) {
  unsigned char d[32];
  unsigned n = 0;
  HMAC(EVP_sha256(), seed.data(), static_cast<int>(seed.size()),
       reinterpret_cast<const unsigned char*>(ref.data()), ref.size(), d, &n);
  return hex_of(d, n);
}

class PolicyTest : public EngineTest {
 protected:
  void adjust(EngineOptions& o) override { o.wall_minus_engine_ms = 0; }
  void run() { engine_->run_all(); }
  RoomConfig current(const std::string& room) {
    auto info = engine_->room_info(room);
    EXPECT_TRUE(info.is_ok());
    return info.is_ok() ? info->config : RoomConfig{};
  }
  void set_mode(const std::string& room, RoomMode m) {
    RoomConfig c = current(room);
    c.mode = m;
    ASSERT_TRUE(engine_->put_room(room, c).is_ok());
  }
  // An event from now+prequeue_s to now+start_s (and now+end_s unless 0).
  void set_event(const std::string& room, int prequeue_s, int start_s, int end_s, bool shuffle,
                 std::optional<uint32_t> capacity = std::nullopt) {
    RoomConfig c = current(room);
    const int64_t now = clock_->now_ms();
    c.event = RoomEvent{};
    c.event.prequeue_at_ms = now + prequeue_s * 1000;
    c.event.start_at_ms = now + start_s * 1000;
    c.event.end_at_ms = end_s == 0 ? 0 : now + end_s * 1000;
    c.event.shuffle = shuffle;
    c.event.capacity = capacity;
    c.event.nonce = random_seed();
    ASSERT_TRUE(engine_->put_room(room, c).is_ok());
  }
  std::vector<std::string> join_n(const std::string& room, int n) {
    std::vector<std::string> ids;
    for (int i = 0; i < n; ++i) ids.push_back(join(room));
    return ids;
  }
};

TEST_P(PolicyTest, RejectRefusesJoinsAndKeepsTickets) {
  make_room("r", config(1));
  std::string a = join("r"), b = join("r");
  set_mode("r", RoomMode::kReject);
  auto refused = engine_->join("r", "");
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.code(), Code::kRoomClosed);
  EXPECT_EQ(state("r", a), TicketState::kAllowed);
  EXPECT_EQ(position("r", b), 1u);
  set_mode("r", RoomMode::kFifo);
  EXPECT_TRUE(engine_->join("r", "").is_ok());
}

TEST_P(PolicyTest, QueueAllHoldsEveryoneAndFifoResumesInOrder) {
  make_room("r", config(2));
  set_mode("r", RoomMode::kQueueAll);
  auto ids = join_n("r", 4);
  run();
  EXPECT_EQ(engine_->admit("r", 10).value(), 0u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(position("r", ids[i]), static_cast<uint64_t>(i + 1));
  set_mode("r", RoomMode::kFifo);
  run();
  EXPECT_EQ(state("r", ids[0]), TicketState::kAllowed);
  EXPECT_EQ(state("r", ids[1]), TicketState::kAllowed);
  EXPECT_EQ(position("r", ids[2]), 1u);
  EXPECT_EQ(position("r", ids[3]), 2u);
}

TEST_P(PolicyTest, PassthroughAdmitsEveryoneBeyondCapacity) {
  make_room("r", config(1));
  auto ids = join_n("r", 3);  // one admitted, two waiting
  EXPECT_EQ(position("r", ids[2]), 2u);
  set_mode("r", RoomMode::kPassthrough);
  run();
  for (const auto& id : ids) EXPECT_EQ(state("r", id), TicketState::kAllowed);
  std::string late = join("r");
  run();
  EXPECT_EQ(state("r", late), TicketState::kAllowed);
  EXPECT_EQ(engine_->room_info("r")->counters.active, 4u);
}

TEST_P(PolicyTest, RandomAdmitsFromAnywhereAndHidesPositions) {
  make_room("r", config(50));
  set_mode("r", RoomMode::kQueueAll);
  auto ids = join_n("r", 100);
  set_mode("r", RoomMode::kRandom);
  run();
  std::set<int> admitted;
  for (int i = 0; i < 100; ++i) {
    TicketView v = peek("r", ids[i]);
    if (v.state == TicketState::kAllowed) {
      admitted.insert(i);
    } else {
      EXPECT_TRUE(v.position_hidden) << i;
    }
  }
  ASSERT_EQ(admitted.size(), 50u);
  // First come would be exactly 0..49; a uniform pick is that with odds 1 in 10^29.
  EXPECT_GT(*admitted.rbegin(), 49);
  EXPECT_LT(*admitted.begin(), 50);
  // Back to fifo: the rest wait in join order, as they were.
  set_mode("r", RoomMode::kFifo);
  uint64_t expect = 1;
  for (int i = 0; i < 100; ++i) {
    if (admitted.count(i) == 0) {
      EXPECT_EQ(position("r", ids[i]), expect++) << i;
    }
  }
}

TEST_P(PolicyTest, EventTimelineWithoutShuffle) {
  make_room("r", config(1));
  set_event("r", 10, 20, 30, false, 3);
  std::string a = join("r"), b = join("r");  // before the pre-queue: the room's own settings
  run();
  EXPECT_EQ(state("r", a), TicketState::kAllowed);
  EXPECT_EQ(position("r", b), 1u);
  clock_->advance_s(10);
  run();
  auto pre = join_n("r", 3);
  for (const auto& id : pre) {
    TicketView v = peek("r", id);
    EXPECT_TRUE(v.position_hidden);
    EXPECT_EQ(v.opens_at_ms, current("r").event.start_at_ms);
  }
  ASSERT_TRUE(engine_->leave("r", a).is_ok());  // a slot frees, but the pre-queue admits no one
  run();
  EXPECT_EQ(state("r", b), TicketState::kWaiting);
  clock_->advance_s(10);
  run();
  // Started: capacity 3 (the event's): b, then the pre-queue in join order.
  EXPECT_EQ(state("r", b), TicketState::kAllowed);
  EXPECT_EQ(state("r", pre[0]), TicketState::kAllowed);
  EXPECT_EQ(state("r", pre[1]), TicketState::kAllowed);
  EXPECT_EQ(position("r", pre[2]), 1u);
  std::string late = join("r");
  EXPECT_EQ(position("r", late), 2u);
  EXPECT_EQ(engine_->room_info("r")->counters.active, 3u);
  clock_->advance_s(10);
  run();
  EXPECT_EQ(current("r").event.phase, RoomEvent::Phase::kEnded);
  TicketView v = peek("r", late);
  EXPECT_EQ(v.capacity, 1u);  // the room's own again
}

TEST_P(PolicyTest, ShuffledPreQueueIsOrderedByTheDrawAndAheadOfLaterJoiners) {
  make_room("r", config(1));
  set_event("r", 0, 10, 0, true);
  run();
  auto pre = join_n("r", 40);
  EXPECT_EQ(engine_->draw("r").code(), Code::kWrongState);  // no draw before the start
  clock_->advance_s(10);
  run();
  const RoomConfig c = current("r");
  ASSERT_EQ(c.event.phase, RoomEvent::Phase::kStarted);
  auto draw = engine_->draw("r");
  ASSERT_TRUE(draw.is_ok());
  // The seed shown now is the one committed to when the event was set, and the order follows
  // from it: refs from the ids, ordered by HMAC-SHA256(seed, ref).
  EXPECT_EQ(sha256(draw->seed.data(), draw->seed.size()), c.event.seed_sha256);
  EXPECT_NE(draw->seed, c.event.nonce) << "the seed is not what the records hold";
  std::vector<std::pair<std::string, std::string>> by_mac;  // mac, ref
  for (const auto& id : pre) by_mac.emplace_back(mac_hex(draw->seed, ref_of(id)), ref_of(id));
  std::sort(by_mac.begin(), by_mac.end());
  ASSERT_EQ(draw->refs.size(), pre.size());
  for (size_t k = 0; k < pre.size(); ++k) EXPECT_EQ(ref_hex(draw->refs[k]), by_mac[k].second) << k;
  // The first drawn is admitted (capacity 1); every other position is its place in the draw.
  std::string late = join("r");
  for (const auto& id : pre) {
    const std::string ref = ref_of(id);
    size_t k = 0;
    while (by_mac[k].second != ref) ++k;
    TicketView v = peek("r", id);
    if (k == 0) {
      EXPECT_EQ(v.state, TicketState::kAllowed);
    } else {
      EXPECT_FALSE(v.position_hidden);
      EXPECT_EQ(v.position, k) << ref;
    }
  }
  EXPECT_EQ(position("r", late), pre.size());  // behind all 39 still waiting
  // Admission goes on in drawn order.
  std::string first;
  for (const auto& id : pre) {
    if (ref_of(id) == by_mac[0].second) first = id;
  }
  ASSERT_TRUE(engine_->leave("r", first).is_ok());
  run();
  for (const auto& id : pre) {
    if (ref_of(id) == by_mac[1].second) {
      EXPECT_EQ(state("r", id), TicketState::kAllowed);
    }
    if (ref_of(id) == by_mac[2].second) {
      EXPECT_EQ(position("r", id), 1u);
    }
  }
}

// Puts of the settings, the event and the page, each made from the same stale read, all
// stand: each sets only its part (RoomConfig::parts), merged where it is applied.
TEST_P(PolicyTest, PartialPutsDoNotUndoEachOther) {
  make_room("r", config(1));
  const RoomConfig stale = current("r");
  RoomConfig page = stale, settings = stale, event = stale;
  page.page = R"({"title":"Sale"})";
  page.parts = RoomConfig::kPage;
  settings.capacity = 5;
  settings.mode = RoomMode::kQueueAll;
  settings.parts = RoomConfig::kSettings;
  event.event.prequeue_at_ms = clock_->now_ms() + 10'000;
  event.event.start_at_ms = clock_->now_ms() + 20'000;
  event.event.nonce = random_seed();
  event.parts = RoomConfig::kEvent;
  ASSERT_TRUE(engine_->put_room("r", page).is_ok());
  ASSERT_TRUE(engine_->put_room("r", settings).is_ok());
  ASSERT_TRUE(engine_->put_room("r", event).is_ok());
  const RoomConfig now = current("r");
  EXPECT_EQ(now.page, page.page);
  EXPECT_EQ(now.capacity, 5u);
  EXPECT_EQ(now.mode, RoomMode::kQueueAll);
  EXPECT_EQ(now.event.nonce, event.event.nonce);
  EXPECT_EQ(now.parts, RoomConfig::kAllParts);
  // A new room from a partial put: the defaults and that part.
  RoomConfig fresh;
  fresh.page = R"({"title":"New"})";
  fresh.parts = RoomConfig::kPage;
  ASSERT_TRUE(engine_->put_room("n", fresh).is_ok());
  EXPECT_EQ(current("n").page, fresh.page);
  EXPECT_EQ(current("n").capacity, RoomConfig{}.capacity);
}

TEST_P(PolicyTest, NoShowsAreGivenBackToTheRate) {
  RoomConfig c = config(0);
  c.admit_per_second = 1;
  c.allowed_ttl_seconds = 1;
  make_room("r", c);
  auto ids = join_n("r", 6);
  run();
  EXPECT_EQ(engine_->room_info("r")->counters.admitted_total, 1u);
  clock_->advance_s(1);
  run();  // the first expired unused: its admission is owed on top of this second's
  run();
  EXPECT_EQ(engine_->room_info("r")->counters.expired_allowed_unused, 1u);
  EXPECT_EQ(engine_->room_info("r")->counters.admitted_total, 3u);
}

INSTANTIATE_TEST_SUITE_P(Kinds, PolicyTest, ::testing::ValuesIn(policy_kinds()), kind_name);

}  // namespace
}  // namespace anteroom::testing

namespace anteroom::testing {
namespace {

// A restart between the commitment and the start keeps the seed; a restart after the draw
// keeps the drawn order and every position.
TEST(EventRestart, TheSeedAndTheDrawSurviveRestarts) {
  std::string dir = (std::filesystem::temp_directory_path() / "anteroom-event-XXXXXX").string();
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  auto clock = std::make_shared<ManualClock>();
  auto open = [&] {
    EngineOptions o;
    o.clock = clock;
    o.shards = 1;
    o.wall_minus_engine_ms = 0;
    PersistenceOptions p;
    p.dir = dir;
    p.sync = LogWriter::Sync::kNo;
    auto e = open_persistent_engine(p, o, nullptr);
    EXPECT_TRUE(e.is_ok()) << e.status().message();
    return std::move(e.value());
  };
  Seed seed{};
  Digest commitment{};
  std::vector<std::string> ids;
  {
    auto e = open();
    RoomConfig c;
    c.capacity = 1;
    c.event.prequeue_at_ms = clock->now_ms();
    c.event.start_at_ms = clock->now_ms() + 10'000;
    c.event.shuffle = true;
    c.event.nonce = seed = random_seed();
    ASSERT_TRUE(e->put_room("r", c).is_ok());
    commitment = e->room_info("r")->config.event.seed_sha256;
    RoomConfig b;  // a mode and a branding persist like any configuration
    b.mode = RoomMode::kQueueAll;
    b.page = R"({"title":"Sale","colors":{"accent":"#ff0066"}})";
    ASSERT_TRUE(e->put_room("b", b).is_ok());
    e->run_all();
    for (int i = 0; i < 20; ++i) ids.emplace_back(id_view(e->join("r", "").value().ticket.id));
  }
  {
    auto e = open();  // committed, not started
    EXPECT_EQ(e->room_info("r")->config.event.nonce, seed);
    EXPECT_EQ(e->room_info("r")->config.event.seed_sha256, commitment) << "the same commitment";
    EXPECT_EQ(e->room_info("b")->config.mode, RoomMode::kQueueAll);
    EXPECT_EQ(e->room_info("b")->config.page, R"({"title":"Sale","colors":{"accent":"#ff0066"}})");
    EXPECT_TRUE(e->peek("r", ids[3])->position_hidden);
  }
  std::vector<uint64_t> positions;
  std::vector<uint64_t> order;
  {
    auto e = open();
    clock->advance_s(10);
    e->run_all();
    order = e->draw("r")->refs;
    for (const auto& id : ids) positions.push_back(e->peek("r", id)->position);
  }
  for (int round = 0; round < 4; ++round) {  // from the log, then from a snapshot, twice
    auto e = open();
    ASSERT_TRUE(e->draw("r").is_ok());
    EXPECT_EQ(e->draw("r")->refs, order);
    EXPECT_EQ(sha256(e->draw("r")->seed.data(), 32), commitment) << "the committed seed";
    for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(e->peek("r", ids[i])->position, positions[i]);
    if (round == 0 || round == 2) {
      ASSERT_TRUE(e->snapshot().is_ok());
    }
    if (round == 1) {  // the event is deleted: the places the draw gave stand
      RoomConfig c = e->room_info("r")->config;
      c.event = RoomEvent{};
      ASSERT_TRUE(e->put_room("r", c).is_ok());
    }
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace anteroom::testing

namespace anteroom::testing {
namespace {

// docs/fairness.md's worked example, number for number.
TEST(FairDraw, TheWorkedExampleOfTheDocs) {
  Seed seed{};
  for (int i = 0; i < 32; ++i) seed[i] = static_cast<uint8_t>(i + 1);
  const Digest commit = sha256(seed.data(), seed.size());
  EXPECT_EQ(to_hex(commit.data(), commit.size()),
            "ae216c2ef5247a3782c135efa279a3e4cdc61094270f5d2be58c6204b7a612c9");
  const std::vector<std::string> ids = {
      "1EexuLyzORk9awUU9GgGIIIchOk", "RKsyb3vN1DcQ7aEpyk1q6rEfEdo", "q0e3OeRJ5sRGCKvB9bEqq8e5Ydc"};
  std::vector<uint64_t> refs;
  for (const auto& id : ids) refs.push_back(ticket_ref(id));
  EXPECT_EQ(ref_hex(refs[0]), "1fd431db6127df13");
  EXPECT_EQ(ref_hex(refs[1]), "bd113838e0b4ef74");
  EXPECT_EQ(ref_hex(refs[2]), "3e3f8d483e1a6bd8");
  // HMACs 35468a..., c2aff6..., c2d41b...: the order is the ids' own.
  EXPECT_EQ(draw_order(seed, refs), (std::vector<uint32_t>{0, 1, 2}));
  std::vector<uint64_t> reversed(refs.rbegin(), refs.rend());
  EXPECT_EQ(draw_order(seed, reversed), (std::vector<uint32_t>{2, 1, 0}));
}

}  // namespace
}  // namespace anteroom::testing
