// How late expiries happen: a room holds 100,000 waiting visitors who heartbeat every 2 s
// (timeout 5 s); 10,000 of them stop, one each millisecond, so an expiry falls due every
// millisecond on average (slot times are 100 ms ticks, so 100 of them share each tick's
// deadline). A pump like the server's sleeps until Engine::next_due_ms or a wake, runs the
// engine and reads its expiry hints; each expiry's lateness is the time the pump read it
// (CLOCK_MONOTONIC) minus the deadline its last heartbeat set.
//
//   anteroom-expiry-bench [--coarse] [waiting] [dying]
// The engine reads CLOCK_MONOTONIC, as the server's SteadyClock does; --coarse gives it
// CLOCK_MONOTONIC_COARSE (4 ms resolution here) to show why the server does not: its ms lag
// the measuring clock by up to 4 ms, so some expiries even look early. Prints one markdown
// row; exits 1 if (on CLOCK_MONOTONIC) an expiry came before its deadline, or if a visitor
// who kept heartbeating expired.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "engine/engine.h"

namespace {

using anteroom::Clock;

int64_t now_us(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000 + ts.tv_nsec / 1000;
}
int64_t fine_us() { return now_us(CLOCK_MONOTONIC); }

// CLOCK_MONOTONIC or CLOCK_MONOTONIC_COARSE, as ms from kEpoch: the clock
// stands at kEpoch until start(), so the engine made meanwhile has exactly that epoch.
class BenchClock final : public Clock {
 public:
  static constexpr int64_t kEpoch = 1'000'000;
  explicit BenchClock(clockid_t id) : id_(id) {}
  int64_t now_ms() const override {
    const int64_t from = start_us_.load(std::memory_order_relaxed);
    return from < 0 ? kEpoch : kEpoch + (now_us(id_) - from) / 1000;
  }
  void start() { start_us_.store(now_us(id_), std::memory_order_relaxed); }

 private:
  clockid_t id_;
  std::atomic<int64_t> start_us_{-1};
};

struct Wake {
  std::mutex mu;
  std::condition_variable cv;
  bool rung = false;
};

double percentile(std::vector<int64_t>& v, double p) {
  if (v.empty()) return 0;
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(i), v.end());
  return static_cast<double>(v[i]) / 1000.0;
}

}  // namespace

