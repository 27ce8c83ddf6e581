// protect: the demo origin (fixed capacity, 503 beyond it) is hit by --users visitors at
// once, first directly and then through anteroom (room capacity = the origin's capacity,
// each admitted visitor makes its request to the origin and leaves). Seed 002 saw about 80%
// fewer errors with a queue; with admission tied to capacity there should be none.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "loadgen/admin.h"
#include "loadgen/origin.h"
#include "loadgen/scenarios.h"

namespace anteroom::loadgen {

namespace {
// Starts the origin in a child process; its port, or 0.
uint16_t start_origin(const Config& cfg, pid_t* pid) {
  int fds[2];
  if (pipe(fds) != 0) return 0;
  std::fflush(nullptr);
  *pid = fork();
  if (*pid == 0) {
    close(fds[0]);
    _exit(run_origin(cfg.origin_port, cfg.origin_capacity, cfg.origin_service_ms, fds[1]));
  }
  close(fds[1]);
  char buf[16] = {};
  ssize_t n = read(fds[0], buf, sizeof buf - 1);
  close(fds[0]);
  return n > 0 ? static_cast<uint16_t>(std::atoi(buf)) : 0;
}
}  // namespace

int run_protect(const Config& cfg) {
  pid_t origin_pid = 0;
  uint16_t port = start_origin(cfg, &origin_pid);
  if (port == 0) {
    std::fprintf(stderr, "anteroom-loadgen: the demo origin did not start\n");
    return 2;
  }
  std::string room = room_for(cfg);
  if (std::string e = create_room(cfg, room, "auto"); !e.empty()) {
    kill(origin_pid, SIGTERM);
    waitpid(origin_pid, nullptr, 0);
    return cannot_run(e);
  }
  Plan plan = base_plan(cfg, room);
  plan.origin = tcp::endpoint(net::ip::make_address("127.0.0.1"), port);
  RunResult run = new_result(cfg);

  PhaseSpec direct;
  direct.name = "direct";
  direct.mode = Mode::kDirect;
  direct.visitors = cfg.users;
  PhaseOutput d;
  std::string err = run_phase(cfg, plan, direct, &d);

  PhaseSpec queued;
  queued.name = "queued";
  queued.origin_after_admission = true;
  queued.visitors = cfg.users;
  PhaseOutput q;
  if (err.empty()) err = run_phase(cfg, plan, queued, &q);
  if (err.empty()) check_server_agrees(cfg, room, q.phase, &run);
  delete_room(cfg, room);
  kill(origin_pid, SIGTERM);
  waitpid(origin_pid, nullptr, 0);
  if (!err.empty()) {
    return cannot_run(err);
  }
  double direct_rate = d.phase.error_rate();
  double queued_rate = q.phase.error_rate();
  uint64_t direct_5xx = d.phase.errors[static_cast<int>(ErrorKind::k5xx)];
  run.metrics.push_back({"direct: error rate", direct_rate * 100, "%"});
  run.metrics.push_back({"direct: 503 answers", static_cast<double>(direct_5xx), "requests"});
  run.metrics.push_back({"queued: error rate", queued_rate * 100, "%"});
  run.metrics.push_back({"queued: time to admission p99",
                         static_cast<double>(q.phase.time_to_admission.percentile(99)) / 1e6, "s"});
  if (direct_rate > 0) {
    run.metrics.push_back(
        {"fewer errors with the queue", (1 - queued_rate / direct_rate) * 100, "%"});
  }
  run.checks.push_back(
      {"the origin was overloaded when hit directly", direct_5xx > 0,
       std::to_string(direct_5xx) + " answers 503 of " + std::to_string(cfg.users)});
  // The direct phase is meant to fail: only its order checks would make no sense to add.
  run.phases.push_back(std::move(d.phase));
  add_phase(&run, std::move(q), true);
  return finish(cfg, room, &run);
}

}  // namespace anteroom::loadgen
