#!/usr/bin/env bash
# What open dashboards cost the server: CPU time of the anteroom process (utime + stime from
# /proc/PID/stat) over the same length of time with no dashboard and with N dashboards
# streaming (GET /v1/admin/stream with curl), on R rooms, alternately, in one run.
# usage: bench/dashboard_cpu.sh PATH/TO/anteroom [ROOMS=100] [DASHBOARDS=10] [SECONDS=30] [ROUNDS=2]
set -euo pipefail
BIN=$1 ROOMS=${2:-100} DASH=${3:-10} SECS=${4:-30} ROUNDS=${5:-2}
KEY=dashboard-bench-admin-key-0123
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
"$BIN" --listen 127.0.0.1:0 --data-dir "$work" --no-persistence --admin-key "$KEY" --threads 2 \
  --token-secret dashboard-bench-token-secret-0123456789 >"$work/out" 2>&1 &
server=$!
pids+=($server)
for _ in $(seq 100); do grep -q listening "$work/out" && break; sleep 0.05; done
PORT=$(sed -n 's|^anteroom listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$work/out")
for i in $(seq 1 "$ROOMS"); do
  curl -sf -X PUT -H "Authorization: Bearer $KEY" "127.0.0.1:$PORT/v1/rooms/room-$i" \
    -d '{"capacity":100}' >/dev/null
  curl -sf -X POST "127.0.0.1:$PORT/v1/rooms/room-$i/tickets" -d '{}' >/dev/null
done
ticks() { awk '{print $14 + $15}' "/proc/$server/stat"; }
hz=$(getconf CLK_TCK)
measure() {  # label, dashboards
  local streams=() i
  for i in $(seq 1 "$2"); do
    curl -sN -H "Authorization: Bearer $KEY" "127.0.0.1:$PORT/v1/admin/stream" -o "$work/stream.$i" &
    streams+=($!)
  done
  sleep 2  # the streams open and get their first frame before the clock starts
  local before after bytes0=0 bytes1=0
  for f in "$work"/stream.*; do [[ -f $f ]] && bytes0=$((bytes0 + $(stat -c %s "$f"))); done
  before=$(ticks)
  sleep "$SECS"
  after=$(ticks)
  for f in "$work"/stream.*; do [[ -f $f ]] && bytes1=$((bytes1 + $(stat -c %s "$f"))); done
  if ((${#streams[@]})); then
    kill "${streams[@]}" 2>/dev/null || true
    wait "${streams[@]}" 2>/dev/null || true
  fi
  rm -f "$work"/stream.*
  python3 -c "import sys; t=(int(sys.argv[2])-int(sys.argv[1]))/int(sys.argv[3]); s=float(sys.argv[4]); \
print(f'{sys.argv[5]:<16} cpu {t:.2f} s in {s:.0f} s = {100*t/s:.3f}% of one core; streamed {(int(sys.argv[7])-int(sys.argv[6]))/s/1024:.1f} KiB/s')" \
    "$before" "$after" "$hz" "$SECS" "$1" "$bytes0" "$bytes1"
}
echo "rooms $ROOMS, $DASH dashboards, $SECS s per measurement, $ROUNDS rounds (anteroom --threads 2)"
for r in $(seq 1 "$ROUNDS"); do
  measure "none" 0
  measure "$DASH dashboards" "$DASH"
done
