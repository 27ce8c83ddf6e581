// drop: a scheduled event, the way a ticket sale or a product drop runs. The room gets an
// event whose pre-queue opens now and whose start is --prequeue-s + 1 seconds away; --users
// visitors arrive spread evenly over the pre-queue and wait. At the start the line is drawn
// (--shuffle) or kept in join order (--no-shuffle) and let in at --admit-per-second. Then:
// the draw is checked as anyone would check it (docs/fairness.md), admission must have
// followed the line, and the wait after the start, by arrival fifth, must be flat with a draw
// (arriving early buys nothing) and rise without one.
#include <algorithm>
#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <unordered_map>
#include <unordered_set>

#include "loadgen/admin.h"
#include "loadgen/admission_order.h"
#include "loadgen/draw_check.h"
#include "loadgen/scenarios.h"

namespace anteroom::loadgen {

namespace {

// How far a visitor ahead in the line may seem to be let in after one behind it before that
// counts as an order violation. The engine admits strictly in line order, one pass per owner
// tick (5 ms), so what is left is the measurement: on SSE the ALLOWED frames of one pass
// reach the visitors in whatever order the server's and the loadgen's threads get to them
// (up to R frames at once at the start, on shared cores); a poller's evidence is the send
// time of a request the server answered WAITING, which needs no allowance beyond the tick
// (50 ms: the tick and a margin for a cluster node applying its decider's record).
constexpr int64_t kSseToleranceUs = 250'000;
constexpr int64_t kPollToleranceUs = 50'000;

// Unix milliseconds as RFC 3339 in UTC, the way the server writes them back.
std::string rfc3339(int64_t unix_ms) {
  const auto t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", date, static_cast<int>(unix_ms % 1000));
  return out;
}

// The event as set: its commitment and its start on the loadgen's own clock (now_us()).
struct Event {
  std::string commitment;       // seed_sha256, shown before anyone joined
  std::string refs_commitment;  // refs_sha256, shown from the start
  int64_t start_us = 0;
};

// PUT /v1/rooms/{room}/event: the pre-queue opens now, the start is --prequeue-s + 1 s away
// (the last arrival is due about a second before it). Event times are wall-clock times, so
// the loadgen's clock and the server's must agree (the same machine, or NTP).
std::string set_event(const Config& cfg, const std::string& room, Event* ev) {
  const int64_t wall_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
  const int64_t steady_us = now_us();
  const auto lead_ms = static_cast<int64_t>((cfg.prequeue_s + 1) * 1000);
  ev->start_us = steady_us + lead_ms * 1000;
  std::string body = R"({"prequeue_at":")" + rfc3339(wall_ms) + R"(","start_at":")" +
                     rfc3339(wall_ms + lead_ms) + R"(","end_at":null,"shuffle":)" +
                     (cfg.shuffle ? "true" : "false") +
                     ",\"admit_per_second\":" + std::to_string(cfg.admit_per_second) + "}";
  Reply r = http_call(cfg, "PUT", "/v1/rooms/" + room + "/event", body, true);
  if (r.status != 201 && r.status != 200) {
    return "setting the event of room " + room + " failed: HTTP " + std::to_string(r.status) + " " +
           r.body + r.error;
  }
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(r.body, ec);
  const boost::json::value* c =
      ec || !v.is_object() ? nullptr : v.as_object().if_contains("seed_sha256");
  if (c == nullptr || !c->is_string() || c->get_string().size() != 64) {
    return "the event's answer has no seed_sha256: " + r.body;
  }
  ev->commitment = std::string(c->get_string());
  return "";
}

// A string field of a JSON object; empty if there is none.
std::string json_string_field(const std::string& body, const char* name) {
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(body, ec);
  const boost::json::value* f = ec || !v.is_object() ? nullptr : v.as_object().if_contains(name);
  return f != nullptr && f->is_string() ? std::string(f->get_string()) : std::string();
}

std::string fifth_name(size_t k) {
  static constexpr const char* kOrdinals[] = {"1st", "2nd", "3rd", "4th", "5th"};
  return std::string("wait after start, arrivals ") + kOrdinals[k] + " fifth";
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s", s);
  return buf;
}

