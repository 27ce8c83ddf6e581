#!/usr/bin/env bash
# Tens of thousands of sessions from one loadgen command: CONNS (default 30,000) keep-alive
# connections against nginx (2 workers, reuseport, 19,000 connections each), more than one
# process's 20,000 descriptors and one source address's ~28,000 ports allow. The loadgen
# must fan out over processes and 127.0.0.x source addresses by itself and report how many
# sessions were open at once. Writes results/loadgen-fanout.md.
# usage: bench/loadgen_fanout.sh [LOADGEN] [CONNS] [SECONDS]   (needs nginx-light)
set -euo pipefail
cd "$(dirname "$0")/.."
LG=${1:-build/loadgen/anteroom-loadgen}
CONNS=${2:-30000}
SECS=${3:-10}
OUT=results/loadgen-fanout.md
source bench/lib.sh
bench_workdir
N=$(free_port)
nginx_fixed_200 "$work" "$N" 2 19000 "reuseport backlog=8192"
mkdir -p results/runs
"$LG" closed --target "127.0.0.1:$N/" --connections "$CONNS" --duration "$SECS" --timeout 60 \
  --out results/runs/fanout --quiet >/dev/null || echo "(checks failed: see results/runs/fanout.md)" >&2
machine=$(machine_line)
python3 - "$OUT" "$machine" "$CONNS" "$SECS" <<'PY'
import json, sys, datetime
out, machine, conns, secs = sys.argv[1:]
r = json.load(open("results/runs/fanout.json"))
p = r["phases"][0]
m = {x["name"]: x["value"] for x in r["metrics"]}
open(out, "w").write(f"""# Loadgen fan-out: {int(conns):,} sessions from one command

Command: `bench/loadgen_fanout.sh` ({datetime.date.today()}), which runs
`anteroom-loadgen closed --connections {conns} --duration {secs}` against nginx (2 workers,
`reuseport`, 19,000 connections each). Machine: {machine}.

One process may hold 20,000 descriptors and one source address has about 28,000 ports, so
the loadgen split the work by itself:

| processes | source addresses | max sessions open at once | requests | errors | req/s | p50 / p99 ms | verdict |
|---:|---:|---:|---:|---:|---:|---|---|
| {r['processes']} | {r['source_addresses']} | {p['max_open_sessions']} | {p['requests']} | {sum(p['errors'].values())} | {m['requests per second']:.0f} | {m['latency p50']:.1f} / {m['latency p99']:.1f} | {'PASS' if r['passed'] else 'FAIL'} |

Errors by kind: {p['errors']}. Report: [fanout](runs/fanout.md). Requests per second here
says little: {int(conns):,} connections share 2 cores with nginx; the point is that all of
them were open at once, counted across processes.
""")
print(open(out).read())
PY
