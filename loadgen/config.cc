#include "loadgen/config.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <string_view>
#include <utility>
#include <vector>

namespace anteroom::loadgen {

namespace {

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

// One of --target's: "http://host:port/path", "host:port", "[v6]:port" or ":port". The
// host may be any name or address; the path counts from the first target only.
std::string parse_one_target(std::string_view s, bool first, Config* c) {
  if (s.starts_with("http://")) s.remove_prefix(7);
  if (s.starts_with("https://")) return "--target: https is not supported (use nginx's plain port)";
  std::string_view hostport = s.substr(0, s.find('/'));
  if (first && hostport.size() < s.size()) c->path = std::string(s.substr(hostport.size()));
  size_t colon = hostport.rfind(':');
  if (colon == std::string_view::npos) return "--target needs a port, as in 127.0.0.1:8080";
  uint64_t port = 0;
  if (!parse_u64(hostport.substr(colon + 1), &port) || port == 0 || port > 65535) {
    return "--target: bad port in '" + std::string(hostport) + "'";
  }
  std::string host = colon > 0 ? std::string(hostport.substr(0, colon)) : "127.0.0.1";
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) return "--target: empty host in '" + std::string(hostport) + "'";
  c->targets.emplace_back(host, static_cast<uint16_t>(port));
  return "";
}

// --target A[,B,...]: the nodes of a cluster, or one server.
std::string parse_target(std::string_view s, Config* c) {
  c->targets.clear();
  size_t start = 0;
  for (;;) {
    const size_t comma = s.find(',', start);
    std::string_view one =
        s.substr(start, comma == std::string_view::npos ? s.npos : comma - start);
    if (std::string why = parse_one_target(one, c->targets.empty(), c); !why.empty()) return why;
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  c->target_host = c->targets.front().first;
  c->target_port = c->targets.front().second;
  return "";
}

// Takes one option's value into `c`: an empty string, or why the value is refused.
using Setter = std::function<std::string(std::string_view value, Config* c)>;

// A whole number from `lo` to `hi`.
template <typename T>
Setter whole_number(T Config::*field, uint64_t lo, uint64_t hi) {
  return [=](std::string_view v, Config* c) -> std::string {
    uint64_t x = 0;
    if (!parse_u64(v, &x) || x < lo || x > hi) {
      return "must be a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
    }
    c->*field = static_cast<T>(x);
    return "";
  };
}

// A number from `lo` to `hi`.
Setter number(double Config::*field, double lo, double hi) {
  return [=](std::string_view v, Config* c) -> std::string {
    double x = 0;
    if (!parse_double(v, &x) || x < lo || x > hi) {
      return "must be a number from " + short_number(lo) + " to " + short_number(hi);
    }
    c->*field = x;
    return "";
  };
}

// One of the named values; `refusal` says which names there are.
template <typename T>
Setter one_of(T Config::*field, std::vector<std::pair<std::string_view, T>> names,
              const char* refusal) {
  return [field, names = std::move(names), refusal](std::string_view v, Config* c) {
    for (const auto& [name, value] : names) {
      if (v == name) {
        c->*field = value;
        return std::string();
      }
    }
    return std::string(refusal);
  };
}

// A path on the site ("/..."; `may_be_empty`: "" for none).
Setter site_path(std::string Config::*field, bool may_be_empty) {
  return [=](std::string_view v, Config* c) -> std::string {
    if (!(v.starts_with('/') || (may_be_empty && v.empty())) ||
        v.find_first_of(" \r\n") != std::string_view::npos) {
      return "must be a path on the site (\"/...\")";
    }
    c->*field = std::string(v);
    return "";
  };
}

std::string site_assets(std::string_view v, Config* c) {
  c->site_assets.clear();
  while (!v.empty()) {
    const std::string_view one = v.substr(0, v.find(','));
    if (!one.starts_with('/') || one.find_first_of(" \r\n") != std::string_view::npos) {
      return "must be paths on the site, comma-separated";
    }
    c->site_assets.emplace_back(one);
    v.remove_prefix(std::min(v.size(), one.size() + 1));
  }
  return "";
}

std::string parse_room(std::string_view v, Config* c) {
  if (v.empty() || v.size() > 64 ||
      v.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") !=
          std::string_view::npos) {
    return "must be 1-64 of A-Z a-z 0-9 _ -";
  }
  c->room = std::string(v);
  return "";
}

std::string parse_origin_port(std::string_view v, Config* c) {
  uint64_t p = 0;
  if (!parse_u64(v, &p) || p > 65535) return "must be a port number";
  c->origin_port = static_cast<uint16_t>(p);
  return "";
}

std::string parse_pow_difficulty(std::string_view v, Config* c) {
  uint64_t bits = 0;
  if (v == "auto") {
    c->pow_difficulty = Config::kPowAuto;
  } else if (parse_u64(v, &bits) && bits <= 32) {
    c->pow_difficulty = static_cast<int>(bits);
  } else {
    return "must be a whole number of bits from 0 to 32, or auto";
  }
  return "";
}

// Every option that takes a value (--keep-room, --quiet, --shuffle, --no-shuffle, --baseline,
// --no-baseline, --no-bypass and --help take none).
const std::map<std::string_view, Setter>& options_with_values() {
  static const std::map<std::string_view, Setter> kOptions = {
      {"--target", parse_target},
      {"--site-page", site_path(&Config::site_page, false)},
      {"--site-xhr", site_path(&Config::site_xhr, true)},
      {"--site-assets", site_assets},
      {"--before-users", whole_number(&Config::before_users, 1, 1000000)},
      {"--room", parse_room},
      {"--admin-key",
       [](std::string_view v, Config* c) {
         c->admin_key = std::string(v);
         return std::string();
       }},
      {"--users", whole_number(&Config::users, 1, 1000000)},
      {"--transport",
       one_of(&Config::transport,
              {{"poll", Transport::kPoll}, {"sse", Transport::kSse}, {"ws", Transport::kWs}},
              "must be poll, sse or ws")},
      {"--arrival-rate", number(&Config::arrival_rate, 0, 1e7)},
      {"--stay", number(&Config::stay_s, 0, 3600)},
      {"--abandon", number(&Config::abandon, 0, 1)},
      {"--patience", number(&Config::patience_s, 0.01, 3600)},
      {"--use", one_of(&Config::use, {{"gate", UseVia::kGate}, {"verify", UseVia::kVerify}},
                       "must be gate or verify")},
      {"--ws-check", number(&Config::ws_check_s, 0.05, 3600)},
      {"--capacity", whole_number(&Config::capacity, 0, 10000000)},
      {"--admit-per-second", whole_number(&Config::admit_per_second, 0, 10000000)},
      {"--heartbeat-timeout", whole_number(&Config::heartbeat_timeout_s, 1, 86400)},
      {"--allowed-ttl", whole_number(&Config::allowed_ttl_s, 1, 86400)},
      {"--session-ttl", whole_number(&Config::session_ttl_s, 1, 86400)},
      {"--origin-capacity", whole_number(&Config::origin_capacity, 1, 100000)},
      {"--origin-service-ms", number(&Config::origin_service_ms, 0, 60000)},
      {"--origin-port", parse_origin_port},
      {"--server-pid", whole_number(&Config::server_pid, 1, 1u << 30)},
      {"--prequeue-s", number(&Config::prequeue_s, 0.5, 86400)},
      {"--duration", number(&Config::duration_s, 0, 86400)},
      {"--timeout", number(&Config::timeout_s, 0.01, 3600)},
      {"--connections", whole_number(&Config::connections, 1, 1000000)},
      {"--threads", whole_number(&Config::threads, 1, 256)},
      {"--processes", whole_number(&Config::processes, 1, 64)},
      {"--sources", whole_number(&Config::sources, 1, 250)},
      {"--out",
       [](std::string_view v, Config* c) -> std::string {
         if (v.empty()) return "must not be empty";
         c->out = std::string(v);
         return "";
       }},
      {"--seed", whole_number(&Config::seed, 0, UINT64_MAX)},
      {"--bots", whole_number(&Config::bots, 0, 250)},
      {"--bot-connections", whole_number(&Config::bot_connections, 1, 1000)},
      {"--bot-solve", number(&Config::bot_solve, 0, 1)},
      {"--bot-threads", whole_number(&Config::bot_threads, 1, 64)},
      {"--ip-joins-per-minute", whole_number(&Config::ip_joins_per_minute, 0, 1000000)},
      {"--pow-difficulty", parse_pow_difficulty},
  };
  return kOptions;
}

// The options after the scenario (argv[2] on), as "--name value" or "--name=value"; the first
// bad one is the error. Stops at --help, setting c->help. `capacity_given` is set when --capacity
// is among them: protect's capacity defaults to the origin's otherwise.
std::string parse_options(int argc, const char* const* argv, Config* c, bool* capacity_given) {
  const std::map<std::string_view, Setter>& options = options_with_values();
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
    if (arg == "--shuffle" || arg == "--no-shuffle") {
      c->shuffle = arg == "--shuffle";
      continue;
    }
    if (arg == "--baseline" || arg == "--no-baseline") {
      c->baseline = arg == "--baseline";
      continue;
    }
    if (arg == "--no-bypass") {
      c->site_bypass = false;
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
    auto f = options.find(name);
    if (f == options.end()) return "unknown option '" + std::string(name) + "' (see --help)";
    if (!has_value) {
      if (i + 1 >= argc) return std::string(name) + " needs a value";
      value = argv[++i];
    }
    if (name == "--capacity") *capacity_given = true;
    if (std::string e = f->second(value, c); !e.empty()) {
      return std::string(name) + " '" + std::string(value) + "': " + e;
    }
  }
  return "";
}

// The settings each scenario cannot run without, checked once every option is read.
std::string check_scenario_settings(const Config& c) {
  if (c.scenario == Scenario::kSeedVisit && (c.users != 20 || c.capacity != 10)) {
    return "seed-visit is seed 000's fixed script: capacity 10 and 20 users (drop "
           "--users/--capacity)";
  }
  bool needs_room = c.scenario != Scenario::kClosed && c.scenario != Scenario::kOrigin;
  if (needs_room && c.admin_key.empty()) {
    return "this scenario creates its room: give --admin-key or set ANTEROOM_ADMIN_KEY";
  }
  if (c.scenario == Scenario::kScheduled && c.admit_per_second == 0) {
    return "scheduled admits a batch each second: --admit-per-second must be at least 1";
  }
  if (c.scenario == Scenario::kHold && c.transport == Transport::kPoll) {
    return "hold keeps streams open: --transport must be sse or ws";
  }
  if (c.scenario == Scenario::kDrop && c.transport == Transport::kWs) {
    return "drop checks every visitor's ref, which seed 000's WebSocket messages do not carry: "
           "--transport must be poll or sse";
  }
  if (c.scenario == Scenario::kDrop && c.arrival_rate != 0) {
    return "drop spreads the arrivals over the pre-queue: give --prequeue-s, not --arrival-rate";
  }
  if (c.scenario != Scenario::kBots && (c.pow_difficulty != 0 || c.ip_joins_per_minute != 0)) {
    return "--pow-difficulty and --ip-joins-per-minute are the bots scenario's";
  }
  if (c.scenario == Scenario::kBots) {
    if (c.transport == Transport::kWs) {
      return "bots: humans join over HTTP with their proof of work: --transport must be poll or "
             "sse";
    }
    if (c.arrival_rate <= 0) {
      return "bots: humans arrive at a normal pace: --arrival-rate must be above 0";
    }
    if (c.users > kMaxBotsHumans) {
      return "bots: each human has an address of its own: --users at most " +
             std::to_string(kMaxBotsHumans);
    }
  }
  return "";
}

}  // namespace

std::string parse_config(int argc, const char* const* argv, Config* c) {
  *c = Config{};
  c->command = command_line(argc, argv);
  if (argc < 2)
    return "missing scenario: one of seed-visit, surge, scheduled, protect, hold, drop, bots, "
           "site, closed";
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
      {"origin", Scenario::kOrigin},
      {"drop", Scenario::kDrop},
      {"bots", Scenario::kBots},
      {"site", Scenario::kSite}};
  auto sc = kScenarios.find(first);
  if (sc == kScenarios.end()) return "unknown scenario '" + std::string(first) + "' (see --help)";
  c->scenario = sc->second;
  apply_scenario_defaults(c);
  // Read once while parsing the command line, before any thread exists.
  if (const char* key = std::getenv("ANTEROOM_ADMIN_KEY")) {  // NOLINT(concurrency-mt-unsafe)
    c->admin_key = key;
  }
  bool capacity_given = false;
  if (std::string e = parse_options(argc, argv, c, &capacity_given); !e.empty() || c->help) {
    return e;
  }
  if (c->scenario == Scenario::kProtect && !capacity_given) c->capacity = c->origin_capacity;
  std::string refused = check_scenario_settings(*c);
  if (refused.empty() && c->scenario == Scenario::kDrop) {
    // Arrivals spread evenly over the pre-queue; by default the line is let in over about 5 s,
    // long enough for the wait to show whether it depends on when a visitor arrived.
    c->arrival_rate = static_cast<double>(c->users) / c->prequeue_s;
    if (c->admit_per_second == 0) {
      c->admit_per_second = static_cast<uint32_t>(std::max<uint64_t>(1, c->users / 5));
    }
  }
  if (refused.empty() && c->scenario == Scenario::kBots && c->admit_per_second == 0) {
    // A quarter above the humans' pace: alone they hardly wait, and every bot ticket takes an
    // admission one of them could have had.
    c->admit_per_second = static_cast<uint32_t>(std::max(1.0, std::ceil(1.25 * c->arrival_rate)));
  }
  return refused;
}

}  // namespace anteroom::loadgen
