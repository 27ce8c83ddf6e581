// closed: --connections keep-alive connections, each sending the next request as soon as the
// last is answered, for --duration seconds. Like wrk, it finds peak throughput; latency is
// from send to answer (the closed model cannot see queueing before the send).
#include <cstdio>

#include "loadgen/scenarios.h"

namespace anteroom::loadgen {

int run_closed(const Config& cfg) {
  RunResult run = new_result(cfg);
  PhaseSpec spec;
  spec.mode = Mode::kClosed;
  spec.visitors = cfg.connections;
  spec.max_seconds = cfg.duration_s + 5;
  PhaseOutput out;
  std::string err = run_phase(cfg, base_plan(cfg, ""), spec, &out);
  if (!err.empty()) {
    return cannot_run(err);
  }
  const Phase& p = out.phase;
  double secs = cfg.duration_s;
  run.metrics.push_back({"requests per second", static_cast<double>(p.requests()) / secs, "req/s"});
  const Histogram& h = p.latency[static_cast<int>(RequestKind::kFixed)];
  run.metrics.push_back({"latency p50", static_cast<double>(h.percentile(50)) / 1000, "ms"});
  run.metrics.push_back({"latency p99", static_cast<double>(h.percentile(99)) / 1000, "ms"});
  run.checks.push_back(
      {"no errors", p.error_count() == 0, std::to_string(p.error_count()) + " errors"});
  run.processes = out.processes;
  run.source_addresses = out.sources;
  run.phases.push_back(std::move(out.phase));
  return finish(cfg, "", &run);
}

}  // namespace anteroom::loadgen
