#!/usr/bin/env bash
# The hold over a cluster: USERS (default 100,000) SSE visitors over NODES (default 6) nodes
# on one Redis, all on this machine; each node under its 20,000 descriptors, the loadgen
# fanned out over processes and 127.0.0.x source addresses. One admission must reach every
# visitor within 2 s. Prints the loadgen's verdict, the time for the change to reach all,
# and each node's memory growth per visitor it holds.
# usage: bench/cluster_hold.sh [ANTEROOM] [LOADGEN] [USERS] [NODES]
set -euo pipefail
BIN=${1:-build/server/anteroom}
LG=${2:-build/loadgen/anteroom-loadgen}
USERS=${3:-100000}
NODES=${4:-6}
source "$(dirname "$0")/lib.sh"
bench_workdir
ADMIN=hold-admin-key-0123456789
R=$(free_port)
redis-server --port "$R" --bind 127.0.0.1 --dir "$work" --save "" --appendonly yes \
  --appendfsync everysec --logfile "$work/redis.log" &
pids+=($!)
wait_port "$R"
targets=""
node_pids=()
for i in $(seq 1 "$NODES"); do
  port=$(free_port)
  mkdir -p "$work/n$i"
  "$BIN" --cluster "127.0.0.1:$R" --node-name "n$i" --listen "127.0.0.1:$port" \
    --data-dir "$work/n$i" --token-secret hold-token-secret-0123456789-0123456789 \
    --admin-key "$ADMIN" --max-connections-per-address 100000 >"$work/n$i.log" 2>&1 &
  pids+=($!); node_pids+=($!)
  wait_port "$port"
  targets+="${targets:+,}127.0.0.1:$port"
done
rss() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }  # KiB
declare -A base peak
for p in "${node_pids[@]}"; do base[$p]=$(rss "$p"); peak[$p]=${base[$p]}; done
( while true; do
    for p in "${node_pids[@]}"; do echo "$p $(rss "$p")"; done
    sleep 1
  done ) >"$work/rss.log" 2>/dev/null &
sampler=$!
pids+=($sampler)

echo "# cluster_hold: $(date -u +%FT%TZ), $(machine_line)"
echo "# $0 $BIN $LG $USERS $NODES"
"$LG" hold --target "$targets" --admin-key "$ADMIN" --users "$USERS" --transport sse \
  --timeout 120 --duration 3 --out "$work/hold" --quiet >"$work/hold.out" 2>&1 || true
kill "$sampler" 2>/dev/null || true
python3 - "$work/hold.json" "$work/rss.log" "$NODES" "${node_pids[@]}" <<PY
import json, sys
report, rsslog, nodes = sys.argv[1], sys.argv[2], int(sys.argv[3])
pids = sys.argv[4:]
base = {$(for p in "${node_pids[@]}"; do printf '"%s": %s, ' "$p" "${base[$p]}"; done)}
peak = dict(base)
for line in open(rsslog):
    p, v = line.split()
    if v.isdigit() and p in peak: peak[p] = max(peak[p], int(v))
r = json.load(open(report))
m = {x["name"]: x["value"] for x in r.get("metrics", [])}
print("verdict", "PASS" if r["passed"] else "FAIL", "; processes", r["processes"], "; sources", r["source_addresses"])
for c in r["checks"]: print(" ", "PASS" if c["passed"] else "FAIL", c["name"], "-", c["detail"])
for k, v in m.items(): print(" ", k, v)
held = ${USERS} / nodes
for p in pids:
    grow = (peak[p] - base[p]) * 1024
    print(f"  node pid {p}: RSS {base[p]/1024:.0f} -> {peak[p]/1024:.0f} MiB, {grow/held:.0f} B per visitor it holds ({held:.0f} streams, and its copy of all {${USERS}} tickets)")
PY
