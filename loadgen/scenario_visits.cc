// surge (seed 002: N users at once, auto admission with a capacity) and scheduled (seed 001:
// a batch admitted each second, visitors on SSE): the whole visit, then the truth checks.
#include <cstdio>

#include "loadgen/admin.h"
#include "loadgen/scenarios.h"

namespace anteroom::loadgen {

int run_visits(const Config& cfg) {
  std::string room = room_for(cfg);
  if (std::string e = create_room(cfg, room, "auto"); !e.empty()) {
    return cannot_run(e);
  }
  RunResult run = new_result(cfg);
  PhaseSpec spec;
  spec.visitors = cfg.users;
  if (cfg.duration_s > 0) spec.max_seconds = cfg.duration_s;
  PhaseOutput out;
  std::string err = run_phase(cfg, base_plan(cfg, room), spec, &out);
  if (err.empty()) check_server_agrees(cfg, room, out.phase, &run);
  delete_room(cfg, room);
  if (!err.empty()) {
    return cannot_run(err);
  }
  const Phase& p = out.phase;
  double tta_p50 = static_cast<double>(p.time_to_admission.percentile(50)) / 1e6;
  double tta_p99 = static_cast<double>(p.time_to_admission.percentile(99)) / 1e6;
  run.metrics.push_back({"time to admission p50", tta_p50, "s"});
  run.metrics.push_back({"time to admission p99", tta_p99, "s"});
  run.metrics.push_back(
      {"max sessions open at once", static_cast<double>(p.max_open_sessions), "sessions"});
  add_phase(&run, std::move(out), true);
  return finish(cfg, room, &run);
}

}  // namespace anteroom::loadgen
