// Each scenario's defaults (docs/loadgen.md), set before the options are read.
#include "loadgen/config.h"

namespace anteroom::loadgen {

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
    case Scenario::kDrop:
      // Admission is the event's rate (set from --users once every option is read), so no
      // capacity; nobody gives up, so every visitor's place in the line can be checked.
      c->transport = Transport::kSse;
      c->capacity = 0;
      c->abandon = 0;
      c->stay_s = 0;
      break;
    case Scenario::kSite:
      c->users = 200;
      c->capacity = 0;
      c->admit_per_second = 20;
      c->abandon = 0;
      c->stay_s = 0;
      break;
    case Scenario::kBots:
      // Humans arrive at a normal pace and wait on SSE (their wait is measured to the frame);
      // nobody gives up and nobody stays, so every human's admission is counted once.
      c->users = 200;
      c->arrival_rate = 10;
      c->transport = Transport::kSse;
      c->capacity = 0;
      c->abandon = 0;
      c->stay_s = 0;
      c->ip_joins_per_minute = 5;
      // Bots never poll their tickets: a long heartbeat keeps them in line (their best play).
      c->heartbeat_timeout_s = 600;
      break;
  }
}

}  // namespace anteroom::loadgen
