// bots: humans arrive at a normal pace, one address each (127.1.x.y), join once (solving the
// proof of work if the room asks for it) and wait until admitted, while --bots addresses
// (127.3.0.x) hammer joins over several connections each, some solving the proof of work,
// some not. The room admits at a fixed rate, so admissions are the scarce good. First (unless
// --no-baseline) the same humans in a room of their own with no bots, for their wait alone.
//
// Fair share: if every party behaved, each human and each bot address would join once, and
// the humans would get H / (H + B) of the admissions. The humans' share is what they got of
// the admissions the room made while they were there (the server's count, read once the
// bots have stopped, a moment after the last human was let in: a little more than the bots
// had by then, so the share errs against the humans). The verdict wants that share to be at
// least 90% of the fair one.
#include <sys/mman.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cmath>
#include <cstdio>
#include <new>

#include "loadgen/admin.h"
#include "loadgen/bots.h"
#include "loadgen/pow_solver.h"
#include "loadgen/scenarios.h"

namespace anteroom::loadgen {

namespace {

constexpr double kFairShareWanted = 0.9;

// What a phase's room said at the end.
struct RoomTotals {
  uint64_t joined = 0;
  uint64_t admitted = 0;
};

struct HumansPhase {
  PhaseOutput out;
  RoomTotals totals;
  bool bots_ok = true;
};

const boost::json::value* field(const boost::json::value& v, const char* key) {
  return v.is_object() ? v.as_object().if_contains(key) : nullptr;
}

uint64_t whole(const boost::json::value* x) {
  if (x == nullptr) return 0;
  if (x->is_uint64()) return x->as_uint64();
  if (x->is_int64() && x->as_int64() >= 0) return static_cast<uint64_t>(x->as_int64());
  return 0;
}

// The room as the server has it: its defences must be what was asked, or the run means nothing.
std::string read_room(const Config& cfg, const std::string& room, RoomTotals* totals,
                      bool check_settings) {
  Reply r = http_call(cfg, "GET", "/v1/rooms/" + room, "", true);
  boost::system::error_code ec;
  const boost::json::value v = boost::json::parse(r.body, ec);
  const boost::json::value* t = ec ? nullptr : field(v, "totals");
  if (r.status != 200 || t == nullptr) {
    return "reading room " + room + ": HTTP " + std::to_string(r.status) + " " + r.error;
  }
  totals->joined = whole(field(*t, "joined"));
  totals->admitted = whole(field(*t, "admitted"));
  if (!check_settings) return "";
  const boost::json::value* limit = field(v, "ip_joins_per_minute");
  if (whole(limit) != cfg.ip_joins_per_minute) {
    return "the server did not take ip_joins_per_minute " +
           std::to_string(cfg.ip_joins_per_minute) + " (room: " + r.body.substr(0, 300) + ")";
  }
  if (cfg.pow_difficulty == 0) return "";
  const boost::json::value* pow = field(v, "pow_difficulty");
  const bool as_asked =
      pow != nullptr && (cfg.pow_difficulty == Config::kPowAuto
                             ? pow->is_string() && pow->as_string() == "auto"
                             : whole(pow) == static_cast<uint64_t>(cfg.pow_difficulty));
  if (!as_asked) {
    return "the server did not take pow_difficulty (it has no proof of work?); room: " +
           r.body.substr(0, 300);
  }
  Reply c = http_call(cfg, "GET", "/v1/rooms/" + room + "/challenge", "", false);
  PowChallengeText ch;
  if (c.status != 200 || !parse_challenge(c.body, &ch)) {
    return "GET challenge: HTTP " + std::to_string(c.status) + " " + c.body.substr(0, 200) +
           c.error;
  }
  if (cfg.pow_difficulty != Config::kPowAuto &&
      ch.difficulty != static_cast<unsigned>(cfg.pow_difficulty)) {
    return "GET challenge: difficulty " + std::to_string(ch.difficulty) + ", the room has " +
           std::to_string(cfg.pow_difficulty);
  }
  return "";
}

// One phase: a fresh room, the humans (and the bots, when `bots` is given), the room's totals.
std::string run_humans(const Config& cfg, const std::string& room, const std::string& name,
                       BotShared* bots, HumansPhase* out) {
  if (std::string e = create_room(cfg, room, "auto"); !e.empty()) return e;
  if (std::string e = read_room(cfg, room, &out->totals, true); !e.empty()) {
    delete_room(cfg, room);
    return e;
  }
  Plan plan = base_plan(cfg, room);
  PhaseSpec spec;
  spec.name = name;
  spec.visitors = cfg.users;
  for (uint64_t i = 0; i < cfg.users; ++i) spec.sources.push_back(human_address(i));
  const double arrivals = static_cast<double>(cfg.users) / cfg.arrival_rate;
  spec.max_seconds = cfg.duration_s > 0 ? cfg.duration_s : arrivals + 2 * cfg.timeout_s + 60;
  pid_t bots_pid = -1;
  if (bots != nullptr) {
    bots_pid = start_bots(cfg, plan, bots, spec.max_seconds + 5);
    if (bots_pid < 0) {
      delete_room(cfg, room);
      return "fork failed (bots)";
    }
  }
  std::string err = run_phase(cfg, plan, spec, &out->out);
  if (bots_pid > 0) out->bots_ok = stop_bots(bots_pid, bots);
  if (err.empty()) err = read_room(cfg, room, &out->totals, false);
  delete_room(cfg, room);
  return err;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto k = static_cast<size_t>(std::lround(p / 100 * static_cast<double>(v.size() - 1)));
  return v[std::min(k, v.size() - 1)];
}

struct HumanFigures {
  uint64_t admitted = 0;
  uint64_t limited = 0;           // joins answered 429
  std::vector<double> wait_s;     // join answered -> ALLOWED seen
  std::vector<double> arrival_s;  // due -> ALLOWED seen
  std::vector<double> solve_s;    // due -> proof of work solved
};

HumanFigures humans_of(const std::vector<VisitorRecord>& records) {
  HumanFigures h;
  for (const VisitorRecord& r : records) {
    if (r.join_refused == 429) ++h.limited;
    if (r.pow_solved_us != 0)
      h.solve_s.push_back(static_cast<double>(r.pow_solved_us - r.due_us) / 1e6);
    if (r.allowed_seen_us == 0) continue;
    ++h.admitted;
    h.wait_s.push_back(static_cast<double>(r.allowed_seen_us - r.join_acked_us) / 1e6);
    h.arrival_s.push_back(static_cast<double>(r.allowed_seen_us - r.due_us) / 1e6);
  }
  return h;
}

void add_human_metrics(const std::string& prefix, const HumanFigures& h, RunResult* run) {
  run->metrics.push_back({prefix + "humans admitted", static_cast<double>(h.admitted), "humans"});
  run->metrics.push_back(
      {prefix + "humans' joins answered 429", static_cast<double>(h.limited), "joins"});
  run->metrics.push_back(
      {prefix + "humans' wait, join to admission (p50)", percentile(h.wait_s, 50), "s"});
  run->metrics.push_back(
      {prefix + "humans' wait, join to admission (p99)", percentile(h.wait_s, 99), "s"});
  run->metrics.push_back(
      {prefix + "humans' arrival to admission (p50)", percentile(h.arrival_s, 50), "s"});
  run->metrics.push_back(
      {prefix + "humans' arrival to admission (p99)", percentile(h.arrival_s, 99), "s"});
  if (!h.solve_s.empty()) {
    run->metrics.push_back({prefix + "humans' proof of work, arrival to solved (p50)",
                            percentile(h.solve_s, 50), "s"});
    run->metrics.push_back({prefix + "humans' proof of work, arrival to solved (p99)",
                            percentile(h.solve_s, 99), "s"});
  }
}

std::string pct(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", share * 100);
  return buf;
}

// The bots' answers by kind, their refusals, and the checks on them.
void add_bot_results(const Config& cfg, const BotShared& b, double phase_s, RunResult* run) {
  uint64_t sent = 0;
  uint64_t refused = 0;
  uint64_t unsolved_tickets = 0;
  for (int k = 0; k < kBotKinds; ++k) {
    const BotTally& t = b.kinds[k];
    if (t.sent.load() == 0 && t.failed.load() == 0) continue;
    const std::string p = std::string("bots (") + bot_kind_name(static_cast<BotKind>(k)) + "): ";
    run->metrics.push_back({p + "joins sent", static_cast<double>(t.sent.load()), "joins"});
    run->metrics.push_back({p + "201 tickets", static_cast<double>(t.created.load()), "joins"});
    run->metrics.push_back(
        {p + "429 rate_limited", static_cast<double>(t.limited.load()), "joins"});
    run->metrics.push_back(
        {p + "403 pow_required", static_cast<double>(t.pow_required.load()), "joins"});
    run->metrics.push_back(
        {p + "403 pow_invalid", static_cast<double>(t.pow_invalid.load()), "joins"});
    run->metrics.push_back({p + "other answers", static_cast<double>(t.other.load()), "joins"});
    run->metrics.push_back({p + "no answer", static_cast<double>(t.failed.load()), "requests"});
    sent += t.sent.load();
    refused += t.limited.load() + t.pow_required.load() + t.pow_invalid.load();
    if (static_cast<BotKind>(k) != BotKind::kSolver) unsolved_tickets += t.created.load();
  }
  const double bots_s =
      static_cast<double>(std::max<int64_t>(1, b.ended_us.load() - b.started_us.load())) / 1e6;
  run->metrics.push_back({"bots' joins per second", static_cast<double>(sent) / bots_s, "joins/s"});
  uint64_t most = 0;
  for (uint32_t k = 0; k < cfg.bots; ++k) most = std::max(most, b.tickets_by_address[k].load());
  run->metrics.push_back(
      {"most tickets one bot address got", static_cast<double>(most), "tickets"});
  if (cfg.bots > 0 && (cfg.ip_joins_per_minute != 0 || cfg.pow_difficulty != 0)) {
    run->checks.push_back({"bots were refused (429 or 403)", refused > 0,
                           std::to_string(refused) + " of " + std::to_string(sent) + " bot joins"});
  }
  if (cfg.ip_joins_per_minute != 0 && cfg.bots > 0) {
    // A sliding minute lets at most the limit in per minute started, and one minute more.
    const uint64_t bound =
        uint64_t{cfg.ip_joins_per_minute} * (static_cast<uint64_t>(phase_s / 60) + 2);
    run->checks.push_back({"no bot address past the per-address limit", most <= bound,
                           "most " + std::to_string(most) + " tickets from one address, limit " +
                               std::to_string(cfg.ip_joins_per_minute) + "/min over " +
                               std::to_string(static_cast<int>(phase_s)) + " s (at most " +
                               std::to_string(bound) + ")"});
  }
  if (cfg.pow_difficulty == 0) return;
  run->metrics.push_back(
      {"bots: challenges fetched", static_cast<double>(b.challenges.load()), "challenges"});
  run->metrics.push_back(
      {"bots: proofs of work solved", static_cast<double>(b.solved.load()), "solutions"});
  run->metrics.push_back({"bots: hashes computed", static_cast<double>(b.hashes.load()), "hashes"});
  run->checks.push_back(
      {"no join without a solved challenge accepted", unsolved_tickets == 0,
       std::to_string(unsolved_tickets) + " tickets to bots that sent no proof or a wrong nonce"});
  run->checks.push_back(
      {"no solution accepted twice", b.replays_accepted.load() == 0,
       std::to_string(b.replays.load()) +
           " accepted solutions sent again: " + std::to_string(b.replays_accepted.load()) +
           " accepted, " + std::to_string(b.replays_invalid.load()) + " answered 403 pow_invalid"});
}

// The humans' share of the admissions against their fair share.
void add_share(const Config& cfg, const HumanFigures& h, const RoomTotals& totals, RunResult* run) {
  const double fair = static_cast<double>(cfg.users) / static_cast<double>(cfg.users + cfg.bots);
  const double share = totals.admitted == 0
                           ? 0
                           : static_cast<double>(h.admitted) / static_cast<double>(totals.admitted);
  const double ratio = share / fair;
  run->metrics.push_back({"admissions in all (the server's count)",
                          static_cast<double>(totals.admitted), "admissions"});
  run->metrics.push_back(
      {"admissions to bots",
       static_cast<double>(totals.admitted - std::min(totals.admitted, h.admitted)), "admissions"});
  run->metrics.push_back({"humans' fair share: H / (H + bot addresses)", fair * 100, "%"});
  run->metrics.push_back({"humans' share of the admissions", share * 100, "%"});
  run->metrics.push_back({"humans' share / fair share", ratio, "x"});
  char detail[160];
  std::snprintf(detail, sizeof detail, "%.3f: %llu of %llu admissions (%s) against %s", ratio,
                static_cast<unsigned long long>(h.admitted),
                static_cast<unsigned long long>(totals.admitted), pct(share).c_str(),
                pct(fair).c_str());
  run->checks.push_back(
      {"humans got >= 90% of their fair share of admissions", ratio >= kFairShareWanted, detail});
}

void add_every_human_admitted(const std::string& prefix, const Config& cfg, const HumanFigures& h,
                              RunResult* run) {
  run->checks.push_back({prefix + "every human admitted", h.admitted == cfg.users,
                         std::to_string(h.admitted) + " of " + std::to_string(cfg.users)});
  run->checks.push_back({prefix + "no human rate limited", h.limited == 0,
                         std::to_string(h.limited) + " joins answered 429"});
}

}  // namespace

int run_bots(const Config& cfg) {
  const std::string room = room_for(cfg);
  RunResult run = new_result(cfg);
  HumansPhase base;
  if (cfg.baseline) {
    if (std::string e = run_humans(cfg, room + "-base", "baseline", nullptr, &base); !e.empty()) {
      return cannot_run(e);
    }
  }
  void* mem =
      mmap(nullptr, sizeof(BotShared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return cannot_run("mmap failed");
  BotShared* bots = new (mem) BotShared();
  HumansPhase with;
  std::string err = run_humans(cfg, room, "with bots", bots, &with);
  if (err.empty() && !with.bots_ok) err = "the bots' process failed";
  if (!err.empty()) {
    munmap(mem, sizeof(BotShared));
    return cannot_run(err);
  }

  const HumanFigures h = humans_of(with.out.records);
  add_share(cfg, h, with.totals, &run);
  add_every_human_admitted("", cfg, h, &run);
  add_human_metrics("with bots: ", h, &run);
  add_bot_results(cfg, *bots, with.out.phase.duration_s, &run);
  const uint64_t bot_tickets = [&] {
    uint64_t n = bots->replays_accepted.load();
    for (const BotTally& t : bots->kinds) n += t.created.load();
    return n;
  }();
  run.checks.push_back({"the server counted every join (humans' and bots')",
                        with.totals.joined == with.out.phase.visits.joined + bot_tickets,
                        "server " + std::to_string(with.totals.joined) + ", humans " +
                            std::to_string(with.out.phase.visits.joined) + " + bots " +
                            std::to_string(bot_tickets)});
  munmap(mem, sizeof(BotShared));
  if (cfg.baseline) {
    const HumanFigures b = humans_of(base.out.records);
    add_every_human_admitted("baseline: ", cfg, b, &run);
    add_human_metrics("baseline: ", b, &run);
    run.metrics.push_back({"humans' extra wait with bots (p50)",
                           percentile(h.wait_s, 50) - percentile(b.wait_s, 50), "s"});
    run.metrics.push_back({"humans' extra wait with bots (p99)",
                           percentile(h.wait_s, 99) - percentile(b.wait_s, 99), "s"});
    add_phase(&run, std::move(base.out), true);
  }
  add_phase(&run, std::move(with.out), true);
  return finish(cfg, room, &run);
}

}  // namespace anteroom::loadgen
