// What --help prints (usage() in config.h): every scenario and every option parse_config
// takes, with its default.
#include "loadgen/config.h"

namespace anteroom::loadgen {

std::string usage() {
  return R"(anteroom-loadgen SCENARIO [options]: drives anteroom the way real visitors do.

Scenarios (docs/loadgen.md):
  seed-visit  seed 000's scripted WebSocket visit; PASS or FAIL for every step
  surge       --users N arrive at once (or at --arrival-rate) and go through the whole visit
  scheduled   seed 001: an auto room admitting --admit-per-second each second; visitors on SSE
  protect     a demo origin with --origin-capacity, hit directly and then through anteroom
  hold        open --users SSE or WebSocket sessions, keep them, measure memory per session
              (--server-pid) and how long one change takes to reach every session
  drop        a scheduled event: --users arrive over a --prequeue-s pre-queue, the line is drawn
              (or kept in join order) at the start; checks the draw and that admission
              followed it, and how the wait depends on when a visitor arrived
  bots        --users humans arrive at --arrival-rate, one address each, while --bots addresses
              hammer joins (some solving the proof of work, some not); the humans' share of
              the admissions against their fair share, the bots' refusals, the humans' extra
              wait against a baseline without bots
  site        a protected site behind a real proxy (--target is the proxy): visitors load the
              page, its assets (without cookies) and its XHR, first a few at a pace the room
              admits at once, then a surge; time to the origin, the share who never saw the
              waiting page, and that bypassed assets made no ticket
  closed      closed model: --connections busy keep-alive connections repeating GET --target
              path for --duration seconds (like wrk)
  origin      run only the demo origin on --origin-port (for trying things by hand)

Target and room:
  --target HOST:PORT[/path][,HOST:PORT...]  the server, or a cluster's nodes (visitors spread
                   over them and move on when theirs goes away); default 127.0.0.1:8080
  --admin-key KEY            to create the room (or ANTEROOM_ADMIN_KEY)
  --room NAME                default: a fresh room lg-<scenario>-<random>, deleted afterwards
  --keep-room                leave the room in place after the run
  --capacity N  --admit-per-second N  --heartbeat-timeout S  --allowed-ttl S  --session-ttl S
Visitors:
  --users N                  how many (surge 1000, seed-visit 20)
  --transport poll|sse|ws    how they wait (surge poll, scheduled, hold and drop sse)
  --arrival-rate R           per second; 0 (default) = all at once
  --stay S                   admitted visitors stay S seconds on average (0.5x-1.5x), then leave
  --abandon F                share who give up while waiting, closing the tab (default 0.02)
  --patience S               abandoners give up at a random moment within S seconds (10)
  --use gate|verify          how the admission is used (default gate)
  --ws-check S               WebSocket visitors send CHECK_QUEUE_STATUS every S seconds (5)
protect:  --origin-capacity N (50)  --origin-service-ms MS (200)  --origin-port P
hold:     --server-pid PID  --duration S (how long to hold, 5)
drop:     --prequeue-s S (10)  --shuffle (default) | --no-shuffle
          --admit-per-second N  the event's rate after the start (default: users / 5)
bots:     --bots N (10 addresses)  --bot-connections N (4 per address)
          --bot-threads N (1)  threads for the solving bots (one more for the others)
          --bot-solve F   share of the bot addresses that solve the proof of work (0.5); of
                          the others, half send no proof and half a wrong nonce
          --ip-joins-per-minute N (5)  --pow-difficulty BITS|auto (0)  the room's defences
          --no-baseline   skip the first phase (the humans alone)
          humans: --users (200) --arrival-rate (10) --transport sse|poll; the room admits
          --admit-per-second (default 1.25x the arrival rate)
site:     --site-page PATH (/store/)  --site-assets PATH,PATH... (/static/site.css; "" none)
          --site-xhr PATH (/store/api/cart; "" none)  --before-users N (users / 10)
          the room: --admit-per-second (20), no capacity limit; match = the whole site,
          bypass = the assets' folders (--no-bypass: none, and the run must fail)
closed:   --connections N (100)  --duration S (10)
Machinery:
  --threads N      per process (default: cores)      --timeout S   per request (30)
  --processes N    default: one per 18,000 sessions  --sources N   127.0.0.x source addresses
                                                      (default: one per 900 sessions)
  --out PREFIX     writes PREFIX.json, PREFIX.md, PREFIX.html
                   (default results/runs/<scenario>-<users>-<transport>)
  --seed N  --quiet
Exit status: 0 every check passed, 1 a check failed, 2 bad usage or the run could not start.
)";
}

}  // namespace anteroom::loadgen
