#!/usr/bin/env bash
# The loadgen's own memory per held session, a baseline loadgen binary against the one under
# test: each holds USERS sessions (SSE, then WebSocket) on a fresh server process, in turn,
# ROUNDS times. While it runs, the worker processes' resident memory is sampled every 200 ms
# from outside (the same way for both binaries); the peak over the sessions held is the
# figure. Writes results/loadgen-memory.md.
# usage: bench/loadgen_memory.sh BASELINE_LOADGEN [LOADGEN] [USERS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=$1
LG=${2:-build/loadgen/anteroom-loadgen}
USERS=${3:-10000}
ROUNDS=${4:-2}
SERVER=build/server/anteroom
source bench/lib.sh
bench_workdir
export ANTEROOM_ADMIN_KEY=loadgen-memory-admin-key

# hold LOADGEN NAME TRANSPORT: prints "PEAK_KIB HELD PASSED" for the run.
hold() {
  local lg=$1 name=$2 transport=$3 pid port lgpid peak=0 kib
  rm -rf "$work/data" "$work/server.out"
  "$SERVER" --listen 127.0.0.1:0 --data-dir "$work/data" --appendfsync everysec \
    --admin-key "$ANTEROOM_ADMIN_KEY" --token-secret loadgen-memory-token-secret-0123456789 \
    --max-connections 19500 >"$work/server.out" 2>&1 &
  pid=$!
  for _ in $(seq 1 100); do grep -q '^anteroom listening' "$work/server.out" 2>/dev/null && break; sleep 0.05; done
  port=$(sed -n 's|^anteroom listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$work/server.out")
  "$lg" hold --users "$USERS" --sources $(((USERS + 899) / 900)) --transport "$transport" \
    --duration 3 --target "127.0.0.1:$port" --out "$work/$name" --quiet >/dev/null 2>&1 &
  lgpid=$!
  while kill -0 "$lgpid" 2>/dev/null; do
    kib=$({ ps --ppid "$lgpid" -o rss= || true; } | awk '{s += $1} END {print s + 0}')
    if ((kib > peak)); then peak=$kib; fi
    sleep 0.2
  done
  wait "$lgpid" || true
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  python3 - "$work/$name.json" "$peak" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
v = {x["name"]: x["value"] for x in r["metrics"]}
print(sys.argv[2], int(v["sessions held at once"]), "PASS" if r["passed"] else "FAIL")
PY
}

rows=""
ratios=""
for r in $(seq 1 "$ROUNDS"); do
  for transport in sse ws; do
    read -r bk bh bp < <(hold "$BASE" "base-$transport-$r" "$transport")
    read -r tk th tp < <(hold "$LG" "this-$transport-$r" "$transport")
    bper=$(python3 -c "print(f'{$bk * 1024 / max($bh, 1) / 1024:.2f}')")
    tper=$(python3 -c "print(f'{$tk * 1024 / max($th, 1) / 1024:.2f}')")
    ratio=$(python3 -c "print(f'{$tper / $bper:.2f}')")
    rows+="| $r | $transport | $bh | $bper KiB | $bp | $th | $tper KiB | $tp | ${ratio}x |"$'\n'
    ratios+="$ratio "
  done
done
{
  echo "# The loadgen's memory per held session"
  echo
  echo "\`bench/loadgen_memory.sh $BASE $LG $USERS $ROUNDS\` on $(machine_line), $(date +%F)."
  echo "$USERS sessions held on one server process (defaults, \`--max-connections 19500\`), one"
  echo "source address per 900 sessions; the two loadgen binaries in turn. Memory: the peak of"
  echo "all worker processes' resident memory together, sampled every 200 ms, over the sessions"
  echo "held (the whole footprint, not a growth)."
  echo
  echo "| round | transport | baseline held | baseline per session | checks | this held | this per session | checks | this / baseline |"
  echo "|---:|---|---:|---:|---|---:|---:|---|---:|"
  printf '%s' "$rows"
  echo
  echo "Ratios by run: $ratios"
} >results/loadgen-memory.md
cat results/loadgen-memory.md
