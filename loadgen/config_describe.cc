// The loadgen's names for its scenarios and transports, and a run as it prints it: the
// command line (the admin key hidden) and the settings (Config::describe).
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "loadgen/config.h"

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
    case Scenario::kDrop:
      return "drop";
    case Scenario::kBots:
      return "bots";
    case Scenario::kSite:
      return "site";
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

// The command line, for the report; the admin key is left out.
std::string command_line(int argc, const char* const* argv) {
  std::string command;
  for (int i = 0; i < argc; ++i) {
    std::string_view a = argv[i];
    if (i > 0) command += ' ';
    if (i > 0 && std::string_view(argv[i - 1]) == "--admin-key") {
      command += "...";
    } else if (a.starts_with("--admin-key=")) {
      command += "--admin-key=...";
    } else {
      command += a;
    }
  }
  return command;
}

std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::vector<std::pair<std::string, std::string>> Config::describe() const {
  std::vector<std::pair<std::string, std::string>> d;
  d.emplace_back("scenario", scenario_name(scenario));
  std::string all;
  for (const auto& [host, port] : targets) {
    all += (all.empty() ? "" : ",") + host + ":" + std::to_string(port);
  }
  d.emplace_back("target", all.empty() ? target_host + ":" + std::to_string(target_port) : all);
  if (scenario == Scenario::kClosed) {
    d.emplace_back("path", path);
    d.emplace_back("connections", std::to_string(connections));
  } else {
    d.emplace_back("room", room);
    d.emplace_back("users", std::to_string(users));
    d.emplace_back("transport", transport_name(transport));
    d.emplace_back("arrival_rate",
                   arrival_rate == 0 ? "all at once" : short_number(arrival_rate) + "/s");
    d.emplace_back("capacity", std::to_string(capacity));
    d.emplace_back("admit_per_second", std::to_string(admit_per_second));
    d.emplace_back("stay_s", short_number(stay_s));
    d.emplace_back("abandon", short_number(abandon));
    d.emplace_back("use", use == UseVia::kGate ? "gate" : "verify");
    d.emplace_back("heartbeat_timeout_s", std::to_string(heartbeat_timeout_s));
  }
  if (scenario == Scenario::kDrop) {
    d.emplace_back("prequeue_s", short_number(prequeue_s));
    d.emplace_back("shuffle", shuffle ? "yes" : "no");
  }
  if (scenario == Scenario::kBots) {
    d.emplace_back("bots", std::to_string(bots));
    d.emplace_back("bot_connections", std::to_string(bot_connections));
    d.emplace_back("bot_solve", short_number(bot_solve));
    d.emplace_back("bot_threads", std::to_string(bot_threads));
    d.emplace_back("baseline", baseline ? "yes" : "no");
  }
  if (scenario == Scenario::kBots || ip_joins_per_minute != 0 || pow_difficulty != 0) {
    d.emplace_back("ip_joins_per_minute", std::to_string(ip_joins_per_minute));
    d.emplace_back("pow_difficulty",
                   pow_difficulty == kPowAuto ? "auto" : std::to_string(pow_difficulty));
  }
  if (scenario == Scenario::kSite) {
    d.emplace_back("site_page", site_page);
    std::string assets;
    for (const std::string& a : site_assets) assets += (assets.empty() ? "" : ",") + a;
    d.emplace_back("site_assets", assets);
    d.emplace_back("site_xhr", site_xhr);
    d.emplace_back("before_users", std::to_string(before_users));
    d.emplace_back("bypass", site_bypass ? "yes" : "no");
  }
  if (scenario == Scenario::kProtect) {
    d.emplace_back("origin_capacity", std::to_string(origin_capacity));
    d.emplace_back("origin_service_ms", short_number(origin_service_ms));
  }
  d.emplace_back("duration_s", short_number(duration_s));
  d.emplace_back("timeout_s", short_number(timeout_s));
  d.emplace_back("threads", std::to_string(threads));
  d.emplace_back("processes", std::to_string(processes));
  d.emplace_back("sources", std::to_string(sources));
  return d;
}

}  // namespace anteroom::loadgen
