#include "loadgen/config.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <string_view>

namespace anteroom::loadgen {

const char* scenario_name(Scenario s) {
  switch (s) {
    case Scenario::kSeedVisit:
      return "seed-visit";
    case Scenario::kSurge:
      return "surge";
    case Scenario::kScheduled:
      return "scheduled";
    case Scenario::kProtect:
      return "protect";
    case Scenario::kHold:
      return "hold";
    case Scenario::kClosed:
      return "closed";
    case Scenario::kOrigin:
      return "origin";
  }
  return "unknown";
}

const char* transport_name(Transport t) {
  switch (t) {
    case Transport::kPoll:
      return "poll";
    case Transport::kSse:
      return "sse";
    case Transport::kWs:
      return "ws";
  }
  return "unknown";
}

namespace {

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

bool parse_u64(std::string_view s, uint64_t* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

bool parse_double(std::string_view s, double* out) {
  std::string copy(s);
  char* end = nullptr;
  *out = std::strtod(copy.c_str(), &end);
  return !copy.empty() && end == copy.c_str() + copy.size() && std::isfinite(*out);
}

// "http://host:port/path", "host:port" or ":port".
std::string parse_target(std::string_view s, Config* c) {
  if (s.starts_with("http://")) s.remove_prefix(7);
  if (s.starts_with("https://")) return "--target: https is not supported (use nginx's plain port)";
  std::string_view hostport = s.substr(0, s.find('/'));
  if (hostport.size() < s.size()) c->path = std::string(s.substr(hostport.size()));
  size_t colon = hostport.rfind(':');
  if (colon == std::string_view::npos) return "--target needs a port, as in 127.0.0.1:8080";
  uint64_t port = 0;
  if (!parse_u64(hostport.substr(colon + 1), &port) || port == 0 || port > 65535) {
    return "--target: bad port in '" + std::string(hostport) + "'";
  }
  if (colon > 0) c->target_host = std::string(hostport.substr(0, colon));
  c->target_port = static_cast<uint16_t>(port);
  if (!c->target_host.starts_with("127.")) {
    return "--target must be a loopback address (127.0.0.0/8): load is only aimed at this machine";
  }
  return "";
}

void apply_scenario_defaults(Config* c) {
  switch (c->scenario) {
    case Scenario::kSeedVisit:
      c->users = 20;
      c->capacity = 10;
      c->transport = Transport::kWs;
      break;
    case Scenario::kSurge:
      break;
    case Scenario::kScheduled:
      c->transport = Transport::kSse;
      c->capacity = 0;
      c->admit_per_second = 100;
      c->stay_s = 0;
      break;
    case Scenario::kProtect:
      c->capacity = 0;  // set to the origin's capacity below unless given
      c->abandon = 0;
      c->stay_s = 0;  // the origin's service time is the stay
      break;
    case Scenario::kHold:
      c->transport = Transport::kSse;
      c->capacity = 0;
      c->abandon = 0;
      c->duration_s = 5;
      break;
    case Scenario::kClosed:
      c->duration_s = 10;
      break;
    case Scenario::kOrigin:
      break;
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> Config::describe() const {
  std::vector<std::pair<std::string, std::string>> d;
  d.emplace_back("scenario", scenario_name(scenario));
  d.emplace_back("target", target_host + ":" + std::to_string(target_port));
  if (scenario == Scenario::kClosed) {
    d.emplace_back("path", path);
    d.emplace_back("connections", std::to_string(connections));
  } else {
    d.emplace_back("room", room);
    d.emplace_back("users", std::to_string(users));
    d.emplace_back("transport", transport_name(transport));
    d.emplace_back("arrival_rate", arrival_rate == 0 ? "all at once" : fmt(arrival_rate) + "/s");
    d.emplace_back("capacity", std::to_string(capacity));
    d.emplace_back("admit_per_second", std::to_string(admit_per_second));
    d.emplace_back("stay_s", fmt(stay_s));
    d.emplace_back("abandon", fmt(abandon));
    d.emplace_back("use", use == UseVia::kGate ? "gate" : "verify");
    d.emplace_back("heartbeat_timeout_s", std::to_string(heartbeat_timeout_s));
  }
  if (scenario == Scenario::kProtect) {
    d.emplace_back("origin_capacity", std::to_string(origin_capacity));
    d.emplace_back("origin_service_ms", fmt(origin_service_ms));
  }
  d.emplace_back("duration_s", fmt(duration_s));
  d.emplace_back("timeout_s", fmt(timeout_s));
  d.emplace_back("threads", std::to_string(threads));
  d.emplace_back("processes", std::to_string(processes));
  d.emplace_back("sources", std::to_string(sources));
  return d;
}

std::string parse_config(int argc, const char* const* argv, Config* c) {
  *c = Config{};
  // The command line goes into reports: the admin key does not.
  for (int i = 0; i < argc; ++i) {
    std::string_view a = argv[i];
    if (i > 0) c->command += ' ';
    if (i > 0 && std::string_view(argv[i - 1]) == "--admin-key") {
      c->command += "...";
    } else if (a.starts_with("--admin-key=")) {
      c->command += "--admin-key=...";
    } else {
      c->command += a;
    }
  }
  if (argc < 2)
    return "missing scenario: one of seed-visit, surge, scheduled, protect, hold, closed";
  std::string_view first = argv[1];
  if (first == "--help" || first == "-h" || first == "help") {
    c->help = true;
    return "";
  }
  static const std::map<std::string_view, Scenario> kScenarios = {
      {"seed-visit", Scenario::kSeedVisit},
      {"surge", Scenario::kSurge},
      {"scheduled", Scenario::kScheduled},
      {"protect", Scenario::kProtect},
      {"hold", Scenario::kHold},
      {"closed", Scenario::kClosed},
      {"origin", Scenario::kOrigin}};
  auto sc = kScenarios.find(first);
  if (sc == kScenarios.end()) return "unknown scenario '" + std::string(first) + "' (see --help)";
  c->scenario = sc->second;
  apply_scenario_defaults(c);
  // Read once while parsing the command line, before any thread exists.
  if (const char* key = std::getenv("ANTEROOM_ADMIN_KEY")) {  // NOLINT(concurrency-mt-unsafe)
    c->admin_key = key;
  }

  bool capacity_given = false;
  auto u64 = [](uint64_t* dst, uint64_t lo, uint64_t hi) {
    return [=](std::string_view v) -> std::string {
      uint64_t x = 0;
      if (!parse_u64(v, &x) || x < lo || x > hi) {
        return "must be a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
      }
      *dst = x;
      return "";
    };
  };
  auto u32 = [](uint32_t* dst, uint64_t lo, uint64_t hi) {
    return [=](std::string_view v) -> std::string {
      uint64_t x = 0;
      if (!parse_u64(v, &x) || x < lo || x > hi) {
        return "must be a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
      }
      *dst = static_cast<uint32_t>(x);
      return "";
    };
  };
  auto i32 = [](int* dst, int lo, int hi) {
    return [=](std::string_view v) -> std::string {
      uint64_t x = 0;
      if (!parse_u64(v, &x) || x < static_cast<uint64_t>(lo) || x > static_cast<uint64_t>(hi)) {
        return "must be a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
      }
      *dst = static_cast<int>(x);
      return "";
    };
  };
  auto dbl = [](double* dst, double lo, double hi) {
    return [=](std::string_view v) -> std::string {
      double x = 0;
      if (!parse_double(v, &x) || x < lo || x > hi) {
        return "must be a number from " + fmt(lo) + " to " + fmt(hi);
      }
      *dst = x;
      return "";
    };
  };
  using Setter = std::function<std::string(std::string_view)>;
  uint64_t pid = 0;
  const std::map<std::string_view, Setter> flags = {
      {"--target", [c](std::string_view v) { return parse_target(v, c); }},
      {"--room",
       [c](std::string_view v) -> std::string {
         if (v.empty() || v.size() > 64 ||
             v.find_first_not_of(
                 "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") !=
                 std::string_view::npos) {
           return "must be 1-64 of A-Z a-z 0-9 _ -";
         }
         c->room = std::string(v);
         return "";
       }},
      {"--admin-key",
       [c](std::string_view v) {
         c->admin_key = std::string(v);
         return std::string();
       }},
      {"--users", u64(&c->users, 1, 1000000)},
      {"--transport",
       [c](std::string_view v) -> std::string {
         if (v == "poll")
           c->transport = Transport::kPoll;
         else if (v == "sse")
           c->transport = Transport::kSse;
         else if (v == "ws")
           c->transport = Transport::kWs;
         else
           return "must be poll, sse or ws";
         return "";
       }},
      {"--arrival-rate", dbl(&c->arrival_rate, 0, 1e7)},
      {"--stay", dbl(&c->stay_s, 0, 3600)},
      {"--abandon", dbl(&c->abandon, 0, 1)},
      {"--patience", dbl(&c->patience_s, 0.01, 3600)},
      {"--use",
       [c](std::string_view v) -> std::string {
         if (v == "gate")
           c->use = UseVia::kGate;
         else if (v == "verify")
           c->use = UseVia::kVerify;
         else
           return "must be gate or verify";
         return "";
       }},
      {"--ws-check", dbl(&c->ws_check_s, 0.05, 3600)},
      {"--capacity",
       [&, c](std::string_view v) {
         capacity_given = true;
         return u32(&c->capacity, 0, 10000000)(v);
       }},
      {"--admit-per-second", u32(&c->admit_per_second, 0, 10000000)},
      {"--heartbeat-timeout", u32(&c->heartbeat_timeout_s, 1, 86400)},
      {"--allowed-ttl", u32(&c->allowed_ttl_s, 1, 86400)},
      {"--session-ttl", u32(&c->session_ttl_s, 1, 86400)},
      {"--origin-capacity", u32(&c->origin_capacity, 1, 100000)},
      {"--origin-service-ms", dbl(&c->origin_service_ms, 0, 60000)},
      {"--origin-port",
       [c](std::string_view v) -> std::string {
         uint64_t p = 0;
         if (!parse_u64(v, &p) || p > 65535) return "must be a port number";
         c->origin_port = static_cast<uint16_t>(p);
         return "";
       }},
      {"--server-pid",
       [&, c](std::string_view v) {
         std::string e = u64(&pid, 1, 1u << 30)(v);
         c->server_pid = static_cast<int64_t>(pid);
         return e;
       }},
      {"--duration", dbl(&c->duration_s, 0, 86400)},
      {"--timeout", dbl(&c->timeout_s, 0.01, 3600)},
      {"--connections", u32(&c->connections, 1, 1000000)},
      {"--threads", i32(&c->threads, 1, 256)},
      {"--processes", i32(&c->processes, 1, 64)},
      {"--sources", i32(&c->sources, 1, 250)},
      {"--out",
       [c](std::string_view v) -> std::string {
         if (v.empty()) return "must not be empty";
         c->out = std::string(v);
         return "";
       }},
      {"--seed", u64(&c->seed, 0, UINT64_MAX)},
  };
  for (int i = 2; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      c->help = true;
      return "";
    }
    if (arg == "--keep-room") {
      c->keep_room = true;
      continue;
    }
    if (arg == "--quiet") {
      c->progress = false;
      continue;
    }
    std::string_view name = arg;
    std::string_view value;
    bool has_value = false;
    if (size_t eq = arg.find('='); eq != std::string_view::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    }
    auto f = flags.find(name);
    if (f == flags.end()) return "unknown option '" + std::string(name) + "' (see --help)";
    if (!has_value) {
      if (i + 1 >= argc) return std::string(name) + " needs a value";
      value = argv[++i];
    }
    if (std::string e = f->second(value); !e.empty()) {
      return std::string(name) + " '" + std::string(value) + "': " + e;
    }
  }
  if (c->scenario == Scenario::kProtect && !capacity_given) c->capacity = c->origin_capacity;
  if (c->scenario == Scenario::kSeedVisit && (c->users != 20 || c->capacity != 10)) {
    return "seed-visit is seed 000's fixed script: capacity 10 and 20 users (drop "
           "--users/--capacity)";
  }
  bool needs_room = c->scenario != Scenario::kClosed && c->scenario != Scenario::kOrigin;
  if (needs_room && c->admin_key.empty()) {
    return "this scenario creates its room: give --admin-key or set ANTEROOM_ADMIN_KEY";
  }
  if (c->scenario == Scenario::kScheduled && c->admit_per_second == 0) {
    return "scheduled admits a batch each second: --admit-per-second must be at least 1";
  }
  if (c->scenario == Scenario::kHold && c->transport == Transport::kPoll) {
    return "hold keeps streams open: --transport must be sse or ws";
  }
  return "";
}

std::string usage() {
  return R"(anteroom-loadgen SCENARIO [options]: drives anteroom the way real visitors do.

Scenarios (docs/loadgen.md):
  seed-visit  seed 000's scripted WebSocket visit; PASS or FAIL for every step
  surge       --users N arrive at once (or at --arrival-rate) and go through the whole visit
  scheduled   seed 001: an auto room admitting --admit-per-second each second; visitors on SSE
  protect     a demo origin with --origin-capacity, hit directly and then through anteroom
  hold        open --users SSE or WebSocket sessions, keep them, measure memory per session
              (--server-pid) and how long one change takes to reach every session
  closed      closed model: --connections busy keep-alive connections repeating GET --target
              path for --duration seconds (like wrk)
  origin      run only the demo origin on --origin-port (for trying things by hand)

Target and room:
  --target HOST:PORT[/path]  the server (default 127.0.0.1:8080; loopback only)
  --admin-key KEY            to create the room (or ANTEROOM_ADMIN_KEY)
  --room NAME                default: a fresh room lg-<scenario>-<random>, deleted afterwards
  --keep-room                leave the room in place after the run
  --capacity N  --admit-per-second N  --heartbeat-timeout S  --allowed-ttl S  --session-ttl S
Visitors:
  --users N                  how many (surge 1000, seed-visit 20)
  --transport poll|sse|ws    how they wait (surge poll, scheduled and hold sse)
  --arrival-rate R           per second; 0 (default) = all at once
  --stay S                   admitted visitors stay S seconds on average (0.5x-1.5x), then leave
  --abandon F                share who give up while waiting, closing the tab (default 0.02)
  --patience S               abandoners give up at a random moment within S seconds (10)
  --use gate|verify          how the admission is used (default gate)
  --ws-check S               WebSocket visitors send CHECK_QUEUE_STATUS every S seconds (5)
protect:  --origin-capacity N (50)  --origin-service-ms MS (200)  --origin-port P
hold:     --server-pid PID  --duration S (how long to hold, 5)
closed:   --connections N (100)  --duration S (10)
Machinery:
  --threads N      per process (default: cores)      --timeout S   per request (30)
  --processes N    default: one per 18,000 sessions  --sources N   127.0.0.x source addresses
                                                      (default: one per 25,000 sessions)
  --out PREFIX     writes PREFIX.json, PREFIX.md, PREFIX.html
                   (default results/runs/<scenario>-<users>-<transport>)
  --seed N  --quiet
Exit status: 0 every check passed, 1 a check failed, 2 bad usage or the run could not start.
)";
}

}  // namespace anteroom::loadgen
