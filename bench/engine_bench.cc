// anteroom-bench: the engine's hot paths, ShardedEngine side by side with MutexEngine (the
// obvious one-mutex implementation of the same interface), in one binary and one run, so
// every figure can be read as a ratio. Arguments are {engine (0 sharded, 1 mutex), tickets
// already waiting in the room}; thread counts are Google Benchmark's ->Threads().
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "storage/persistent_engine.h"
#include "tests/support/mutex_engine.h"

namespace anteroom {
namespace {

std::unique_ptr<Engine> make(int64_t kind) {
  EngineOptions o;
  o.shards = 2;
  return kind == 0 ? make_sharded_engine(o) : make_mutex_engine(o);
}
const char* kind_label(int64_t kind) { return kind == 0 ? "sharded" : "mutex"; }

// A manual room (nothing is admitted behind the benchmark's back) with a long heartbeat
// timeout, holding `n` waiting tickets.
struct Filled {
  std::unique_ptr<Engine> engine;
  std::vector<TicketId> ids;       // in join order
  std::vector<TicketId> shuffled;  // the same ids in random order, read front to back so
                                   // the benchmark's own reads stay sequential
};

Filled fill(int64_t kind, int64_t n) {
  Filled f{make(kind), {}, {}};
  RoomConfig c;
  c.capacity = 0;
  c.admission = AdmissionMode::kManual;
  c.heartbeat_timeout_seconds = 86400;
  c.max_waiting = 0;  // the joins benchmarked grow the line past the default limit
  if (!f.engine->put_room("bench", c).is_ok()) std::abort();
  f.ids.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) f.ids.push_back(f.engine->join("bench", "")->ticket.id);
  f.shuffled = f.ids;
  std::shuffle(f.shuffled.begin(), f.shuffled.end(), std::mt19937_64(7));
  return f;
}

// Rooms shared by the read-mostly benchmarks, built once per (engine, size).
Filled& shared_room(int64_t kind, int64_t n) {
  static std::mutex mu;
  static std::map<std::pair<int64_t, int64_t>, Filled> rooms;
  std::lock_guard lock(mu);
  auto key = std::make_pair(kind, n);
  auto it = rooms.find(key);
  if (it == rooms.end()) it = rooms.emplace(key, fill(kind, n)).first;
  return it->second;
}

// Walks a room's shuffled ids: the engine sees tickets in random order (as from a real
// crowd) while the benchmark reads its own array sequentially. Threads start apart.
struct Cursor {
  Cursor(const Filled& f, const benchmark::State& state)
      : ids(f.shuffled), i(ids.size() / 2 * static_cast<size_t>(state.thread_index())) {}
  std::string_view next() {
    if (++i >= ids.size()) i = 0;
    return id_view(ids[i]);
  }
  const std::vector<TicketId>& ids;
  size_t i;
};

void finish(benchmark::State& state) {
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.SetLabel(kind_label(state.range(0)));
}

// Resident memory per waiting ticket in a room of range(1) tickets (range(2): 1 = every
// ticket has a named user, "user_<n>"). Registered first, so it runs in a process whose
// heap holds nothing freed that a new engine could reuse unseen.
size_t resident_bytes() {
  long pages = 0, resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr || std::fscanf(f, "%ld %ld", &pages, &resident) != 2) std::abort();
  std::fclose(f);
  return static_cast<size_t>(resident) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

void BM_MemoryPerTicket(benchmark::State& state) {
  const int64_t kind = state.range(0), n = state.range(1);
  for (auto _ : state) {
    malloc_trim(0);
    size_t before = resident_bytes();
    auto engine = make(kind);
    RoomConfig c;
    c.admission = AdmissionMode::kManual;
    c.capacity = 0;
    c.max_waiting = 0;
    engine->put_room("mem", c);
    std::string user = "user_";
    for (int64_t i = 0; i < n; ++i) {
      if (state.range(2) != 0) {
        user.resize(5);
        user += std::to_string(i);
        engine->join("mem", user);
      } else {
        engine->join("mem", "");
      }
    }
    double per = static_cast<double>(n);
    state.counters["resident_bytes_per_ticket"] =
        static_cast<double>(resident_bytes() - before) / per;
    if (kind == 0) {  // the sharded engine counts what it allocates for slots, trees, users
      state.counters["allocated_bytes_per_ticket"] =
          static_cast<double>(engine->stats().bytes_allocated) / per;
    }
  }
  state.SetLabel(std::string(kind_label(kind)) + (state.range(2) ? " named users" : " anonymous"));
}
BENCHMARK(BM_MemoryPerTicket)
    ->Args({0, 1'000'000, 0})
    ->Args({0, 1'000'000, 1})
    ->Args({1, 1'000'000, 0})
    ->Args({1, 1'000'000, 1})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

void BM_Join(benchmark::State& state) {
  Filled& f = shared_room(state.range(0), state.range(1));
  for (auto _ : state) benchmark::DoNotOptimize(f.engine->join("bench", ""));
  finish(state);
}

void BM_Status(benchmark::State& state) {
  Filled& f = shared_room(state.range(0), state.range(1));
  Cursor at(f, state);
  for (auto _ : state) benchmark::DoNotOptimize(f.engine->status("bench", at.next()));
  finish(state);
}

// Status without the heartbeat store: what the server's pushes read.
void BM_Peek(benchmark::State& state) {
  Filled& f = shared_room(state.range(0), state.range(1));
  Cursor at(f, state);
  for (auto _ : state) benchmark::DoNotOptimize(f.engine->peek("bench", at.next()));
  finish(state);
}

void BM_Heartbeat(benchmark::State& state) {
  Filled& f = shared_room(state.range(0), state.range(1));
  Cursor at(f, state);
  for (auto _ : state) benchmark::DoNotOptimize(f.engine->heartbeat("bench", at.next()));
  finish(state);
}

// Half joins, half status reads of random tickets: a surge where people keep arriving while
// the ones already in line poll.
void BM_JoinStatusMix(benchmark::State& state) {
  Filled& f = shared_room(state.range(0), state.range(1));
  Cursor at(f, state);
  bool join = state.thread_index() % 2 == 0;
  for (auto _ : state) {
    if (join) {
      benchmark::DoNotOptimize(f.engine->join("bench", ""));
    } else {
      benchmark::DoNotOptimize(f.engine->status("bench", at.next()));
    }
    join = !join;
  }
  finish(state);
}

// Leaves and admissions consume tickets, so each run gets a fresh room holding range(1)
// tickets plus the kConsumed per thread it will use up, and runs exactly kConsumed
// iterations per thread: the room never holds fewer than its nominal size.
constexpr int64_t kConsumed = 100'000;

struct Consumable {
  Filled room;
  std::atomic<size_t> next{0};
};

Consumable& consumable(benchmark::State& state) {
  static Consumable c;
  // Thread 0 refills before the loop; Google Benchmark starts every thread's loop together
  // after that (the loop's start is a barrier), and the others touch `c` only inside it.
  if (state.thread_index() == 0) {
    c.room = fill(state.range(0), state.range(1) + kConsumed * state.threads());
    c.next.store(0);
  }
  return c;
}

// Every 1024 operations the owner catches up and the events are read, as the server does
// continuously; that work is part of what each operation costs.
void catch_up(Engine& engine, std::vector<Event>& sink) {
  engine.run_all();
  sink.clear();
  while (engine.poll_events(sink, 4096) != 0) sink.clear();
}

void BM_Leave(benchmark::State& state) {
  Consumable& c = consumable(state);
  std::vector<Event> sink;
  for (auto _ : state) {
    // Front to back, as a line thins from its head.
    size_t i = c.next.fetch_add(1, std::memory_order_relaxed);
    benchmark::DoNotOptimize(c.room.engine->leave("bench", id_view(c.room.ids[i])));
    if ((i & 1023) == 0) catch_up(*c.room.engine, sink);
  }
  finish(state);
}

void BM_Admit(benchmark::State& state) {
  Consumable& c = consumable(state);
  std::vector<Event> sink;
  for (auto _ : state) {
    benchmark::DoNotOptimize(c.room.engine->admit("bench", 1));
    if ((c.next.fetch_add(1, std::memory_order_relaxed) & 1023) == 0) {
      catch_up(*c.room.engine, sink);
    }
  }
  finish(state);
}

// Latency of single status calls in a room of range(1) tickets, timed one by one.
void BM_StatusLatency(benchmark::State& state) {
  Filled& f = shared_room(state.range(0), state.range(1));
  Cursor at(f, state);
  std::vector<uint32_t> ns;
  ns.reserve(1 << 22);
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(f.engine->status("bench", at.next()));
    auto t1 = std::chrono::steady_clock::now();
    if (ns.size() < ns.capacity()) {
      ns.push_back(static_cast<uint32_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count()));
    }
  }
  std::sort(ns.begin(), ns.end());
  auto pct = [&](double p) {
    return ns.empty() ? 0.0
                      : static_cast<double>(
                            ns[static_cast<size_t>(p * static_cast<double>(ns.size() - 1))]);
  };
  state.counters["p50_ns"] = pct(0.50);
  state.counters["p99_ns"] = pct(0.99);
  state.counters["p999_ns"] = pct(0.999);
  finish(state);
}