int main(int argc, char** argv) {
  bool coarse = false;
  std::vector<size_t> counts;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--coarse") == 0) {
      coarse = true;
    } else {
      counts.push_back(std::stoul(argv[i]));
    }
  }
  const size_t waiting = counts.size() > 0 ? counts[0] : 100'000;
  const size_t dying = std::min(waiting, counts.size() > 1 ? counts[1] : 10'000);
  auto clock = std::make_shared<BenchClock>(coarse ? CLOCK_MONOTONIC_COARSE : CLOCK_MONOTONIC);
  anteroom::EngineOptions options;
  options.clock = clock;
  options.shards = 1;
  const int64_t epoch = BenchClock::kEpoch;  // the rooms' tick 0 (RoomEnv::epoch_ms)
  auto engine = anteroom::make_sharded_engine(options);
  clock->start();
  const int64_t start_us = fine_us();  // where the engine's ms count from, on CLOCK_MONOTONIC
  anteroom::RoomConfig config;
  config.admission = anteroom::AdmissionMode::kManual;
  config.heartbeat_timeout_seconds = 5;
  config.max_waiting = 0;
  if (auto st = engine->put_room("r", config); !st.is_ok()) {
    std::fprintf(stderr, "put_room: %s\n", st.message().c_str());
    return 2;
  }
  std::vector<std::string> ids;
  for (size_t i = 0; i < waiting; ++i) {
    auto j = engine->join("r", "");
    if (!j.is_ok()) {
      std::fprintf(stderr, "join: %s\n", j.status().message().c_str());
      return 2;
    }
    ids.emplace_back(anteroom::id_view(j->ticket.id));
  }

  Wake wake;
  engine->set_wake_hook([&wake](size_t) {
    std::lock_guard lock(wake.mu);
    wake.rung = true;
    wake.cv.notify_one();
  });
  // Ticket i < dying stops at start + i ms; its deadline, set by that last heartbeat's tick.
  std::vector<std::atomic<int64_t>> deadline_ms(dying);
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < waiting; ++i) index.emplace(ids[i], i);
  std::atomic<bool> done{false};
  std::vector<int64_t> late_us;
  size_t early = 0, kept_expired = 0, ambiguous = 0;
  std::vector<int64_t> pass_us;

  std::thread pump([&] {
    std::vector<anteroom::Event> events;
    while (!done.load()) {
      const int64_t due = engine->next_due_ms();
      const int64_t now = clock->now_ms();  // due is INT64_MIN for a woken room
      const int64_t wait = due == anteroom::kNoDeadline ? 100 : due <= now ? 0 : due - now;
      if (wait > 0) {  // from the start of the clock's current ms, as the server's pump
        const int64_t into_us = (fine_us() - start_us) % 1000;
        std::unique_lock lock(wake.mu);
        wake.cv.wait_for(lock,
                         std::chrono::microseconds(std::min<int64_t>(wait, 100) * 1000 - into_us),
                         [&] { return wake.rung; });
        wake.rung = false;
      }
      const int64_t t0 = fine_us();
      engine->run_all();
      const int64_t read_us = fine_us();
      pass_us.push_back(read_us - t0);
      events.clear();
      engine->poll_events(events, 1 << 20);
      for (const auto& e : events) {
        if (e.kind != anteroom::Event::Kind::kExpired) continue;
        const size_t i = index.at(std::string(anteroom::id_view(e.ticket)));
        if (i >= dying) {
          ++kept_expired;
          continue;
        }
        const int64_t d = deadline_ms[i].load();
        if (d < 0) {
          ++ambiguous;
          continue;
        }
        const int64_t late = read_us - (start_us + (d - epoch) * 1000);
        if (late < 0) ++early;
        late_us.push_back(late);
      }
    }
  });

  const int64_t start = clock->now_ms() + 100;
  std::vector<int64_t> next_beat(waiting, 0);
  size_t stopped = 0, cursor = 0;
  for (;;) {
    const int64_t now = clock->now_ms();
    while (stopped < dying && now >= start + static_cast<int64_t>(stopped)) {
      const int64_t before = clock->now_ms();
      (void)engine->heartbeat("r", ids[stopped]);
      const int64_t after = clock->now_ms();
      const int64_t tick = (before - epoch) / 100;
      deadline_ms[stopped] = tick == (after - epoch) / 100 ? epoch + tick * 100 + 5'000 : -1;
      ++stopped;
    }
    // Everyone not stopped yet heartbeats every 2 s, round robin.
    for (size_t n = 0; n < waiting / 1000 + 1; ++n, cursor = (cursor + 1) % waiting) {
      if (cursor < stopped || next_beat[cursor] > now) continue;
      (void)engine->heartbeat("r", ids[cursor]);
      next_beat[cursor] = now + 2'000;
    }
    if (stopped == dying && now > start + static_cast<int64_t>(dying) + 5'500) break;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  done = true;
  pump.join();
  const size_t expired = late_us.size();
  std::printf("| %zu | %zu | %s | %zu | %.2f | %.2f | %.2f | %.2f | %.2f | %zu |\n", waiting, dying,
              coarse ? "coarse" : "fine", expired, percentile(late_us, 0.5),
              percentile(late_us, 0.99), percentile(late_us, 1.0), percentile(pass_us, 0.5),
              percentile(pass_us, 0.99), pass_us.size());
  if ((early != 0 && !coarse) || kept_expired != 0 || expired + ambiguous != dying) {
    std::fprintf(stderr, "early %zu, kept but expired %zu, expired %zu + ambiguous %zu of %zu\n",
                 early, kept_expired, expired, ambiguous, dying);
    return 1;
  }
  return 0;
}
