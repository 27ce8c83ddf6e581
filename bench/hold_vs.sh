#!/usr/bin/env bash
# The hold scenario before and after: 19,000 SSE sessions held on one server process started
# as bench/loadgen_scenarios.sh starts it (persistence on, everysec, --max-connections
# 19500), over 20 source addresses (the server's per-address limit is 1,000), for a baseline
# binary and the binary under test in turn, ROUNDS times. Memory per session and the change's
# fan-out side by side. Writes results/hold-vs.md.
# usage: bench/hold_vs.sh BASELINE_BINARY [ANTEROOM_BINARY] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=$1
BIN=${2:-build/server/anteroom}
ROUNDS=${3:-2}
LG=build/loadgen/anteroom-loadgen
source bench/lib.sh
bench_workdir
export ANTEROOM_ADMIN_KEY=scenarios-admin-key-01

# hold BINARY NAME: runs the scenario; its report is $work/NAME.json
hold() {
  local bin=$1 name=$2 pid port
  rm -rf "$work/data" "$work/server.out"
  "$bin" --listen 127.0.0.1:0 --data-dir "$work/data" --appendfsync everysec \
    --admin-key "$ANTEROOM_ADMIN_KEY" --token-secret scenarios-token-secret-0123456789ab \
    --max-connections 19500 >"$work/server.out" 2>&1 &
  pid=$!
  for _ in $(seq 1 100); do grep -q '^anteroom listening' "$work/server.out" 2>/dev/null && break; sleep 0.05; done
  port=$(sed -n 's|^anteroom listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$work/server.out")
  "$LG" hold --users 19000 --sources 20 --transport sse --server-pid "$pid" --duration 3 \
    --target "127.0.0.1:$port" --out "$work/$name" --quiet >/dev/null || echo "checks failed: $name" >&2
  kill "$pid"
  wait "$pid" 2>/dev/null || true
}

names=()
for r in $(seq 1 "$ROUNDS"); do
  hold "$BASE" "base$r"
  hold "$BIN" "this$r"
  names+=("base$r" "this$r")
done
python3 - "$work" "$BASE" "$BIN" "$ROUNDS" "$(machine_line)" "${names[@]}" >results/hold-vs.md <<'PY'
import json, sys, datetime
work, base, binary, rounds, machine, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6:]
def m(name):
    r = json.load(open(f"{work}/{name}.json"))
    v = {x["name"]: x["value"] for x in r["metrics"]}
    return v, r["passed"]
print(f"# hold before and after\n\n`bench/hold_vs.sh {base} {binary} {rounds}` on {machine}, {datetime.date.today()}.")
print("19,000 SSE sessions on one server process (persistence on, everysec), the loadgen on the same")
print("machine over 20 source addresses; the binaries in turn, round by round.\n")
print("| round | binary | sessions held | memory per session | fan-out p50 / p99 / all | checks |")
print("|---:|---|---:|---:|---|---|")
for n in names:
    v, ok = m(n)
    print(f"| {n[-1]} | {'baseline' if n.startswith('base') else 'this'} | {v['sessions held at once']:.0f} | "
          f"{v['server memory per session'] / 1024:.2f} KiB | {v['change fan-out p50']:.0f} / "
          f"{v['change fan-out p99']:.0f} / {v['change reached all after']:.0f} ms | {'PASS' if ok else 'FAIL'} |")
print()
for key, label in [("server memory per session", "memory per session"), ("change reached all after", "fan-out to all")]:
    ratios = []
    for i in range(0, len(names), 2):
        b, _ = m(names[i]); t, _ = m(names[i + 1])
        ratios.append(t[key] / b[key] if b[key] else float("nan"))
    print(f"- {label}, this / baseline by round: " + ", ".join(f"{x:.2f}x" for x in ratios))
PY
cat results/hold-vs.md