// Recovery: a log holding range(0) joins (a tenth of them admitted, a tenth left) is read
// back into a fresh engine. Also reports the log's size per join.
void BM_RecoverLog(benchmark::State& state) {
  const int64_t n = state.range(0);
  const std::string dir = "/tmp/anteroom-bench-recovery-" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  {
    auto e = open_persistent_engine({dir, LogWriter::Sync::kNo}, EngineOptions{}, nullptr).value();
    RoomConfig c;
    c.capacity = 0;
    c.admission = AdmissionMode::kManual;
    e->put_room("bench", c);
    std::vector<TicketId> ids;
    for (int64_t i = 0; i < n; ++i)
      ids.push_back(e->join("bench", i % 2 ? "" : "user_" + std::to_string(i))->ticket.id);
    e->admit("bench", static_cast<uint64_t>(n / 10));
    for (int64_t i = n / 10; i < n / 5; ++i)
      e->leave("bench", id_view(ids[static_cast<size_t>(i)]));
  }
  struct stat st {};
  ::stat((dir + "/anteroom.log").c_str(), &st);
  for (auto _ : state) {
    auto e = open_persistent_engine({dir, LogWriter::Sync::kNo}, EngineOptions{}, nullptr);
    if (!e.is_ok() ||
        e.value()->room_info("bench")->counters.joined_total != static_cast<uint64_t>(n))
      std::abort();
  }
  state.counters["log_bytes_per_join"] = static_cast<double>(st.st_size) / static_cast<double>(n);
  state.counters["log_mb"] = static_cast<double>(st.st_size) / 1e6;
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_RecoverLog)->Arg(1'000'000)->Iterations(1)->Unit(benchmark::kMillisecond);

void sizes(benchmark::internal::Benchmark* b) {
  for (int64_t kind : {0, 1}) {
    for (int64_t n : {1'000, 100'000, 1'000'000}) b->Args({kind, n});
  }
}

BENCHMARK(BM_Join)->Apply(sizes)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK(BM_Status)->Apply(sizes)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK(BM_Peek)->Apply(sizes)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK(BM_Heartbeat)->Apply(sizes)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK(BM_JoinStatusMix)->Apply(sizes)->Threads(2)->UseRealTime();
BENCHMARK(BM_StatusLatency)->Args({0, 1'000'000})->Args({1, 1'000'000})->UseRealTime();

void consuming(benchmark::internal::Benchmark* b) {
  for (int64_t kind : {0, 1}) {
    for (int64_t n : {1'000, 100'000, 1'000'000}) {
      b->Args({kind, n});
    }
  }
}
BENCHMARK(BM_Leave)->Apply(consuming)->Threads(1)->Threads(2)->Iterations(kConsumed)->UseRealTime();
BENCHMARK(BM_Admit)->Apply(consuming)->Threads(1)->Threads(2)->Iterations(kConsumed)->UseRealTime();

}  // namespace
}  // namespace anteroom

BENCHMARK_MAIN();
