#!/usr/bin/env bash
# Throughput with --access-log on (to a file) against off, side by side in one run: two
# anteroom processes alike but for the log, measured one after the other with the same wrk
# command, alternately (which side goes first swaps every repetition), then both at once
# with a wrk each, REPS times. Writes
# the "Access log" section of results/server.md (the rest of that file is server_bench.sh's).
# usage: bench/access_log_bench.sh [ANTEROOM_BINARY] [SECONDS] [REPS]   (needs wrk, python3)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-build/server/anteroom}
SECS=${2:-10}
REPS=${3:-3}
OUT=results/server.md
source bench/lib.sh
bench_workdir

KEY=bench-admin-key-0001
OFF=$(free_port); ON=$(free_port)
LOG="$work/access.log"
declare -A pid
for side in off on; do
  port=$OFF; extra=()
  if [ "$side" = on ]; then port=$ON; extra=(--access-log "$LOG"); fi
  "$BIN" --listen "127.0.0.1:$port" --threads 2 --data-dir "$work/data-$side" --no-persistence \
    --admin-key "$KEY" --token-secret bench-token-secret-0123456789abcdefg "${extra[@]}" \
    >/dev/null 2>&1 & pids+=($!)
  pid[$port]=$!
done
# CPU ticks (user + system) a process has used, all its threads.
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
HZ=$(getconf CLK_TCK)
wait_port "$OFF"; wait_port "$ON"
declare -A ticket
for port in "$OFF" "$ON"; do
  curl -sf -X PUT -H "Authorization: Bearer $KEY" "http://127.0.0.1:$port/v1/rooms/bench" \
    -d '{"capacity":0,"admission":"manual","heartbeat_timeout_seconds":86400,"max_waiting":0}' >/dev/null
  ticket[$port]=$(curl -sf -X POST "http://127.0.0.1:$port/v1/rooms/bench/tickets" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["ticket"])')
done
echo 'wrk.method = "POST"' >"$work/join.lua"

# measure LOAD PORT: "rps requests cpu_us_per_request" of one wrk run.
measure() {
  local load=$1 port=$2 out t0 t1
  t0=$(ticks "${pid[$port]}")
  if [ "$load" = status ]; then
    out=$(wrk -t2 -c200 -d"${SECS}s" --latency "http://127.0.0.1:$port/v1/rooms/bench/tickets/${ticket[$port]}")
  else
    out=$(wrk -t2 -c200 -d"${SECS}s" --latency -s "$work/join.lua" "http://127.0.0.1:$port/v1/rooms/bench/tickets")
  fi
  sleep 0.5  # the access log's writer wakes every 100 ms: its work is counted too
  t1=$(ticks "${pid[$port]}")
  local -a s
  read -r -a s <<<"$(wrk_summary "$out")"
  [ "${s[3]}" = 0 ] || { echo "errors in a run: $out" >&2; exit 1; }
  local n
  n=$(awk '/requests in/ {print $1}' <<<"$out")
  echo "${s[0]} $n $(python3 -c "print(f'{($t1 - $t0) / $HZ / $n * 1e6:.2f}')")"
}

# together LOAD: "off_rps on_rps" with one wrk against each process at the same time (half
# the threads and connections each), so both meet the same neighbours on the shared cores.
together() {
  local load=$1 a b path="/v1/rooms/bench/tickets" script=()
  [ "$load" = join ] && script=(-s "$work/join.lua")
  local off_path=$path on_path=$path
  if [ "$load" = status ]; then off_path="$path/${ticket[$OFF]}"; on_path="$path/${ticket[$ON]}"; fi
  wrk -t1 -c100 -d"${SECS}s" "${script[@]}" "http://127.0.0.1:$OFF$off_path" >"$work/t-off" &
  a=$!
  wrk -t1 -c100 -d"${SECS}s" "${script[@]}" "http://127.0.0.1:$ON$on_path" >"$work/t-on" &
  b=$!
  wait "$a" "$b"
  local -a o n
  read -r -a o <<<"$(wrk_summary "$(cat "$work/t-off")")"
  read -r -a n <<<"$(wrk_summary "$(cat "$work/t-on")")"
  if [ "${o[3]}" != 0 ] || [ "${n[3]}" != 0 ]; then echo "errors in a run" >&2; exit 1; fi
  echo "${o[0]} ${n[0]}"
}

