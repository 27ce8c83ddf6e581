#!/usr/bin/env bash
# The loadgen's other scenarios against one fresh server each: hold (19,000 SSE sessions,
# then 19,000 WebSocket sessions, on one server process), protect (an overloaded origin,
# direct vs. through anteroom) and scheduled (seed 001's batch a second). Writes each run's
# reports to results/runs/ and the summary to results/loadgen-scenarios.md.
# usage: bench/loadgen_scenarios.sh [SERVER] [LOADGEN] [HOLD_SESSIONS]
set -euo pipefail
cd "$(dirname "$0")/.."
SERVER=${1:-build/server/anteroom}
LG=${2:-build/loadgen/anteroom-loadgen}
HOLD=${3:-19000}
OUT=results/loadgen-scenarios.md
work=$(mktemp -d)
pid=
cleanup() { [[ -n $pid ]] && kill "$pid" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
export ANTEROOM_ADMIN_KEY=scenarios-admin-key-01

start_server() {  # extra flags...
  [[ -n $pid ]] && { kill "$pid"; wait "$pid" 2>/dev/null || true; }
  rm -rf "$work/data" "$work/server.out"
  "$SERVER" --listen 127.0.0.1:0 --data-dir "$work/data" --appendfsync everysec --admin-key scenarios-admin-key-01 \
    --token-secret scenarios-token-secret-0123456789ab --max-connections 19500 "$@" >"$work/server.out" 2>&1 &
  pid=$!
  for _ in $(seq 1 100); do grep -q '^anteroom listening' "$work/server.out" 2>/dev/null && break; sleep 0.05; done
  PORT=$(sed -n 's|^anteroom listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$work/server.out")
}
mkdir -p results/runs
cmds=()
run() {  # name, loadgen args...
  local name=$1; shift
  echo "== $name: anteroom-loadgen $*" >&2
  "$LG" "$@" --target "127.0.0.1:$PORT" --out "results/runs/$name" --quiet >/dev/null ||
    echo "   (checks failed: see results/runs/$name.md)" >&2
  cmds+=("$name|anteroom-loadgen $*")
}

start_server
run hold-sse hold --users "$HOLD" --sources 20 --transport sse --server-pid "$pid" --duration 3
start_server
run hold-ws hold --users "$HOLD" --sources 20 --transport ws --server-pid "$pid" --duration 3
start_server --push-interval 100
run hold-sse-push100 hold --users "$HOLD" --sources 20 --transport sse --server-pid "$pid" --duration 3
start_server
run protect protect --users 2000 --origin-capacity 50 --origin-service-ms 200
start_server
run scheduled scheduled --users 3000 --admit-per-second 200 --stay 1

source bench/lib.sh
machine=$(machine_line)
python3 - "$OUT" "$machine" "${cmds[@]}" <<'PY'
import json, sys, datetime
out, machine, cmds = sys.argv[1], sys.argv[2], sys.argv[3:]
def load(name): return json.load(open(f"results/runs/{name}.json"))
def metric(r, name):
    return next((m["value"] for m in r["metrics"] if m["name"] == name), float("nan"))
cmd = dict(c.split("|", 1) for c in cmds)
L = [f"""# Loadgen scenarios: hold, protect, scheduled

Command: `bench/loadgen_scenarios.sh` ({datetime.date.today()}). Machine: {machine}.
Each run against a fresh `anteroom` (2 threads, persistence on, `appendfsync everysec`,
`--max-connections 19500`), the loadgen on the same machine over loopback. Per-run reports
(JSON, Markdown, HTML with charts) are linked.
""", "## hold: sessions held open on one server process", "",
"Memory per session = (server VmRSS with every session open - VmRSS before) / sessions. "
"The change: the operator admits the first in line, so every other visitor's position moves "
"up by one; fan-out is from that admit call to the frame showing it, per session. The "
"server coalesces position updates per `--push-interval` (default 1000 ms), which the "
"fan-out time reflects; the last row is the same run with `--push-interval 100`.", "",
"| run | transport | sessions held | max connections | loadgen processes | memory per session | change reached | fan-out p50 / p99 / all | verdict | command |",
"|---|---|---:|---:|---:|---:|---:|---|---|---|"]
for name in ["hold-sse", "hold-ws", "hold-sse-push100"]:
    r = load(name)
    L.append(f"| [{name}](runs/{name}.md) | {r['config'].get('transport')} | {metric(r,'sessions held at once'):.0f} | "
             f"{metric(r,'max connections open at once'):.0f} | {r['processes']} | "
             f"{metric(r,'server memory per session')/1024:.2f} KiB | {metric(r,'change reached sessions'):.0f} | "
             f"{metric(r,'change fan-out p50'):.0f} / {metric(r,'change fan-out p99'):.0f} / {metric(r,'change reached all after'):.0f} ms | "
             f"{'PASS' if r['passed'] else 'FAIL'} | `{cmd[name]}` |")
r = load("protect")
d, q = r["phases"]
L += ["", "## protect: an overloaded origin, direct and through anteroom", "",
      f"The demo origin works on {r['config']['origin_capacity']} requests at once, "
      f"{r['config']['origin_service_ms']} ms each, and answers 503 beyond that. "
      f"{r['config']['users']} users arrive at once: first straight at the origin, then through "
      "a room whose capacity is the origin's (each admitted user makes the same request, then leaves). "
      f"Command: `{cmd['protect']}`. Report: [protect](runs/protect.md).", "",
      "| phase | users | requests to the origin | 503 answers | error rate | time to admission p50 / p99 |",
      "|---|---:|---:|---:|---:|---|"]
for p in (d, q):
    o = p["latency_us"].get("origin", {"count": 0})
    tta = p["time_to_admission_ms"]
    L.append(f"| {p['name']} | {p['visits']['planned']} | {o['count'] + p['errors']['5xx']} | {p['errors']['5xx']} | "
             f"{p['error_rate']*100:.1f} % | " + (f"{tta['p50']/1000:.1f} / {tta['p99']/1000:.1f} s" if tta['count'] else "-") + " |")
fewer = metric(r, "fewer errors with the queue")
L += ["", f"Errors with the queue: {fewer:.0f}% fewer than without (seed 002 saw about 80% fewer; "
      "with admission tied to the origin's capacity there are none). Verdict: " + ("PASS" if r["passed"] else "FAIL") + "."]
r = load("scheduled")
p = r["phases"][0]
adm = [s["admitted"] for s in p["seconds"]]
busy = [a for a in adm if a > 0]
L += ["", "## scheduled: seed 001's batch a second, visitors on SSE", "",
      f"Command: `{cmd['scheduled']}`. Report: [scheduled](runs/scheduled.md). A room with no "
      f"capacity limit admitting {r['config']['admit_per_second']} a second; visitors wait on SSE.", "",
      f"- visitors: {p['visits']['planned']}, admitted {p['visits']['admitted']}, left {p['visits']['left']}, "
      f"abandoned {p['visits']['abandoned']}, errors {sum(p['errors'].values())}",
      f"- admissions seen per second while the line drained: min {min(busy[1:-1] or busy or [0])}, "
      f"max {max(busy or [0])} (the bucket refills every second)",
      f"- time to admission p50 {p['time_to_admission_ms']['p50']/1000:.1f} s, p99 {p['time_to_admission_ms']['p99']/1000:.1f} s",
      f"- order: inversions {p['truth']['inversions']}, positions grew {p['truth']['positions_grew']}, unresolved {p['truth']['unresolved']}",
      f"- verdict: {'PASS' if r['passed'] else 'FAIL'}"]
open(out, "w").write("\n".join(L) + "\n")
print(open(out).read())
PY
