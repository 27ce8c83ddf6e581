// Both cores joining, leaving and polling while a third thread runs admission; afterwards
// the model's invariants (docs/engine.md) must hold exactly.
#include <algorithm>
#include <atomic>
#include <map>
#include <random>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "tests/engine/engine_fixture.h"

namespace anteroom::testing {
namespace {

class StressTest : public EngineTest {};

struct JoinRecord {
  std::string id;
  std::string user;
  uint64_t start = 0;  // global step counter before the call
  uint64_t end = 0;    // and after it returned
  uint64_t seq = 0;
  bool created = false;
};

constexpr int kThreads = 2;
// The yardstick keeps its holes in a sorted vector (O(n) per leave): fewer operations for it.
int ops_per_thread(const EngineKind& k) {
  return std::string(k.name) == "mutex" ? 50'000 : 200'000;
}
constexpr int kUsers = 3000;
constexpr uint32_t kCapacity = 500;

TEST_P(StressTest, TwoThreadsJoinLeaveAndPollWhileAdmissionRuns) {
  RoomConfig c = config(kCapacity);
  c.heartbeat_timeout_seconds = 86400;
  make_room("s", c);
  std::atomic<uint64_t> step{0};
  std::atomic<bool> done{false};
  std::atomic<uint64_t> grew{0};  // positions seen to grow
  std::vector<JoinRecord> records[kThreads];
  // Tickets a worker found gone: an ended ticket is forgotten once its segment's tickets
  // all ended and the line moved past them, so each must have an end in the journal.
  std::vector<uint64_t> gone[kThreads];
  std::vector<Event> events_seen;

  std::thread owner([&] {
    while (!done.load(std::memory_order_acquire)) {
      engine_->run_all();
      engine_->poll_events(events_seen, 1 << 20);
      clock_->advance_ms(5);
    }
  });
  auto worker = [&](int t) {
    std::mt19937_64 rng(1234 + t);
    std::vector<size_t> mine;  // indexes into records[t] of tickets this thread created
    std::unordered_map<size_t, uint64_t> last_pos;
    const int ops = ops_per_thread(GetParam());
    for (int op = 0; op < ops; ++op) {
      uint64_t dice = rng() % 100;
      if (dice < 45 || mine.empty()) {
        JoinRecord r;
        if (dice % 5 == 0) r.user = "user_" + std::to_string(rng() % kUsers);
        r.start = step.fetch_add(1);
        auto j = engine_->join("s", r.user);
        r.end = step.fetch_add(1);
        ASSERT_TRUE(j.is_ok()) << j.status().message();
        r.id = std::string(id_view(j->ticket.id));
        r.seq = j->ticket.seq;
        r.created = j->created;
        if (r.created) mine.push_back(records[t].size());
        records[t].push_back(std::move(r));
      } else if (dice < 85) {
        size_t k = mine[rng() % mine.size()];
        auto v = engine_->status("s", records[t][k].id);
        if (v.code() == Code::kTicketNotFound) {
          gone[t].push_back(records[t][k].seq);
          continue;
        }
        ASSERT_TRUE(v.is_ok());
        if (v->state == TicketState::kWaiting) {
          auto it = last_pos.find(k);
          if (it != last_pos.end() && v->position > it->second) grew.fetch_add(1);
          last_pos[k] = v->position;
        }
      } else {
        size_t i = rng() % mine.size();
        auto left = engine_->leave("s", records[t][mine[i]].id);
        if (left.code() == Code::kTicketNotFound) {
          gone[t].push_back(records[t][mine[i]].seq);
        } else {
          ASSERT_TRUE(left.is_ok());
        }
        mine[i] = mine.back();
        mine.pop_back();
      }
    }
  };
  std::thread w0(worker, 0), w1(worker, 1);
  w0.join();
  w1.join();
  done.store(true, std::memory_order_release);
  owner.join();
  const size_t seen_while_running = events_seen.size();
  engine_->run_all();
  engine_->poll_events(events_seen, 1 << 20);

  EXPECT_EQ(grew.load(), 0u) << "a position grew";

  std::unordered_map<std::string, const JoinRecord*> created;
  for (auto& rs : records) {
    for (auto& r : rs) {
      if (r.created) {
        ASSERT_TRUE(created.emplace(r.id, &r).second) << "duplicate id " << r.id;
      }
    }
  }
  // Same user, same place: a join that found a ticket returned one made for that user.
  for (auto& rs : records) {
    for (auto& r : rs) {
      if (r.created) continue;
      auto it = created.find(r.id);
      ASSERT_NE(it, created.end());
      EXPECT_EQ(it->second->user, r.user);
    }
  }

  // Admission order is join order: no admitted ticket whose join returned before another
  // admitted ticket's join began is admitted after it. The journal tells admissions in the
  // order they happened (push hints may come in any order).
  std::unordered_map<uint64_t, const JoinRecord*> by_seq;
  for (const auto& [id, r] : created) by_seq.emplace(r->seq, r);
  uint64_t max_start = 0;
  size_t admitted = 0;
  for (uint64_t seq : journal_.seqs_of(Change::Kind::kAdmit, "s")) {
    const JoinRecord* r = by_seq.at(seq);
    EXPECT_GT(r->end, max_start) << "inversion at admission " << admitted;
    max_start = std::max(max_start, r->start);
    ++admitted;
  }
  size_t admitted_while_running = 0;
  for (size_t i = 0; i < seen_while_running; ++i)
    admitted_while_running += events_seen[i].kind == Event::Kind::kAdmitted;
  // Admission really ran alongside the workers, and filled the room at least once.
  EXPECT_GT(admitted_while_running, 0u);
  EXPECT_GE(admitted, kCapacity);

  // Nothing lost; the waiting are exactly 1..N in join order; counters match the tickets.
  std::vector<std::pair<uint64_t, const JoinRecord*>> waiting;
  uint64_t holding = 0;
  std::map<std::string, int> live_per_user;
  std::unordered_set<uint64_t> ended;
  for (const RecordedChange& change : journal_.changes()) {
    if (change.kind == Change::Kind::kLeave || change.kind == Change::Kind::kExpire) {
      ended.insert(change.seq);
    }
    for (uint64_t seq : change.seqs) ended.insert(seq);
  }
  for (auto& g : gone)
    for (uint64_t seq : g) EXPECT_TRUE(ended.count(seq)) << "live ticket " << seq << " gone";
  for (const auto& [id, r] : created) {
    auto v = engine_->peek("s", id);
    if (!v.is_ok() && ended.count(r->seq)) continue;  // ended, then forgotten
    ASSERT_TRUE(v.is_ok()) << "lost ticket " << id;
    if (v->state == TicketState::kWaiting) waiting.emplace_back(v->position, r);
    if (holds_slot(v->state)) ++holding;
    if (is_live(v->state) && !r->user.empty()) ++live_per_user[r->user];
  }
  std::sort(waiting.begin(), waiting.end());
  for (size_t i = 0; i < waiting.size(); ++i) {
    ASSERT_EQ(waiting[i].first, i + 1);
    if (i > 0) {
      EXPECT_LT(waiting[i - 1].second->start, waiting[i].second->end);
    }
  }
  for (const auto& [user, n] : live_per_user) EXPECT_EQ(n, 1) << user;
  RoomCounters counters = engine_->room_info("s")->counters;
  EXPECT_EQ(counters.waiting, waiting.size());
  EXPECT_EQ(counters.active, holding);
  EXPECT_LE(holding, kCapacity);
  EXPECT_EQ(counters.joined_total, created.size());
}

INSTANTIATE_TEST_SUITE_P(Every, StressTest, ::testing::ValuesIn(engine_kinds()), kind_name);

}  // namespace
}  // namespace anteroom::testing