// The line as the server should have let it in: the visitors who joined in the pre-queue in
// drawn (or join) order, then anyone who joined after the start, in join order. With a draw,
// also checks every pre-queue visitor's ref is in it exactly once and nothing else is.
std::vector<const VisitorRecord*> line_of(const Config& cfg, const Draw& draw,
                                          const std::vector<VisitorRecord>& records,
                                          RunResult* run) {
  std::vector<const VisitorRecord*> prequeue;
  std::vector<const VisitorRecord*> late;
  for (const VisitorRecord& r : records) {
    if (r.seq == kNoSeq) continue;  // never joined
    (r.joined_prequeue ? prequeue : late).push_back(&r);
  }
  auto by_seq = [](const VisitorRecord* a, const VisitorRecord* b) { return a->seq < b->seq; };
  std::sort(prequeue.begin(), prequeue.end(), by_seq);
  std::sort(late.begin(), late.end(), by_seq);
  if (cfg.shuffle) {
    std::unordered_map<uint64_t, size_t> place;  // ref -> place in the draw
    uint64_t twice = 0;
    for (size_t i = 0; i < draw.order.size(); ++i) {
      if (!place.emplace(ref_number(draw.order[i]), i).second) ++twice;
    }
    uint64_t missing = 0;
    std::unordered_set<uint64_t> visitors;
    for (const VisitorRecord* r : prequeue) {
      visitors.insert(r->ref);
      if (r->ref == 0 || !place.contains(r->ref)) ++missing;
    }
    uint64_t unknown = 0;
    for (const std::string& ref : draw.order) {
      if (!visitors.contains(ref_number(ref))) ++unknown;
    }
    run->checks.push_back(
        {"every visitor in the draw exactly once", missing == 0 && twice == 0 && unknown == 0,
         std::to_string(prequeue.size() - missing) + " of " + std::to_string(prequeue.size()) +
             " pre-queue visitors' refs drawn; " + std::to_string(twice) + " twice, " +
             std::to_string(unknown) + " not a visitor's"});
    auto drawn = [&](const VisitorRecord* r) {
      auto f = place.find(r->ref);
      return f == place.end() ? draw.order.size() : f->second;
    };
    std::stable_sort(
        prequeue.begin(), prequeue.end(),
        [&](const VisitorRecord* a, const VisitorRecord* b) { return drawn(a) < drawn(b); });
  }
  prequeue.insert(prequeue.end(), late.begin(), late.end());
  return prequeue;
}

// The draw: verified with a shuffle; without one the server must say there is none.
Draw check_draw(const Config& cfg, const Event& ev, const Reply& r, RunResult* run) {
  Draw draw;
  if (!cfg.shuffle) {
    const bool none = r.status == 404 && r.body.find("not_drawn") != std::string::npos;
    run->checks.push_back({"no draw without shuffle (404 not_drawn)", none,
                           "HTTP " + std::to_string(r.status) + " " + r.body.substr(0, 120)});
    return draw;
  }
  std::string why;
  if (r.status != 200 || !parse_draw(r.body, &draw)) {
    why =
        "GET event/draw: HTTP " + std::to_string(r.status) + " " + r.body.substr(0, 200) + r.error;
  } else {
    why = verify_draw(draw, ev.commitment, ev.refs_commitment);
    if (why.empty() && ev.refs_commitment.empty()) why = "GET event showed no refs_sha256";
  }
  run->checks.push_back({"draw verified", why.empty(),
                         why.empty() ? "SHA-256(seed) = commitment " + ev.commitment +
                                           ", the refs as committed at the start, " +
                                           std::to_string(draw.order.size()) + " refs in HMAC order"
                                     : why});
  run->metrics.push_back({"draw size", static_cast<double>(draw.order.size()), "refs"});
  return draw;
}

// Every visitor joined in the pre-queue, and was told so: WAITING, "position": null and
// "opens_at" on every join answered before the start.
void check_prequeue(const Config& cfg, const Event& ev, const std::vector<VisitorRecord>& records,
                    RunResult* run) {
  uint64_t in_prequeue = 0;
  uint64_t answered_before_start = 0;
  uint64_t told_prequeue = 0;  // of those, answered as a pre-queue answers
  for (const VisitorRecord& r : records) {
    if (r.joined_prequeue) ++in_prequeue;
    if (r.join_acked_us != 0 && r.join_acked_us < ev.start_us) {
      ++answered_before_start;
      if (r.joined_prequeue) ++told_prequeue;
    }
  }
  run->metrics.push_back({"visitors", static_cast<double>(cfg.users), "visitors"});
  run->metrics.push_back({"joined in the pre-queue", static_cast<double>(in_prequeue), "visitors"});
  run->checks.push_back({"pre-start answers: position null and opens_at",
                         told_prequeue == answered_before_start && answered_before_start > 0,
                         std::to_string(told_prequeue) + " of " +
                             std::to_string(answered_before_start) +
                             " joins answered before the start"});
  run->checks.push_back({"every visitor joined in the pre-queue", in_prequeue == cfg.users,
                         std::to_string(in_prequeue) + " of " + std::to_string(cfg.users)});
}

// Admission followed `line`: order violations with the transport's tolerance, and (with a
// draw) the truth checks' inversions counted in the line's order rather than join order.
void check_order(const Config& cfg, std::vector<const VisitorRecord*> line, Phase* phase,
                 RunResult* run) {
  if (cfg.shuffle) {
    std::vector<VisitorRecord> ranked;
    ranked.reserve(line.size());
    for (const VisitorRecord* r : line) {
      ranked.push_back(*r);
      ranked.back().seq = ranked.size();
    }
    phase->truth.inversions = check_truth(std::move(ranked), false).inversions;
  }
  std::erase_if(line, [](const VisitorRecord* r) { return r->allowed_seen_us == 0; });
  const bool polled = cfg.transport == Transport::kPoll;
  const int64_t tolerance = polled ? kPollToleranceUs : kSseToleranceUs;
  const Overtaking o = count_overtaken(line, polled, tolerance);
  run->metrics.push_back({"order tolerance", static_cast<double>(tolerance) / 1000, "ms"});
  run->metrics.push_back({"largest overtaking", static_cast<double>(o.worst_us) / 1000, "ms"});
  run->checks.push_back({"order violations", o.visitors == 0,
                         std::to_string(o.visitors) +
                             " visitors let in after someone behind them, by more than " +
                             std::to_string(tolerance / 1000) + " ms"});
}

