#include <unistd.h>

#include <cstdio>
#include <random>
#include <thread>

#include <boost/json.hpp>

#include "loadgen/admin.h"
#include "loadgen/report.h"
#include "loadgen/scenarios.h"

namespace anteroom::loadgen {

RunResult new_result(const Config& cfg) {
  RunResult run;
  run.scenario = scenario_name(cfg.scenario);
  run.command = cfg.command;
  run.machine = machine_description();
  run.started_at = utc_now_iso();
  return run;
}

std::string room_for(const Config& cfg) {
  if (!cfg.room.empty()) return cfg.room;
  std::random_device rd;
  char buf[16];
  std::snprintf(buf, sizeof buf, "%06x", rd() & 0xffffff);
  return std::string("lg-") + scenario_name(cfg.scenario) + "-" + buf;
}

Plan base_plan(const Config& cfg, const std::string& room) {
  Plan p;
  p.cfg = &cfg;
  p.target = resolve_endpoint(cfg.target_host, cfg.target_port);
  for (const auto& [host, port] : cfg.targets) p.targets.push_back(resolve_endpoint(host, port));
  if (p.targets.empty()) p.targets.push_back(p.target);
  p.host = cfg.target_host + ":" + std::to_string(cfg.target_port);
  p.room = room;
  return p;
}

void add_phase(RunResult* run, PhaseOutput&& out, bool expect_no_errors, const std::string& line) {
  run->processes = std::max(run->processes, out.processes);
  run->source_addresses = std::max(run->source_addresses, out.sources);
  const Phase& p = out.phase;
  std::string prefix = run->phases.empty() && p.name == "run" ? "" : p.name + ": ";
  auto check = [&](const std::string& name, uint64_t value, const std::string& what) {
    run->checks.push_back({prefix + name, value == 0, std::to_string(value) + " " + what});
  };
  if (expect_no_errors) check("no errors", p.error_count(), "errors");
  check("admission in " + line, p.truth.inversions, "inversions observed");
  check("join order matches seq", p.truth.join_order_violations, "contradictions");
  check("positions never grew", p.truth.positions_grew, "visitors saw their position grow");
  check("every ticket resolved", p.truth.unresolved, "tickets neither admitted nor ended");
  run->phases.push_back(std::move(out.phase));
}

int cannot_run(const std::string& why) {
  std::fprintf(stderr, "anteroom-loadgen: %s\n", why.c_str());
  return 2;
}

int finish(const Config& cfg, const std::string& room, RunResult* run) {
  run->config = cfg.describe();
  for (auto& [k, v] : run->config) {  // what "auto" resolved to
    if (k == "room" && !room.empty()) v = room;
    if (k == "processes") v = std::to_string(run->processes);
    if (k == "sources") v = std::to_string(run->source_addresses);
    if (k == "threads" && cfg.threads == 0) v = std::to_string(std::thread::hardware_concurrency());
  }
  std::string prefix = cfg.out;
  if (prefix.empty()) {
    prefix = std::string("results/runs/") + scenario_name(cfg.scenario);
    if (cfg.scenario != Scenario::kClosed && cfg.scenario != Scenario::kSeedVisit) {
      prefix += "-" + std::to_string(cfg.users) + "-" + transport_name(cfg.transport);
    }
  }
  std::string err = write_reports(*run, prefix);
  std::fputs(report_markdown(*run).c_str(), stdout);
  if (!err.empty()) return cannot_run(err);
  std::printf("\nreports: %s.json %s.md %s.html\n", prefix.c_str(), prefix.c_str(), prefix.c_str());
  std::printf("%s\n", run->passed() ? "PASS" : "FAIL");
  return run->passed() ? 0 : 1;
}

void check_server_agrees(const Config& cfg, const std::string& room, const Phase& phase,
                         RunResult* run) {
  Reply r = http_call(cfg, "GET", "/v1/rooms/" + room, "", true);
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(r.body, ec);
  const boost::json::value* totals =
      ec || !v.is_object() ? nullptr : v.as_object().if_contains("totals");
  if (r.status != 200 || totals == nullptr || !totals->is_object()) {
    run->checks.push_back(
        {"the server's totals agree", false,
         "could not read the room: HTTP " + std::to_string(r.status) + " " + r.error});
    return;
  }
  auto total = [&](const char* key) -> uint64_t {
    const boost::json::value* x = totals->as_object().if_contains(key);
    return x != nullptr && x->is_uint64()  ? x->as_uint64()
           : x != nullptr && x->is_int64() ? static_cast<uint64_t>(x->as_int64())
                                           : 0;
  };
  uint64_t joined = total("joined");
  uint64_t left = total("left");
  run->checks.push_back(
      {"the server counted every join", joined == phase.visits.joined,
       "server " + std::to_string(joined) + ", visitors " + std::to_string(phase.visits.joined)});
  run->checks.push_back(
      {"every leave took effect at the server", left == phase.visits.left,
       "server " + std::to_string(left) + ", visitors " + std::to_string(phase.visits.left)});
}

void delete_room(const Config& cfg, const std::string& room) {
  if (cfg.keep_room) return;
  http_call(cfg, "DELETE", "/v1/rooms/" + room, "", true);
}

}  // namespace anteroom::loadgen
