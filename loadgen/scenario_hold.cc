// hold: --users visitors join a manual room and keep their SSE or WebSocket session open.
// Once every session is open the server's resident memory is read again (memory per session
// = growth / sessions), then one change is made (the operator admits the first in line, so
// every other position moves up by one) and the time until every session has been told is
// measured. Sessions are held --duration seconds more, then closed.
#include <cstdio>

#include "loadgen/admin.h"
#include "loadgen/scenarios.h"

namespace anteroom::loadgen {

namespace {

// The phase's course, driven by the coordinator's tick (every 100 ms).
struct HoldCourse {
  enum class Stage {
    kOpening,    // until every session is open or has failed (or the wait runs out)
    kSettling,   // 2 s for the last sessions' buffers to settle
    kSpreading,  // the change is made: until every session was told (or 30 s)
    kHolding,    // --duration seconds more, then the phase stops
  };

  // Reads the server's memory before any session is open; the course starts now.
  HoldCourse(const Config& config, std::string room_name)
      : cfg(config),
        room(std::move(room_name)),
        rss_base(config.server_pid > 0 ? rss_bytes(config.server_pid) : 0),
        started(now_us()) {}

  void tick(Control& ctl, const Live& sum, int64_t now);

  const Config& cfg;
  std::string room;
  uint64_t rss_base = 0;     // the server's resident memory before the sessions open
  uint64_t rss_held = 0;     // ... with them open, just before the change
  uint64_t held = 0;         // sessions open when the change was made
  uint64_t loadgen_rss = 0;  // the loadgen's workers' resident memory then, together
  int64_t trigger = 0;       // when the change was made
  std::string admit_error;
  Stage stage = Stage::kOpening;
  int64_t started = 0;
  int64_t held_at = 0;
  int64_t all_changed_at = 0;
};

void HoldCourse::tick(Control& ctl, const Live& sum, int64_t now) {
  int64_t settled = sum.held.load() + sum.errors.load();
  if (stage == Stage::kOpening &&
      (settled >= static_cast<int64_t>(cfg.users) ||
       now - started > static_cast<int64_t>(cfg.timeout_s * 2e6) + 60'000'000)) {
    held_at = now;
    stage = Stage::kSettling;
  } else if (stage == Stage::kSettling && now - held_at > 2'000'000) {
    // Let the last sessions' buffers settle, then measure, then make the change.
    held = static_cast<uint64_t>(sum.held.load());
    if (cfg.server_pid > 0) rss_held = rss_bytes(cfg.server_pid);
    loadgen_rss = ctl.workers_rss.load();
    trigger = now_us();
    ctl.trigger_us.store(trigger);
    Reply r = http_call(cfg, "POST", "/v1/rooms/" + room + "/admit", R"({"count":1})", true);
    if (r.status != 200) admit_error = "admit: HTTP " + std::to_string(r.status) + " " + r.error;
    // No change was made: nothing to wait for (the run fails on admit_error).
    stage = admit_error.empty() ? Stage::kSpreading : Stage::kHolding;
    all_changed_at = now;
  } else if (stage == Stage::kSpreading) {
    auto changed = static_cast<uint64_t>(sum.changed.load());
    if (changed >= held || now - trigger > 30'000'000) {
      all_changed_at = now;
      stage = Stage::kHolding;
    }
  } else if (stage == Stage::kHolding &&
             now - all_changed_at > static_cast<int64_t>(cfg.duration_s * 1e6)) {
    ctl.stop.store(1);
  }
}

// Memory per session, and how long the change took to reach the sessions (from the time each
// visitor saw it, in `out`'s records).
void add_hold_results(const Config& cfg, const HoldCourse& course, const PhaseOutput& out,
                      RunResult* run) {
  const uint64_t held = course.held;
  Histogram fanout;
  for (const VisitorRecord& r : out.records) {
    if (r.change_seen_us != 0)
      fanout.record(static_cast<uint64_t>(std::max<int64_t>(0, r.change_seen_us - course.trigger)));
  }
  run->metrics.push_back({"sessions held at once", static_cast<double>(held), "sessions"});
  run->metrics.push_back({"max connections open at once",
                          static_cast<double>(out.phase.max_open_sessions), "connections"});
  if (cfg.server_pid > 0 && held > 0) {
    auto base = static_cast<double>(course.rss_base);
    auto holding = static_cast<double>(course.rss_held);
    double per = (holding - base) / static_cast<double>(held);
    run->metrics.push_back({"server memory before", base / 1048576.0, "MiB"});
    run->metrics.push_back({"server memory holding", holding / 1048576.0, "MiB"});
    run->metrics.push_back({"server memory per session", per, "bytes"});
    run->checks.push_back({"memory per session at most 8 KiB", per <= 8192,
                           std::to_string(static_cast<long long>(per)) + " bytes"});
  }
  if (held > 0 && course.loadgen_rss > 0) {
    // All of the workers' memory over the sessions, not a growth: what a hold of this size
    // costs the machine that runs the loadgen.
    double per = static_cast<double>(course.loadgen_rss) / static_cast<double>(held);
    run->metrics.push_back(
        {"loadgen memory holding", static_cast<double>(course.loadgen_rss) / 1048576.0, "MiB"});
    run->metrics.push_back({"loadgen memory per session", per, "bytes"});
  }
  run->metrics.push_back(
      {"change reached sessions", static_cast<double>(fanout.count()), "sessions"});
  run->metrics.push_back(
      {"change fan-out p50", static_cast<double>(fanout.percentile(50)) / 1000, "ms"});
  run->metrics.push_back(
      {"change fan-out p99", static_cast<double>(fanout.percentile(99)) / 1000, "ms"});
  run->metrics.push_back(
      {"change reached all after", static_cast<double>(fanout.max()) / 1000, "ms"});
  run->checks.push_back({"every session held", held == cfg.users,
                         std::to_string(held) + " of " + std::to_string(cfg.users)});
  run->checks.push_back({"the change reached every session", fanout.count() >= held && held > 0,
                         std::to_string(fanout.count()) + " of " + std::to_string(held)});
  if (!course.admit_error.empty()) {
    run->checks.push_back({"the change was made", false, course.admit_error});
  }
}

}  // namespace

int run_hold(const Config& cfg) {
  std::string room = room_for(cfg);
  if (std::string e = create_room(cfg, room, "manual"); !e.empty()) {
    return cannot_run(e);
  }
  HoldCourse course(cfg, room);
  PhaseSpec spec;
  spec.mode = Mode::kHold;
  spec.visitors = cfg.users;
  spec.max_seconds = cfg.timeout_s * 4 + cfg.duration_s + 120;
  spec.on_tick = [&course](Control& ctl, const Live& sum, int64_t now) {
    course.tick(ctl, sum, now);
  };
  PhaseOutput out;
  std::string err = run_phase(cfg, base_plan(cfg, room), spec, &out);
  delete_room(cfg, room);
  if (!err.empty()) {
    return cannot_run(err);
  }
  RunResult run = new_result(cfg);
  add_hold_results(cfg, course, out, &run);
  add_phase(&run, std::move(out), true);
  return finish(cfg, room, &run);
}

}  // namespace anteroom::loadgen