// Everyone admitted, how long that took, and the wait after the start by arrival fifth: flat
// with a draw, rising in join order.
void add_waits(const Config& cfg, const Event& ev, const std::vector<VisitorRecord>& records,
               RunResult* run) {
  std::vector<const VisitorRecord*> by_arrival;
  by_arrival.reserve(records.size());
  uint64_t admitted = 0;
  int64_t last_admitted = ev.start_us;
  for (const VisitorRecord& r : records) {
    by_arrival.push_back(&r);
    if (r.allowed_seen_us != 0) {
      ++admitted;
      last_admitted = std::max(last_admitted, r.allowed_seen_us);
    }
  }
  run->checks.push_back({"every visitor admitted", admitted == cfg.users,
                         std::to_string(admitted) + " of " + std::to_string(cfg.users)});
  run->metrics.push_back(
      {"admission took", static_cast<double>(last_admitted - ev.start_us) / 1e6, "s"});
  std::sort(by_arrival.begin(), by_arrival.end(),
            [](const VisitorRecord* a, const VisitorRecord* b) { return a->due_us < b->due_us; });
  const std::vector<double> waits = waits_after_start(by_arrival, ev.start_us);
  const std::array<ArrivalFifth, 5> fifths = fifths_of(waits);
  std::string means;
  for (size_t k = 0; k < fifths.size(); ++k) {
    run->metrics.push_back({fifth_name(k) + " (mean)", fifths[k].mean_s, "s"});
    run->metrics.push_back({fifth_name(k) + " (p50)", fifths[k].p50_s, "s"});
    means += (k == 0 ? "" : ", ") + seconds_text(fifths[k].mean_s);
  }
  if (!cfg.shuffle) {
    run->checks.push_back({"wait rises with arrival fifth", waits_rise(fifths), "means " + means});
    return;
  }
  // Means closer than the order tolerance are too close to tell apart.
  const int64_t tolerance = cfg.transport == Transport::kPoll ? kPollToleranceUs : kSseToleranceUs;
  const Flatness f = flatness(waits, static_cast<double>(tolerance) / 1e6);
  char ratio[96];
  std::snprintf(ratio, sizeof ratio, "; max/min %.2f", f.ratio);
  std::string detail = "means " + means + ratio;
  if (f.chance > 0) {
    std::snprintf(ratio, sizeof ratio, " (chance alone: up to %.2f)", f.chance);
    detail += ratio;
  }
  run->checks.push_back({"wait flat across arrival fifths (max mean <= 1.5x min)", f.flat, detail});
}

void add_drop_results(const Config& cfg, const Event& ev, const Reply& draw_reply, PhaseOutput* out,
                      RunResult* run) {
  check_prequeue(cfg, ev, out->records, run);
  const Draw draw = check_draw(cfg, ev, draw_reply, run);
  check_order(cfg, line_of(cfg, draw, out->records, run), &out->phase, run);
  add_waits(cfg, ev, out->records, run);
}

}  // namespace

int run_drop(const Config& cfg) {
  std::string room = room_for(cfg);
  if (std::string e = create_room(cfg, room, "auto"); !e.empty()) {
    return cannot_run(e);
  }
  Event ev;
  if (std::string e = set_event(cfg, room, &ev); !e.empty()) {
    delete_room(cfg, room);
    return cannot_run(e);
  }
  PhaseSpec spec;
  spec.visitors = cfg.users;
  // The pre-queue, twice the time the rate needs, and room for slow answers.
  spec.max_seconds = cfg.duration_s > 0 ? cfg.duration_s
                                        : cfg.prequeue_s + 1 +
                                              2.0 * static_cast<double>(cfg.users) /
                                                  std::max(1u, cfg.admit_per_second) +
                                              2 * cfg.timeout_s + 30;
  PhaseOutput out;
  std::string err = run_phase(cfg, base_plan(cfg, room), spec, &out);
  // Anyone may read the draw; it goes with the room, so read it first: the event (with its
  // commitment to the set of refs, from the start on), then the order.
  Reply event = http_call(cfg, "GET", "/v1/rooms/" + room + "/event", "", false);
  ev.refs_commitment = json_string_field(event.body, "refs_sha256");
  Reply draw = http_call(cfg, "GET", "/v1/rooms/" + room + "/event/draw", "", false);
  RunResult run = new_result(cfg);
  if (err.empty()) check_server_agrees(cfg, room, out.phase, &run);
  delete_room(cfg, room);
  if (!err.empty()) {
    return cannot_run(err);
  }
  add_drop_results(cfg, ev, draw, &out, &run);
  add_phase(&run, std::move(out), true, cfg.shuffle ? "drawn order" : "join order");
  return finish(cfg, room, &run);
}

}  // namespace anteroom::loadgen
