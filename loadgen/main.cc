// anteroom-loadgen: drives anteroom the way real visitors do (docs/loadgen.md).
#include <signal.h>
#include <sys/resource.h>

#include <cstdio>

#include "loadgen/config.h"
#include "loadgen/origin.h"
#include "loadgen/scenarios.h"

int main(int argc, char** argv) {
  using namespace anteroom::loadgen;
  Config cfg;
  std::string err = parse_config(argc, argv, &cfg);
  if (!err.empty()) {
    return cannot_run(err);
  }
  if (cfg.help) {
    std::fputs(usage().c_str(), stdout);
    return 0;
  }
  // Every descriptor the hard limit allows: sessions are descriptors.
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  signal(SIGPIPE, SIG_IGN);
  switch (cfg.scenario) {
    case Scenario::kSeedVisit:
      return run_seed_visit(cfg);
    case Scenario::kSurge:
    case Scenario::kScheduled:
      return run_visits(cfg);
    case Scenario::kProtect:
      return run_protect(cfg);
    case Scenario::kHold:
      return run_hold(cfg);
    case Scenario::kClosed:
      return run_closed(cfg);
    case Scenario::kDrop:
      return run_drop(cfg);
    case Scenario::kBots:
      return run_bots(cfg);
    case Scenario::kSite:
      return run_site(cfg);
    case Scenario::kOrigin:
      return run_origin(cfg.origin_port, cfg.origin_capacity, cfg.origin_service_ms, -1);
  }
  return 2;
}