rows=""
trows=""
for rep in $(seq 1 "$REPS"); do
  order="off on"; [ $((rep % 2)) = 0 ] && order="on off"
  for load in status join; do
    declare -A rps=() cpu=()
    for side in $order; do
      port=$OFF; [ "$side" = on ] && port=$ON
      : >"$LOG"
      read -r r n c <<<"$(measure "$load" "$port")"
      rps[$side]=$r; cpu[$side]=$c
      if [ "$side" = on ]; then logged="$(wc -l <"$LOG") of $n"; fi
      : >"$LOG"
    done
    ratio=$(python3 -c "print(f'{${rps[on]} / ${rps[off]}:.3f}x')")
    cratio=$(python3 -c "print(f'{${cpu[on]} / ${cpu[off]}:.3f}x')")
    rows+="| $rep | $load | $order | ${rps[off]} | ${rps[on]} | **$ratio** | ${cpu[off]} | ${cpu[on]} | $cratio | $logged |"$'\n'
    echo "rep $rep $load: off ${rps[off]} on ${rps[on]} $ratio; cpu us/req ${cpu[off]} ${cpu[on]} $cratio ($logged lines)" >&2
    read -r t_off t_on <<<"$(together "$load")"
    : >"$LOG"
    tratio=$(python3 -c "print(f'{$t_on / $t_off:.3f}x')")
    trows+="| $rep | $load | $t_off | $t_on | **$tratio** |"$'\n'
    echo "rep $rep $load together: off $t_off on $t_on $tratio" >&2
  done
done
dropped=$(curl -sf -H "Authorization: Bearer $KEY" "http://127.0.0.1:$ON/metrics" |
  awk '/^anteroom_access_log_dropped_total/ {s = s $0 "; "} END {print s}')
cpu_model=$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)
summary=$(python3 - "$rows" "$trows" <<'PY'
import sys, statistics
r = {"status": [], "join": []}
t = {"status": [], "join": []}
for line in sys.argv[1].splitlines():
    c = [x.strip() for x in line.strip("|").split("|")]
    r[c[1]].append((float(c[5].strip("*x")), float(c[8].strip("x"))))
for line in sys.argv[2].splitlines():
    c = [x.strip() for x in line.strip("|").split("|")]
    t[c[1]].append(float(c[4].strip("*x")))
def rng(v): return f"{min(v):.3f}x-{max(v):.3f}x"
for k in r:
    a = [x for x, _ in r[k]]
    b = [y for _, y in r[k]]
    print(f"- {k}: together on/off median **{statistics.median(t[k]):.3f}x** (range {rng(t[k])}); "
          f"one after the other median {statistics.median(a):.3f}x (range {rng(a)}); "
          f"server CPU per request on/off median {statistics.median(b):.3f}x")
PY
)

section=$(cat <<MD
<!-- access-log: written by bench/access_log_bench.sh; server_bench.sh keeps it -->
## Access log on and off

- Command: \`bench/access_log_bench.sh $BIN $SECS $REPS\`
- Machine: $cpu_model, $(nproc) cores (shared with other jobs), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), Linux $(uname -r)
- Date: $(date -u '+%Y-%m-%d %H:%M UTC')
- Two anteroom processes, both \`--threads 2 --no-persistence\`, one with
  \`--access-log FILE\` (a file on the same disk, truncated between runs), each with a manual
  room; \`wrk -t2 -c200 -d${SECS}s\` against one, then the other (the order swaps every
  repetition), on the same 2 cores. Ratio = on / off. "CPU/req" = CPU time (user + system,
  every thread, the log's writer included) the process used over the run and 0.5 s after,
  per request wrk counted, in microseconds: less sensitive than req/s to what else runs on
  this shared machine. "Lines" = lines in the file after the run against the requests wrk
  counted (wrk's count leaves out requests cut off at its end).

One after the other:

| rep | load | order | off req/s | on req/s | on / off | off CPU/req us | on CPU/req us | on / off | lines |
|---|---|---|---:|---:|---:|---:|---:|---:|---|
$rows
Together (after each pair above, \`wrk -t1 -c100 -d${SECS}s\` against each process at the
same time, so that both meet the same load from other jobs on this shared machine):

| rep | load | off req/s | on req/s | on / off |
|---|---|---:|---:|---:|
$trows
Result (goal: on >= 0.9x off for join and status):

$summary

Single runs swing with what else this shared machine runs (other jobs' load changes from
one 10-second run to the next); read the medians, and the server's CPU per request, which
moves far less. The log's cost is that CPU: the "server CPU per request" medians above
(formatting and writing on the log's own thread, handing the record over on the
request's); the writing also puts about 170-190 bytes a request (a line) through the page
cache, not counted above: the kernel's writeback runs outside the process.

Dropped lines at the end (/metrics of the logging process): ${dropped:-none reported}
MD
)
if [ -f "$OUT" ]; then
  sed -i '/^<!-- access-log/,$d' "$OUT"
  printf '%s\n' "$section" >>"$OUT"
else
  printf '%s\n' "$section" >"$OUT"
fi
printf '%s\n' "$section"
