#!/usr/bin/env bash
# The per-address join limit's cost (server/app/join_limiter.h): join
# throughput over HTTP in a room with ip_joins_per_minute on and one with it off, in one run,
# rounds interleaved, each join from one of 100,000 distinct client addresses (wrk sends them
# in X-Forwarded-For; the server trusts the loopback proxy). The limit is set high enough
# that nobody is refused: what is measured is the counting. Rewrites the head of
# results/security.md (up to its next section, which it keeps).
# usage: bench/limiter_bench.sh [ANTEROOM_BINARY] [SECONDS_PER_ROUND] [ROUNDS]  (needs wrk)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-build/server/anteroom}
SECS=${2:-5}
ROUNDS=${3:-3}
OUT=results/security.md
source bench/lib.sh
bench_workdir

A=$(free_port); KEY=bench-admin-key-0001
"$BIN" --listen "127.0.0.1:$A" --threads 2 --no-persistence --admin-key "$KEY" \
  --trusted-proxy 127.0.0.1/32 --token-secret bench-token-secret-0123456789abcdefg \
  >/dev/null 2>&1 & pids+=($!)
wait_port "$A"
for room in off on; do
  limit=$([[ $room == on ]] && echo 1000000 || echo 0)
  curl -sf -X PUT -H "Authorization: Bearer $KEY" "http://127.0.0.1:$A/v1/rooms/$room" \
    -d "{\"capacity\":0,\"admission\":\"manual\",\"heartbeat_timeout_seconds\":86400,\"max_waiting\":0,\"ip_joins_per_minute\":$limit}" >/dev/null
  cat >"$work/$room.lua" <<LUA
wrk.method = "POST"
request = function()
  local i = math.random(0, 99999)
  local xff = "10." .. math.floor(i / 65536) .. "." .. (math.floor(i / 256) % 256) .. "." .. (i % 256)
  return wrk.format("POST", "/v1/rooms/$room/tickets", {["X-Forwarded-For"] = xff}, "")
end
LUA
done
: >"$work/rounds"
for r in $(seq 1 "$ROUNDS"); do
  for room in off on; do
    out=$(wrk -t2 -c100 -d"${SECS}s" --latency -s "$work/$room.lua" "http://127.0.0.1:$A/")
    echo "$room $(wrk_summary "$out")" >>"$work/rounds"
  done
done
python3 - "$work/rounds" "$OUT" "$(machine_line)" "$SECS" "$ROUNDS" <<'PY'
import statistics, sys, datetime
rounds, out, machine, secs, n = sys.argv[1:6]
rows = {}
for line in open(rounds):
    room, rps, p50, p99, errs = line.split()
    rows.setdefault(room, []).append((float(rps), p50, p99, int(errs)))
# Each round runs off then on back to back: the ratio of a pair shares the machine's state of
# the moment, which drifts by 15% over a minute here; the median of the pairs' ratios is the
# figure.
pairs = [o[0] / f[0] for f, o in zip(rows["off"], rows["on"])]
ratio = statistics.median(pairs)
L = ["# Abuse resistance: measurements", "",
     f"- Command: `bench/limiter_bench.sh build/server/anteroom {secs} {n}`",
     f"- Machine: {machine}, 24 GiB; server and wrk on the same 2 cores (loopback)",
     f"- Date: {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC; Release build",
     "- The machine is shared and noisy: read the ratio, taken within one run.", "",
     "## The per-address join limit", "",
     "Joins (`POST /v1/rooms/{room}/tickets`, anonymous, a manual room: nobody admitted) over "
     f"`wrk -t2 -c100 -d{secs}s`, each from one of 100,000 client addresses in X-Forwarded-For "
     "(the server trusts the loopback proxy); each round runs off then on back to back. `on` counts every join "
     "in the count-min sketch (limit 1,000,000 a minute: nobody refused); `off` has no limit.", "",
     "| target | goal | measured | met |", "|---|---|---:|---|",
     f"| join throughput, limit on / off, 100,000 addresses (median of the rounds' ratios) | >= 0.95 | {ratio:.3f} | {'yes' if ratio >= 0.95 else '**no**'} |", "",
     "Ratios round by round: " + ", ".join(f"{x:.3f}" for x in pairs) + ".", "",
     "| room | joins/s (rounds) | median | p50 / p99 (last round) | errors |", "|---|---|---:|---|---:|"]
for room in ("off", "on"):
    rs = rows[room]
    L.append(f"| {room} | {' / '.join(f'{r[0]:,.0f}' for r in rs)} | {statistics.median(r[0] for r in rs):,.0f} | {rs[-1][1]} / {rs[-1][2]} | {sum(r[3] for r in rs)} |")
L += ["", "Memory: the sketch is six tables (five 15-second buckets and the next) of 2^20 32-bit "
      "counters in 64-byte blocks (24 MiB), made the first time a room limits joins, whatever "
      "the number of addresses (server/app/join_limiter.h)."]
try:
    old = open(out).read()
except FileNotFoundError:
    old = ""
head = old.find("## The per-address join limit")
rest = old.find("\n## ", head + 1) if head >= 0 else -1
open(out, "w").write("\n".join(L) + "\n" + (old[rest:] if rest >= 0 else ""))
print("\n".join(L))
PY
