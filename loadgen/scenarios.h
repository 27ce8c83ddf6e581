// The built-in scenarios (docs/loadgen.md). Each returns the process exit status: 0 when
// every check passed, 1 when one failed, 2 when the run could not be made.
#pragma once

#include <string>

#include "loadgen/config.h"
#include "loadgen/run_result.h"
#include "loadgen/runner.h"

namespace anteroom::loadgen {

int run_seed_visit(const Config& cfg);  // seed_visit.cc
int run_visits(const Config& cfg);      // surge and scheduled: scenario_visits.cc
int run_protect(const Config& cfg);     // scenario_protect.cc
int run_hold(const Config& cfg);        // scenario_hold.cc
int run_closed(const Config& cfg);      // scenario_closed.cc
int run_drop(const Config& cfg);        // scenario_drop.cc
int run_bots(const Config& cfg);        // scenario_bots.cc
int run_site(const Config& cfg);        // scenario_site.cc

// Shared by the scenarios (scenario_common.cc).
RunResult new_result(const Config& cfg);
std::string room_for(const Config& cfg);  // --room, or a fresh lg-<scenario>-<random>
Plan base_plan(const Config& cfg, const std::string& room);
// Adds the phase with its truth checks (zero errors, inversions, ... as `strict` asks).
// `line` names the order the inversions were counted in (drop's drawn line is not join order).
void add_phase(RunResult* run, PhaseOutput&& out, bool expect_no_errors,
               const std::string& line = "join order");
// Writes the reports, prints the summary; the exit status. `room` is the room the run used
// (shown in the report's settings; empty for none).
int finish(const Config& cfg, const std::string& room, RunResult* run);
// Says why the run could not be made, on stderr; the exit status for that (2).
int cannot_run(const std::string& why);
void delete_room(const Config& cfg, const std::string& room);
// Asks the server for the room's totals and checks they agree with what the visitors did:
// every join the visitors had answered was counted, every leave they sent took effect.
void check_server_agrees(const Config& cfg, const std::string& room, const Phase& phase,
                         RunResult* run);

}  // namespace anteroom::loadgen
