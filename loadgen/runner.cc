#include "loadgen/runner.h"

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "loadgen/admin.h"
#include "loadgen/progress_line.h"

namespace anteroom::loadgen {

namespace {

int threads_for(const Config& cfg) {
  if (cfg.threads > 0) return cfg.threads;
  return std::max(1u, std::thread::hardware_concurrency());
}

int processes_for(const Config& cfg, uint64_t sessions) {
  int processes =
      cfg.processes > 0
          ? cfg.processes
          : static_cast<int>((sessions + kSessionsPerProcess - 1) / kSessionsPerProcess);
  return std::clamp(processes, 1, kMaxProcesses);
}

int sources_for(const Config& cfg, uint64_t sessions) {
  int sources = cfg.sources > 0
                    ? cfg.sources
                    : static_cast<int>((sessions + kSessionsPerSource - 1) / kSessionsPerSource);
  return std::max(sources, 1);
}

// 127.0.0.11 on (127.0.0.255, 127.0.1.0, ... past 245), one per source; none for one source
// (the kernel chooses).
std::vector<net::ip::address> source_addresses(int sources) {
  std::vector<net::ip::address> addresses;
  if (sources > 1) {
    for (int i = 0; i < sources; ++i) {
      addresses.emplace_back(net::ip::address_v4(0x7f00000bU + static_cast<uint32_t>(i)));
    }
  }
  return addresses;
}

// One thread of a worker process: its io_context, its visitors and what they record.
struct PerThread {
  std::unique_ptr<net::io_context> io;
  std::unique_ptr<Watchdog> watchdog;
  std::unique_ptr<Recorder> rec;
  std::unique_ptr<ThreadCtx> ctx;
  std::unique_ptr<net::steady_timer> stopper;
  std::vector<VisitorRecord> records;
  std::vector<uint64_t> indices;
};

// Stops the thread's io_context, looking every 50 ms, once the coordinator says stop, every
// coroutine on the thread has finished, or `hard_end` has passed.
void stop_when_done(PerThread& p, Control& ctl, int64_t hard_end) {
  p.stopper = std::make_unique<net::steady_timer>(*p.io);
  auto check = std::make_shared<std::function<void()>>();
  *check = [&p, &ctl, hard_end, check] {
    p.stopper->expires_after(std::chrono::milliseconds(50));
    p.stopper->async_wait([&p, &ctl, hard_end, check](const boost::system::error_code&) {
      if (ctl.stop.load() != 0 || p.ctx->running <= 0 || now_us() > hard_end) {
        p.io->stop();
        return;
      }
      (*check)();
    });
  };
  (*check)();
}

// One worker process: its share of the visitors (index % processes == w) over its threads.
[[noreturn]] void worker_main(int w, const Config& cfg, const Plan& plan, const PhaseSpec& spec,
                              Control& ctl, const std::string& out_path) {
  const int threads = plan.threads;
  int64_t t0 = ctl.t0.load();
  int64_t hard_end = t0 + static_cast<int64_t>(spec.max_seconds * 1e6);
  std::vector<PerThread> pts(threads);
  uint64_t k = 0;
  for (uint64_t i = static_cast<uint64_t>(w); i < spec.visitors; i += plan.processes, ++k) {
    pts[k % threads].indices.push_back(i);
  }
  for (int t = 0; t < threads; ++t) {
    PerThread& p = pts[t];
    p.io = std::make_unique<net::io_context>(1);
    p.watchdog = std::make_unique<Watchdog>(*p.io);
    p.rec = std::make_unique<Recorder>(t0);
    p.ctx.reset(new ThreadCtx{*p.io, *p.watchdog, *p.rec, ctl.live[w], ctl, plan, w, 0});
    p.records.resize(spec.mode == Mode::kClosed ? 0 : p.indices.size());
    p.ctx->running = static_cast<int64_t>(p.indices.size());
    p.rec->visits.planned = spec.mode == Mode::kClosed ? 0 : p.indices.size();
    for (size_t j = 0; j < p.indices.size(); ++j) {
      uint64_t i = p.indices[j];
      if (spec.mode == Mode::kClosed) {
        int64_t end = t0 + static_cast<int64_t>(cfg.duration_s * 1e6);
        net::co_spawn(*p.io, closed_loop(*p.ctx, i, end), net::detached);
      } else {
        VisitorRecord& r = p.records[j];
        r.due_us = cfg.arrival_rate > 0
                       ? t0 + static_cast<int64_t>(static_cast<double>(i) / cfg.arrival_rate * 1e6)
                       : t0;
        net::co_spawn(*p.io, visit(*p.ctx, i, r), net::detached);
      }
    }
    p.watchdog->start();
    stop_when_done(p, ctl, hard_end);
  }
  std::vector<std::thread> runners;
  for (int t = 1; t < threads; ++t) runners.emplace_back([&pts, t] { pts[t].io->run(); });
  pts[0].io->run();
  for (auto& th : runners) th.join();

  Recorder all(t0);
  for (PerThread& p : pts) {
    p.rec->records = std::move(p.records);
    all.merge(*p.rec);
  }
  std::string bytes = all.encode();
  std::ofstream f(out_path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.close();
  std::fflush(nullptr);
  _exit(f ? 0 : 3);
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void sum_live(const Control& ctl, int processes, Live* s) {
  auto add = [](std::atomic<int64_t>& to, const std::atomic<int64_t>& from) {
    to.store(to.load() + from.load(std::memory_order_relaxed));
  };
  for (int w = 0; w < processes; ++w) {
    const Live& l = ctl.live[w];
    add(s->open, l.open);
    add(s->waiting, l.waiting);
    add(s->active, l.active);
    add(s->joined, l.joined);
    add(s->admitted, l.admitted);
    add(s->finished, l.finished);
    add(s->errors, l.errors);
    add(s->requests, l.requests);
    add(s->held, l.held);
    add(s->changed, l.changed);
  }
}

// What the coordinator saw while the workers ran.
struct Watch {
  struct Gauge {
    uint64_t open = 0;
    uint64_t waiting = 0;
    uint64_t active = 0;
  };
  // One per second of the phase: the most sessions open in it, the last waiting and active.
  std::vector<Gauge> gauges;
  uint64_t max_open = 0;
  std::vector<int> statuses;  // each worker's wait status
  int64_t end_at = 0;         // when the last worker was seen to exit
};

// The progress line's figures from the summed live counters.
ProgressFigures progress_figures(const PhaseSpec& spec, const Live& sum, int64_t since_t0,
                                 double requests_per_second) {
  ProgressFigures f;
  f.phase = spec.name;
  f.seconds = static_cast<double>(since_t0) / 1e6;
  f.joined = sum.joined.load();
  f.admitted = sum.admitted.load();
  f.open = sum.open.load();
  f.waiting = sum.waiting.load();
  f.active = sum.active.load();
  f.finished = sum.finished.load();
  f.visitors = spec.visitors;
  f.requests_per_second = requests_per_second;
  f.errors = sum.errors.load();
  return f;
}

// Every 100 ms until every worker has exited: sums the live counters into the gauges, calls
// the scenario's hook, prints progress, and reaps the workers that exited.
Watch watch_workers(const Config& cfg, const PhaseSpec& spec, Control& ctl, int64_t t0,
                    const std::vector<pid_t>& pids) {
  const int processes = static_cast<int>(pids.size());
  Watch watch;
  watch.statuses.assign(pids.size(), -1);
  // Once a second on a terminal; nothing on a file or a pipe (progress_line.h).
  const bool show = cfg.progress && isatty(STDERR_FILENO) != 0;
  InPlaceLine line;
  int64_t last_print = now_us(), last_requests = 0;
  int live_children = processes;
  watch.end_at = now_us();
  while (live_children > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    int64_t now = now_us();
    Live sum;
    sum_live(ctl, processes, &sum);
    auto open = static_cast<uint64_t>(std::max<int64_t>(0, sum.open.load()));
    watch.max_open = std::max(watch.max_open, open);
    if (now >= t0) {
      auto s = static_cast<size_t>((now - t0) / 1000000);
      if (watch.gauges.size() <= s) watch.gauges.resize(s + 1);
      Watch::Gauge& g = watch.gauges[s];
      g.open = std::max(g.open, open);
      g.waiting = static_cast<uint64_t>(std::max<int64_t>(0, sum.waiting.load()));
      g.active = static_cast<uint64_t>(std::max<int64_t>(0, sum.active.load()));
    }
    if (spec.mode == Mode::kHold) {
      uint64_t rss = 0;
      for (int w = 0; w < processes; ++w) {
        if (watch.statuses[w] == -1) rss += rss_bytes(pids[w]);
      }
      ctl.workers_rss.store(rss);
    }
    if (spec.on_tick) spec.on_tick(ctl, sum, now);
    if (show && now - last_print >= 1'000'000) {
      const int64_t requests = sum.requests.load();
      const double rate =
          per_second(last_requests, requests, static_cast<double>(now - last_print) / 1e6);
      last_print = now;
      last_requests = requests;
      std::fputs(line.render(progress_text(progress_figures(spec, sum, now - t0, rate))).c_str(),
                 stderr);
    }
    for (int w = 0; w < processes; ++w) {
      if (watch.statuses[w] != -1) continue;
      int st = 0;
      if (waitpid(pids[w], &st, WNOHANG) == pids[w]) {
        watch.statuses[w] = st;
        --live_children;
        watch.end_at = now;
      }
    }
  }
  std::fputs(line.finish().c_str(), stderr);
  return watch;
}

// Merges what the workers wrote (files `tmp_prefix` + worker number, removed here) and the
// gauges into out->phase and out->records. Returns an empty string, or which worker failed.
std::string collect_workers(const PhaseSpec& spec, const Watch& watch, int64_t t0,
                            const std::string& tmp_prefix, PhaseOutput* out) {
  Phase& phase = out->phase;
  phase = Phase{};
  phase.name = spec.name;
  phase.duration_s = static_cast<double>(std::max<int64_t>(0, watch.end_at - t0)) / 1e6;
  std::string failure;
  for (size_t w = 0; w < watch.statuses.size(); ++w) {
    std::string path = tmp_prefix + std::to_string(w);
    int status = watch.statuses[w];
    Recorder r;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !r.decode(read_file(path))) {
      failure =
          "worker process " + std::to_string(w) + " failed (status " + std::to_string(status) + ")";
    } else {
      r.merge_into(&phase);
      out->records.insert(out->records.end(), r.records.begin(), r.records.end());
    }
    std::remove(path.c_str());
  }
  if (phase.seconds.size() < watch.gauges.size()) phase.seconds.resize(watch.gauges.size());
  for (size_t s = 0; s < watch.gauges.size(); ++s) {
    phase.seconds[s].open_sessions = watch.gauges[s].open;
    phase.seconds[s].waiting = watch.gauges[s].waiting;
    phase.seconds[s].active = watch.gauges[s].active;
  }
  phase.max_open_sessions = watch.max_open;
  phase.truth = check_truth(out->records, spec.mode == Mode::kHold);
  phase.visits.unresolved = phase.truth.unresolved;
  return failure;
}

}  // namespace

std::string run_phase(const Config& cfg, const Plan& base, const PhaseSpec& spec,
                      PhaseOutput* out) {
  Plan plan = base;
  plan.mode = spec.mode;
  plan.origin_after_admission = spec.origin_after_admission;
  plan.visitors = spec.visitors;
  plan.threads = threads_for(cfg);
  plan.processes = processes_for(cfg, spec.visitors);
  int sources = sources_for(cfg, spec.visitors);
  plan.sources = source_addresses(sources);
  if (!spec.sources.empty()) {
    plan.sources = spec.sources;
    sources = static_cast<int>(spec.sources.size());
  }
  out->processes = plan.processes;
  out->sources = sources;

  void* mem =
      mmap(nullptr, sizeof(Control), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return "mmap failed";
  Control* ctl = new (mem) Control();
  int64_t t0 = now_us() + 200'000;  // time for the workers to set up
  ctl->t0.store(t0);

  std::string tmp = "/tmp/anteroom-loadgen-" + std::to_string(getpid()) + "-" + spec.name + "-";
  std::fflush(nullptr);
  std::vector<pid_t> pids;
  for (int w = 0; w < plan.processes; ++w) {
    pid_t pid = fork();
    if (pid < 0) return "fork failed";
    if (pid == 0) worker_main(w, cfg, plan, spec, *ctl, tmp + std::to_string(w));
    pids.push_back(pid);
  }

  Watch watch = watch_workers(cfg, spec, *ctl, t0, pids);
  std::string failure = collect_workers(spec, watch, t0, tmp, out);
  munmap(mem, sizeof(Control));
  return failure;
}

}  // namespace anteroom::loadgen
