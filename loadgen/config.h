// The loadgen's settings: one struct for every scenario, filled from the command line (and
// ANTEROOM_ADMIN_KEY), with each scenario's defaults applied and every value checked.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace anteroom::loadgen {

enum class Scenario {
  kSeedVisit,
  kSurge,
  kScheduled,
  kProtect,
  kHold,
  kClosed,
  kOrigin,
  kDrop,
  kBots,
  kSite
};
// bots: each human joins from an address of its own (127.1.x.y), at most this many.
inline constexpr uint64_t kMaxBotsHumans = 60000;

enum class Transport { kPoll, kSse, kWs };
enum class UseVia { kGate, kVerify };

const char* scenario_name(Scenario s);
const char* transport_name(Transport t);
// A number as the loadgen prints it (printf's %g).
std::string short_number(double v);
// The command line as a run's report prints it, the --admin-key value replaced by "...".
std::string command_line(int argc, const char* const* argv);

struct Config {
  Scenario scenario = Scenario::kSurge;
  std::string target_host = "127.0.0.1";  // the server (or nginx, or the origin)
  uint16_t target_port = 8080;
  // Every --target (a comma-separated list: cluster nodes); the first is target_host:port.
  // Visitors are spread over them; one whose node goes away moves to the next.
  std::vector<std::pair<std::string, uint16_t>> targets;
  std::string path = "/";  // closed model: the request it repeats
  std::string room;        // empty: a fresh room per run ("lg-<scenario>-<random>")
  bool keep_room = false;  // leave the room behind after the run
  std::string admin_key;   // --admin-key or ANTEROOM_ADMIN_KEY

  // Visitors.
  uint64_t users = 1000;
  Transport transport = Transport::kPoll;
  double arrival_rate = 0;  // visitors per second; 0: all arrive at once
  double stay_s = 1.0;      // admitted visitors stay this long on average (0.5x-1.5x)
  double abandon = 0.02;    // share of visitors who give up while waiting
  double patience_s = 10;   // abandoners give up at a random time within this
  UseVia use = UseVia::kGate;
  double ws_check_s = 5;  // WebSocket visitors ask CHECK_QUEUE_STATUS this often

  // The room the scenario creates.
  uint32_t capacity = 100;
  uint32_t admit_per_second = 0;
  uint32_t heartbeat_timeout_s = 30;
  uint32_t allowed_ttl_s = 60;
  uint32_t session_ttl_s = 120;

  // protect: the demo origin.
  uint32_t origin_capacity = 50;
  double origin_service_ms = 200;
  uint16_t origin_port = 0;  // 0: any free port

  // hold.
  int64_t server_pid = 0;  // the server's process, for memory per session

  // drop: a scheduled event whose pre-queue lasts this long; visitors arrive spread over it.
  double prequeue_s = 10;
  bool shuffle = true;  // the pre-queue is drawn (true) or keeps join order (false)

  // bots: --bots addresses hammer joins, each over --bot-connections connections, while the
  // --users humans (one address each) arrive at --arrival-rate.
  uint32_t bots = 10;
  uint32_t bot_connections = 4;
  double bot_solve = 0.5;  // share of the bot addresses that solve the proof of work
  int bot_threads = 1;     // the bots' process's threads (solving is CPU work)
  bool baseline = true;    // first the humans alone, for their wait without bots
  // The room's defences (room fields; also set in the other scenarios' rooms when given).
  uint32_t ip_joins_per_minute = 0;  // 0: off
  int pow_difficulty = 0;            // bits, 0: off; kPowAuto: "auto"
  static constexpr int kPowAuto = -1;

  // site: a protected site behind a proxy (--target is the proxy): its page, the assets the
  // page loads (bypassed at the gate), and the XHR it makes; first --before-users visitors
  // at a pace the room admits at once, then --users at --arrival-rate (0: all at once).
  std::string site_page = "/store/";
  std::vector<std::string> site_assets = {"/static/site.css"};
  std::string site_xhr = "/store/api/cart";
  uint64_t before_users = 0;  // 0: --users / 10, at least 10
  bool site_bypass = true;    // --no-bypass: the room without its bypass rule (the check fails)

  // Machinery.
  double duration_s = 0;       // closed/hold: how long; others: a limit (0: scenario default)
  double timeout_s = 30;       // per request or connect
  uint32_t connections = 100;  // closed model
  int threads = 0;             // per process; 0: the number of cores
  int processes = 0;           // 0: as many as the sessions need (18,000 each)
  int sources = 0;             // source addresses 127.0.0.x; 0: as many as the sessions need
  std::string out;             // report prefix; empty: results/runs/<scenario>-...
  bool progress = true;
  uint64_t seed = 0;    // 0: random
  std::string command;  // the command line, for the report
  bool help = false;

  // The resolved settings in display order, for the report.
  std::vector<std::pair<std::string, std::string>> describe() const;
};

// Sets the scenario's defaults into *c (config_defaults.cc); parse_config does it before it
// reads the options.
void apply_scenario_defaults(Config* c);

// Parses argv (argv[1] is the scenario). Returns an empty string, or a clear one-line error;
// on error `config` may be partly filled and must not be used.
std::string parse_config(int argc, const char* const* argv, Config* config);

// What --help prints.
std::string usage();

}  // namespace anteroom::loadgen
