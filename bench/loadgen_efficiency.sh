#!/usr/bin/env bash
# The loadgen's own efficiency: its closed model against nginx returning a fixed 200, side
# by side with wrk using the same connections and threads, alternating rounds so drift on a
# shared machine hits both alike. Writes results/loadgen-efficiency.md.
# usage: bench/loadgen_efficiency.sh [LOADGEN_BINARY] [SECONDS] [ROUNDS]  (needs wrk, nginx-light)
set -euo pipefail
cd "$(dirname "$0")/.."
LG=${1:-build/loadgen/anteroom-loadgen}
SECS=${2:-10}
ROUNDS=${3:-3}
CONNS=200
THREADS=2
OUT=results/loadgen-efficiency.md
source bench/lib.sh
bench_workdir
N=$(free_port)
nginx_fixed_200 "$work" "$N"

rows=""
wrk_total=0
lg_total=0
for r in $(seq 1 "$ROUNDS"); do
  w=$(wrk -t$THREADS -c$CONNS -d${SECS}s "http://127.0.0.1:$N/" | awk '/Requests\/sec/ {print $2}')
  "$LG" closed --target "127.0.0.1:$N/" --connections $CONNS --threads $THREADS --duration "$SECS" \
    --out "$work/closed" --quiet >/dev/null
  l=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(next(m["value"] for m in r["metrics"] if m["name"]=="requests per second"))' "$work/closed.json")
  ratio=$(python3 -c "print(f'{$l/$w:.2f}')")
  rows+="| $r | $(printf '%.0f' "$w") | $(printf '%.0f' "$l") | $ratio |"$'\n'
  wrk_total=$(python3 -c "print($wrk_total+$w)")
  lg_total=$(python3 -c "print($lg_total+$l)")
  echo "round $r: wrk $w req/s, loadgen $l req/s, ratio $ratio" >&2
done
overall=$(python3 -c "print(f'{$lg_total/$wrk_total:.2f}')")
machine=$(machine_line)
cat >"$OUT" <<MD
# Loadgen efficiency: closed model against wrk

Command: \`bench/loadgen_efficiency.sh $LG $SECS $ROUNDS\` ($(date -u +%Y-%m-%d))
Machine: $machine; nginx-light (worker_processes auto) returning a fixed 200 on loopback,
wrk and the loadgen taking turns, each with $THREADS threads and $CONNS keep-alive connections for
$SECS s (\`wrk -t$THREADS -c$CONNS -d${SECS}s\` and \`anteroom-loadgen closed --connections $CONNS
--threads $THREADS --duration $SECS\`). Everything shares the same $(nproc) cores, so the load generator's
own CPU cost shows directly in the figure.

| round | wrk req/s | loadgen req/s | loadgen / wrk |
|---:|---:|---:|---:|
${rows}
**Overall: loadgen / wrk = ${overall}** (goal: at least 0.90, so that what gets measured is the
server, not the load generator).
MD
cat "$OUT"
