#!/usr/bin/env bash
# Measures anteroom's HTTP throughput with wrk, side by side in one run with nginx returning
# a fixed 200 (the anchor), and writes results/server.md.
# usage: bench/server_bench.sh [ANTEROOM_BINARY] [SECONDS]   (needs wrk, nginx-light, python3)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-build/server/anteroom}
SECS=${2:-10}
OUT=results/server.md
source bench/lib.sh
bench_workdir

N=$(free_port); A=$(free_port); KEY=bench-admin-key-0001
nginx_fixed_200 "$work" "$N"
"$BIN" --listen "127.0.0.1:$A" --threads 2 --data-dir "$work/data" --no-persistence --admin-key "$KEY" \
  --token-secret bench-token-secret-0123456789abcdefg >/dev/null 2>&1 & pids+=($!)
wait_port "$N"; wait_port "$A"

# A manual room (nothing admitted behind our back) holding 100,000 waiting tickets.
curl -sf -X PUT -H "Authorization: Bearer $KEY" "http://127.0.0.1:$A/v1/rooms/bench" \
  -d '{"capacity":0,"admission":"manual","heartbeat_timeout_seconds":86400,"max_waiting":0}' >/dev/null
python3 - "$A" "$work/ids" <<'PY'
import http.client, json, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]))
with open(sys.argv[2], "w") as f:
    for _ in range(100_000):
        c.request("POST", "/v1/rooms/bench/tickets")
        f.write(json.loads(c.getresponse().read())["ticket"] + "\n")
PY
cat >"$work/status.lua" <<'LUA'
local ids = {}
init = function(args) for line in io.lines(args[1]) do ids[#ids + 1] = line end end
request = function() return wrk.format("GET", "/v1/rooms/bench/tickets/" .. ids[math.random(#ids)]) end
LUA
cat >"$work/join.lua" <<'LUA'
wrk.method = "POST"
LUA

run() {  # name, wrk args...: prints "name rps p50 p99 errors"
  local name=$1; shift
  local out
  out=$(wrk -t2 -c200 -d"${SECS}s" --latency "$@")
  echo "$out" >"$work/$name.txt"
  echo "$name $(wrk_summary "$out")"
}
one=$(head -1 "$work/ids")
# Each anteroom run is paired with nginx under the identical wrk invocation (same script,
# same paths), so wrk's own cost on these shared cores is the same on both sides.
pair() {  # label, wrk args (target host appended per side)...
  local label=$1 path=$2; shift 2
  local n a
  pairs=$((pairs + 1))
  n=$(run "nginx-$pairs" "$@" "http://127.0.0.1:$N$path" -- "$work/ids")
  a=$(run "anteroom-$pairs" "$@" "http://127.0.0.1:$A$path" -- "$work/ids")
  read -r _ n_rps n_p50 n_p99 n_err <<<"$n"
  read -r _ a_rps a_p50 a_p99 a_err <<<"$a"
  ratio=$(python3 -c "print(f'{$a_rps / $n_rps:.2f}x')")
  rows+="| $label | $n_rps | $a_rps | **$ratio** | $a_p50 / $n_p50 | $a_p99 / $n_p99 | $a_err / $n_err |"$'\n'
}
rows=""
pairs=0
pair "status, one ticket (plain wrk)" "/v1/rooms/bench/tickets/$one"
pair "status, random ticket of 100,000 (Lua picks)" "" -s "$work/status.lua"
pair "join, anonymous (POST)" "/v1/rooms/bench/tickets" -s "$work/join.lua"
cpu=$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)
# The sections written by hand or by bench/access_log_bench.sh stay (from the first marker on).
kept=$(sed -n '/^<!-- \(route-table\|access-log\)/,$p' "$OUT" 2>/dev/null || true)

cat >"$OUT" <<MD
# Server benchmarks

- Command: \`bench/server_bench.sh $BIN $SECS\` (writes this file)
- Machine: $cpu, $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), Linux $(uname -r)
- Date: $(date -u '+%Y-%m-%d %H:%M UTC')
- Load: \`wrk -t2 -c200 -d${SECS}s --latency\` on the same 2 cores as the server (loopback).
  anteroom runs with \`--threads 2 --no-persistence\`; its room holds 100,000 waiting
  tickets (manual admission, nothing admitted behind the benchmark's back).
- Anchor: nginx $(nginx -v 2>&1 | cut -d/ -f2) (\`worker_processes auto\`) answering \`return 200\` with a
  33-byte JSON body, driven by exactly the same wrk command (same script, same paths)
  right before each anteroom run. Ratio = anteroom / nginx.

| load | nginx req/s | anteroom req/s | ratio | p50 anteroom / nginx | p99 anteroom / nginx | errors anteroom / nginx |
|---|---:|---:|---:|---:|---:|---:|
$rows
Goals: status >= 0.9x nginx, join >= 0.8x (persistence off), zero errors.
Errors are wrk's socket errors plus non-2xx answers. Joins come last: the room grows from
100,000 to about a million tickets during the join run.
MD
if [ -n "$kept" ]; then printf '\n%s\n' "$kept" >>"$OUT"; fi
cat "$OUT"
