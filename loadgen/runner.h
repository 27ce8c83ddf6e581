// Runs one phase of a scenario: forks the worker processes (each with its own descriptors),
// gives each its share of the visitors over its threads (one io_context each), watches the
// shared live counters every 100 ms (progress line, gauges over time, the scenario's hook),
// then merges what the workers recorded into a Phase and its visitor records.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "loadgen/run_result.h"
#include "loadgen/visit.h"

namespace anteroom::loadgen {

struct PhaseSpec {
  std::string name = "run";
  Mode mode = Mode::kVisit;
  bool origin_after_admission = false;
  uint64_t visitors = 0;     // or connections, in the closed model
  double max_seconds = 600;  // the phase is stopped after this long, finished or not
  // Called every 100 ms in the coordinator with the summed live counters; may set
  // control.stop or control.trigger_us.
  std::function<void(Control& control, const Live& sum, int64_t now)> on_tick;
  // The visitors' source addresses (visitor i uses sources[i % size]); empty: --sources, or
  // as many 127.0.0.x as the sessions need.
  std::vector<net::ip::address> sources;
};

// Sessions one process takes before the phase fans out over more (descriptors: 20,000).
inline constexpr uint64_t kSessionsPerProcess = 18000;
// Sessions per source address before another 127.x.y.z is used: under the server's default
// per-address connection limit (1,000), with room for the operator calls from 127.0.0.1.
inline constexpr uint64_t kSessionsPerSource = 900;

struct PhaseOutput {
  Phase phase;
  std::vector<VisitorRecord> records;
  int processes = 1;
  int sources = 1;
};

// Returns an empty string, or why the phase could not run.
std::string run_phase(const Config& cfg, const Plan& base, const PhaseSpec& spec, PhaseOutput* out);

}  // namespace anteroom::loadgen
