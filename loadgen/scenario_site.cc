// site: a protected site behind a real proxy (--target is the proxy, which sends the gate's
// questions and /v1/... to anteroom and the rest to the origin). The room protects the
// whole site and bypasses the assets' folders. First --before-users visitors arrive at
// half the pace the room admits (the room lets each in at the gate, no page in between),
// then --users at --arrival-rate (a line forms and they see the waiting page). Each visitor
// loads the page (through the waiting page when there is a line), the assets without
// cookies and the XHR (visit_site.cc).
//
// Figures: time from arrival to the origin's page, the share that never saw the waiting
// page. Checks: every visitor reached the origin, and the room kept exactly one ticket per
// visitor (an asset that was not bypassed would have made more before the surge).
#include <algorithm>
#include <boost/json.hpp>

#include "loadgen/admin.h"
#include "loadgen/scenarios.h"

namespace anteroom::loadgen {

namespace {

// The folder of a path: "/static/a.css" -> "/static/".
std::string folder_of(const std::string& path) { return path.substr(0, path.rfind('/') + 1); }

std::string gate_fields(const Config& cfg) {
  // The whole site is protected: only the bypass rule lets the assets by.
  boost::json::array match;
  match.push_back(boost::json::object{{"path_prefix", "/"}});
  std::vector<std::string> folders;
  if (cfg.site_bypass) {
    for (const std::string& a : cfg.site_assets) folders.push_back(folder_of(a));
  }
  std::sort(folders.begin(), folders.end());
  folders.erase(std::unique(folders.begin(), folders.end()), folders.end());
  boost::json::array bypass;
  for (size_t i = 0; i < folders.size(); ++i) {
    bypass.push_back(
        boost::json::object{{"name", "assets" + std::to_string(i)}, {"path_prefix", folders[i]}});
  }
  return boost::json::serialize(boost::json::object{
      {"match", std::move(match)}, {"bypass", std::move(bypass)}, {"gate_admits", true}});
}

// The room's tickets that did not leave: the gate leaves at once a ticket of its own that
// lost a race for the slot (a join admitted by the page's visitor, or the rate used up).
uint64_t kept_tickets(const Config& cfg, const std::string& room, std::string* err) {
  Reply r = http_call(cfg, "GET", "/v1/rooms/" + room, "", true);
  boost::system::error_code ec;
  const boost::json::value v = boost::json::parse(r.body, ec);
  const boost::json::value* t =
      ec || !v.is_object() ? nullptr : v.as_object().if_contains("totals");
  auto total = [&](const char* name) -> const boost::json::value* {
    const boost::json::value* x =
        t == nullptr || !t->is_object() ? nullptr : t->as_object().if_contains(name);
    return x != nullptr && x->is_number() ? x : nullptr;
  };
  if (r.status != 200 || total("joined") == nullptr || total("left") == nullptr) {
    *err = "reading room " + room + ": HTTP " + std::to_string(r.status) + " " + r.error;
    return 0;
  }
  return total("joined")->to_number<uint64_t>() - total("left")->to_number<uint64_t>();
}

// The phase's figures and checks; the phase goes into the run.
void add_site_phase(RunResult* run, PhaseOutput&& out) {
  const Phase& p = out.phase;
  uint64_t never = 0;
  for (const VisitorRecord& r : out.records) never += r.saw_page ? 0 : 1;
  const double n = static_cast<double>(std::max<size_t>(out.records.size(), 1));
  run->metrics.push_back(
      {p.name + ": never saw the waiting page", 100.0 * static_cast<double>(never) / n, "%"});
  run->metrics.push_back({p.name + ": time to the origin p50",
                          static_cast<double>(p.time_to_admission.percentile(50)) / 1e6, "s"});
  run->metrics.push_back({p.name + ": time to the origin p99",
                          static_cast<double>(p.time_to_admission.percentile(99)) / 1e6, "s"});
  uint64_t served = 0;
  for (const VisitorRecord& r : out.records) served += r.outcome == Outcome::kServed ? 1 : 0;
  run->checks.push_back({p.name + ": every visitor reached the origin's page and XHR",
                         served == out.records.size(),
                         std::to_string(served) + " of " + std::to_string(out.records.size())});
  if (p.name == "before") {
    // The room was empty when the first visitor came: the gate let it straight in.
    const bool first_direct = !out.records.empty() && !out.records.front().saw_page;
    run->checks.push_back({"before: the first visitor went straight in", first_direct,
                           first_direct ? "no waiting page" : "it was shown the waiting page"});
  }
  add_phase(run, std::move(out), true);
}

}  // namespace

int run_site(const Config& cfg) {
  const std::string room = room_for(cfg);
  if (std::string e = create_room(cfg, room, "auto"); !e.empty()) return cannot_run(e);
  Reply g = http_call(cfg, "PUT", "/v1/rooms/" + room, gate_fields(cfg), true);
  if (g.status != 200) {
    delete_room(cfg, room);
    return cannot_run("setting the room's gate fields: HTTP " + std::to_string(g.status) + " " +
                      g.body + g.error);
  }
  RunResult run = new_result(cfg);
  // Before the surge: a pace the room admits at once. Their own seed: other ticket keys.
  Config before = cfg;
  before.users = cfg.before_users != 0 ? cfg.before_users : std::max<uint64_t>(cfg.users / 10, 10);
  before.arrival_rate = std::max(static_cast<double>(cfg.admit_per_second) / 2, 0.5);
  before.seed = cfg.seed + 1;
  std::string err;
  uint64_t visitors = 0;
  for (const Config* c : std::initializer_list<const Config*>{&before, &cfg}) {
    Plan plan = base_plan(*c, room);
    plan.mode = Mode::kSite;
    PhaseSpec spec;
    spec.name = c == &before ? "before" : "surge";
    spec.mode = Mode::kSite;
    spec.visitors = c->users;
    const double arrivals =
        c->arrival_rate > 0 ? static_cast<double>(c->users) / c->arrival_rate : 0;
    const double admissions =
        static_cast<double>(c->users) / std::max(static_cast<double>(c->admit_per_second), 0.1);
    spec.max_seconds =
        cfg.duration_s > 0 ? cfg.duration_s : arrivals + admissions + 2 * cfg.timeout_s + 60;
    PhaseOutput out;
    err = run_phase(*c, plan, spec, &out);
    if (!err.empty()) break;
    visitors += out.records.size();
    add_site_phase(&run, std::move(out));
  }
  const uint64_t kept = err.empty() ? kept_tickets(cfg, room, &err) : 0;
  delete_room(cfg, room);
  if (!err.empty()) return cannot_run(err);
  run.checks.push_back({"one ticket per visitor (bypassed assets made none)", kept == visitors,
                        "the room kept " + std::to_string(kept) + " tickets for " +
                            std::to_string(visitors) + " visitors"});
  return finish(cfg, room, &run);
}

}  // namespace anteroom::loadgen
