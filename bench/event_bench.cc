// Scheduled events and modes in the engine (docs/policies.md): how long the start's draw
// takes for a large pre-queue, and what a mode or a drawn pre-queue costs a status read,
// side by side with a fifo room of the same size in the same run.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/fair_draw.h"

namespace anteroom {
namespace {

struct EventRoom {
  std::shared_ptr<ManualClock> clock = std::make_shared<ManualClock>();
  std::unique_ptr<Engine> engine;
  std::vector<TicketId> shuffled;
};

// A manual room (only the draw happens at the start, no admission) whose event opened its
// pre-queue, holding `n` joins made during it; the start is 10 s away.
std::unique_ptr<EventRoom> prequeued(int64_t n, bool shuffle) {
  auto r = std::make_unique<EventRoom>();
  EngineOptions o;
  o.shards = 1;
  o.clock = r->clock;
  o.wall_minus_engine_ms = 0;
  r->engine = make_sharded_engine(o);
  RoomConfig c;
  c.capacity = 0;
  c.admission = AdmissionMode::kManual;
  c.heartbeat_timeout_seconds = 86400;
  c.max_waiting = 0;
  c.event.prequeue_at_ms = r->clock->now_ms();
  c.event.start_at_ms = r->clock->now_ms() + 10'000;
  c.event.shuffle = shuffle;
  c.event.nonce = random_seed();
  if (!r->engine->put_room("drop", c).is_ok()) std::abort();
  r->engine->run_all();
  r->shuffled.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) r->shuffled.push_back(r->engine->join("drop", "")->ticket.id);
  std::shuffle(r->shuffled.begin(), r->shuffled.end(), std::mt19937_64(7));
  return r;
}

// The owner pass that starts the event: refs, HMACs, sort, the drawn line (shuffle), or
// just the phase change (no shuffle).
void BM_StartDraw(benchmark::State& state) {
  const bool shuffle = state.range(1) != 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto r = prequeued(state.range(0), shuffle);
    r->clock->advance_s(10);
    state.ResumeTiming();
    r->engine->run_all();
    state.PauseTiming();
    if (shuffle && r->engine->draw("drop")->refs.size() != static_cast<size_t>(state.range(0))) {
      state.SkipWithError("the draw is short");
    }
    r.reset();
    state.ResumeTiming();
  }
  state.SetLabel(shuffle ? "shuffle" : "join order");
  state.counters["tickets"] = static_cast<double>(state.range(0));
}
BENCHMARK(BM_StartDraw)
    ->Args({100'000, 1})
    ->Args({1'000'000, 1})
    ->Args({1'000'000, 0})
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Status of random tickets in a room of 100,000 waiting, by what the room is doing:
// 0 fifo, 1 random, 2 queue_all, 3 pre-queue (positions hidden), 4 drawn pre-queue.
void BM_StatusByPolicy(benchmark::State& state) {
  static const char* kLabels[] = {"fifo", "random", "queue_all", "prequeue", "drawn"};
  const int64_t policy = state.range(0);
  auto r = prequeued(100'000, true);
  if (policy == 4) {
    r->clock->advance_s(10);
    r->engine->run_all();
  } else if (policy != 3) {
    RoomConfig c = r->engine->room_info("drop")->config;
    c.event = RoomEvent{};  // no event: the room's own mode decides
    c.mode = policy == 1 ? RoomMode::kRandom : policy == 2 ? RoomMode::kQueueAll : RoomMode::kFifo;
    if (!r->engine->put_room("drop", c).is_ok()) std::abort();
  }
  size_t i = 0;
  for (auto _ : state) {
    auto v = r->engine->peek("drop", id_view(r->shuffled[i]));
    benchmark::DoNotOptimize(v);
    if (++i == r->shuffled.size()) i = 0;
  }
  state.SetLabel(kLabels[policy]);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_StatusByPolicy)->DenseRange(0, 4)->UseRealTime();

// The cost of a status's `ref` (SHA-256 of the id), which the server adds to every answer.
void BM_TicketRef(benchmark::State& state) {
  const std::string id = "1EexuLyzORk9awUU9GgGIIIchOk";
  for (auto _ : state) benchmark::DoNotOptimize(ticket_ref(id));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TicketRef);

}  // namespace
}  // namespace anteroom
