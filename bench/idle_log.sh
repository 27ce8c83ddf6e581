#!/usr/bin/env bash
# The log writer at rest: a server with no rooms and no visitors, its CPU time over SECONDS
# from /proc/PID/stat (utime + stime), under each --appendfsync policy and --no-persistence,
# for the binary under test and, when given, a baseline started the same way in the same
# round. Writes results/idle-log.md. /proc counts in ticks of 10 ms: over 30 s one tick is
# 0.03% of a core.
# usage: bench/idle_log.sh [--vs BASELINE_BINARY] [ANTEROOM_BINARY] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=""
if [[ ${1:-} == --vs ]]; then BASE=$2; shift 2; fi
BIN=${1:-build/server/anteroom}
SECS=${2:-30}
source bench/lib.sh
bench_workdir

# cpu_of BINARY FLAGS...: percent of one core over SECS.
cpu_of() {
  local bin=$1 port pid t0 t1
  shift
  port=$(free_port)
  rm -rf "$work/data"
  "$bin" --listen "127.0.0.1:$port" --data-dir "$work/data" --admin-key bench-admin-key-0001 \
    --token-secret bench-token-secret-0123456789abcdef "$@" >"$work/server.log" 2>&1 &
  pid=$!
  wait_port "$port"
  sleep 1  # start-up's own work (the first snapshot and sync) is not idle
  t0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  sleep "$SECS"
  t1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  python3 -c 'import sys; print(f"{(int(sys.argv[2]) - int(sys.argv[1])) / float(sys.argv[3]):.2f}%")' \
    "$t0" "$t1" "$SECS"
}

{
  echo "# Idle CPU of the log writer"
  echo
  echo "\`bench/idle_log.sh${BASE:+ --vs $BASE} $BIN $SECS\` on $(machine_line), $(date -u +%F)."
  echo "A server with no rooms, no visitors; CPU of the process over $SECS s (% of one core)."
  echo
  if [[ -n $BASE ]]; then
    echo "| log | baseline | this binary |"
    echo "|---|---:|---:|"
  else
    echo "| log | this binary |"
    echo "|---|---:|"
  fi
  for flags in "--appendfsync everysec" "--appendfsync always" "--appendfsync no" "--no-persistence"; do
    # shellcheck disable=SC2086
    if [[ -n $BASE ]]; then
      echo "| \`$flags\` | $(cpu_of "$BASE" $flags) | $(cpu_of "$BIN" $flags) |"
    else
      echo "| \`$flags\` | $(cpu_of "$BIN" $flags) |"
    fi
  done
} >results/idle-log.md
cat results/idle-log.md
