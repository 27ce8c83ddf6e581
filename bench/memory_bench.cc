// Memory that follows the live tickets (part of anteroom-bench; registered with the engine
// benchmarks, run by the same main):
//   BM_TicketsPassThrough  10 million tickets pass through one room with at most 10,000 live
//                          at a time; the room's peak allocation against a room that simply
//                          holds 10,000 tickets (the bound: 2x).
//   BM_RoomsWithOneNamedVisitor  10,000 rooms, one named join each: resident bytes per room.
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <string>

#include "engine/engine.h"
#include "engine/epoch.h"

namespace anteroom {
namespace {

size_t rss() {
  long pages = 0, resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr || std::fscanf(f, "%ld %ld", &pages, &resident) != 2) std::abort();
  std::fclose(f);
  return static_cast<size_t>(resident) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

RoomConfig manual_room() {
  RoomConfig c;
  c.capacity = 0;
  c.admission = AdmissionMode::kManual;
  c.heartbeat_timeout_seconds = 86400;
  return c;
}

void BM_TicketsPassThrough(benchmark::State& state) {
  const int64_t total = state.range(0), live = state.range(1);
  size_t reference = 0, peak = 0, rss_growth = 0;
  for (auto _ : state) {
    {
      auto held = make_sharded_engine();
      held->put_room("held", manual_room());
      for (int64_t i = 0; i < live; ++i) held->join("held", "");
      reference = held->stats().bytes_allocated;
    }
    malloc_trim(0);
    const size_t before = rss();
    EngineOptions o;
    o.max_queued_events = 4096;  // nobody reads the push hints here (a server's pump would)
    auto engine = make_sharded_engine(o);
    engine->put_room("pass", manual_room());
    std::deque<TicketId> line;
    for (int64_t i = 0; i < total; ++i) {
      line.push_back(engine->join("pass", "")->ticket.id);
      if (static_cast<int64_t>(line.size()) > live) {  // the oldest leaves
        engine->leave("pass", id_view(line.front()));
        line.pop_front();
      }
      if (i % 65536 == 0) {
        engine->run_all();  // the owner's pass, as the server's pump runs it
        peak = std::max(peak, engine->stats().bytes_allocated);
      }
    }
    engine->run_all();
    for (int i = 0; i < 4; ++i) epoch::reclaim();
    peak = std::max(peak, engine->stats().bytes_allocated);
    rss_growth = rss() - before;
  }
  state.counters["peak_bytes"] = static_cast<double>(peak);
  state.counters["live_only_bytes"] = static_cast<double>(reference);
  state.counters["peak_over_live_only"] =
      static_cast<double>(peak) / static_cast<double>(reference);
  state.counters["rss_growth_bytes"] = static_cast<double>(rss_growth);
}
BENCHMARK(BM_TicketsPassThrough)
    ->Args({10'000'000, 10'000})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

void BM_RoomsWithOneNamedVisitor(benchmark::State& state) {
  const int64_t rooms = state.range(0);
  size_t growth = 0;
  for (auto _ : state) {
    malloc_trim(0);
    const size_t before = rss();
    EngineOptions o;
    o.max_rooms = static_cast<size_t>(rooms);
    auto engine = make_sharded_engine(o);
    for (int64_t i = 0; i < rooms; ++i) {
      const std::string name = "room-" + std::to_string(i);
      engine->put_room(name, manual_room());
      engine->join(name, "user-" + std::to_string(i));
    }
    growth = rss() - before;
  }
  state.counters["resident_bytes_per_room"] =
      static_cast<double>(growth) / static_cast<double>(rooms);
}
BENCHMARK(BM_RoomsWithOneNamedVisitor)->Arg(10'000)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace anteroom
