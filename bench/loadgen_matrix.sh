#!/usr/bin/env bash
# Seed 002's matrix, the anteroom way: 100 / 1,000 / 5,000 / 10,000 users arriving at once,
# waiting by poll / SSE / WebSocket, each through the whole visit (join, wait, admitted,
# gate, stay, leave) against one server with persistence on (everysec). Writes each run's
# reports to results/runs/ and the table to results/loadgen-matrix.md.
# usage: bench/loadgen_matrix.sh [SERVER] [LOADGEN] [USERS...]
set -euo pipefail
cd "$(dirname "$0")/.."
SERVER=${1:-build/server/anteroom}
LG=${2:-build/loadgen/anteroom-loadgen}
shift 2 || true
SIZES=${*:-100 1000 5000 10000}
CAPACITY=500
STAY=1
OUT=results/loadgen-matrix.md
work=$(mktemp -d)
pid=
cleanup() { [[ -n $pid ]] && kill "$pid" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

"$SERVER" --listen 127.0.0.1:0 --data-dir "$work/data" --appendfsync everysec --admin-key matrix-admin-key-0001 \
  --token-secret matrix-token-secret-0123456789abcdef >"$work/server.out" 2>&1 &
pid=$!
for _ in $(seq 1 100); do grep -q '^anteroom listening' "$work/server.out" 2>/dev/null && break; sleep 0.05; done
PORT=$(sed -n 's|^anteroom listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$work/server.out")
export ANTEROOM_ADMIN_KEY=matrix-admin-key-0001
mkdir -p results/runs
runs=()
for n in $SIZES; do
  for t in poll sse ws; do
    name="matrix-$n-$t"
    echo "== $n users, $t" >&2
    "$LG" surge --target "127.0.0.1:$PORT" --users "$n" --transport "$t" --capacity $CAPACITY \
      --stay $STAY --out "results/runs/$name" --quiet >/dev/null || echo "   (checks failed: see results/runs/$name.md)" >&2
    runs+=("results/runs/$name.json")
  done
done
source bench/lib.sh
machine=$(machine_line)
python3 - "$OUT" "$machine" "$CAPACITY" "$STAY" "${runs[@]}" <<'PY'
import json, sys, datetime
out, machine, capacity, stay, paths = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
rows = []
for p in paths:
    r = json.load(open(p))
    ph = r["phases"][0]
    cfg = r["config"]
    lat = ph["latency_us"]
    join = lat.get("join", {})
    allr = lat["all"]
    tta = ph["time_to_admission_ms"]
    t = ph["truth"]
    order = t["inversions"] + t["join_order_violations"] + t["positions_grew"]
    ms = lambda us: f"{us/1000:.1f}"
    rows.append(f"| {cfg['users']} | {cfg['transport']} | {ph['error_rate']*100:.2f} % | "
                f"{ph['requests']} | {ph['throughput_rps']:.0f} | {ms(join.get('p50',0))} / {ms(join.get('p99',0))} / {ms(join.get('p999',0))} | "
                f"{ms(allr['p50'])} / {ms(allr['p99'])} / {ms(allr['p999'])} | "
                f"{tta['p50']/1000:.1f} / {tta['p99']/1000:.1f} | {order} | {t['unresolved']} | "
                f"{ph['max_open_sessions']} | {ph['duration_s']:.1f} | {'PASS' if r['passed'] else 'FAIL'} | "
                f"[md]({p.replace('results/','').replace('.json','.md')}) [html]({p.replace('results/','').replace('.json','.html')}) |")
with open(out, "w") as f:
    f.write(f"""# Seed 002's matrix: 100 to 10,000 users x poll / SSE / WebSocket

Command: `bench/loadgen_matrix.sh` ({datetime.date.today()}). Machine: {machine}.
One `anteroom` (2 threads, persistence on, `appendfsync everysec`) and the loadgen on the
same machine over loopback. Each run: `anteroom-loadgen surge --users N --transport T
--capacity {capacity} --stay {stay}`: every user arrives at once, joins, waits (poll honouring
`poll_after_ms`, an SSE stream, or seed 000's WebSocket with CHECK_QUEUE_STATUS every 5 s),
is admitted (auto admission, capacity {capacity}), uses the admission at the gate, stays about
{stay} s (0.5x-1.5x), leaves; 2% give up while waiting and close the tab.

- Latency is from when each request was due (open model): a join's clock starts when the
  user was due to arrive, so a slow connect or accept queue shows in it. "all" is every
  request of the run (join, status, stream, gate, leave).
- Time to admission: from arrival to the moment the visitor learnt it was admitted. With
  capacity {capacity} and a stay of ~{stay} s the room lets in about {capacity} people per
  (stay + the time to notice), so the 10,000th person waits tens of seconds by design; poll
  visitors notice later (they ask every `poll_after_ms`), which also holds their slot longer.
- Order: inversions + join-order contradictions + positions that grew (all must be 0).
  Unresolved: tickets neither admitted nor ended when the run finished.

| users | transport | error rate | requests | req/s | join p50 / p99 / p99.9 ms | all p50 / p99 / p99.9 ms | time to admission p50 / p99 s | order violations | unresolved | max sessions | run s | verdict | reports |
|---:|---|---:|---:|---:|---|---|---|---:|---:|---:|---:|---|---|
""" + "\n".join(rows) + "\n")
print(open(out).read())
PY
