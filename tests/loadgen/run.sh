#!/usr/bin/env bash
# The loadgen against a real server: seed 000's scripted visit, then a small surge (500
# users, the seed 002 way) on each transport and a small protect run. Asserts what the
# reports say: PASS, zero errors, zero inversions, every ticket resolved. Loopback only,
# bounded, stops by itself.
# usage: tests/loadgen/run.sh PATH/TO/anteroom PATH/TO/anteroom-loadgen OUTDIR
set -euo pipefail
SERVER=$1
LOADGEN=$2
OUT=$3
work=$(mktemp -d)
pid=
cleanup() {
  [[ -n $pid ]] && kill "$pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$OUT"
mkdir -p "$OUT"

KEY=loadgen-test-admin-key
"$SERVER" --listen 127.0.0.1:0 --data-dir "$work/data" --appendfsync everysec --admin-key "$KEY" \
  --token-secret loadgen-test-token-secret-0123456789 >"$work/server.out" 2>&1 &
pid=$!
for _ in $(seq 1 100); do
  grep -q '^anteroom listening on' "$work/server.out" 2>/dev/null && break
  sleep 0.05
done
PORT=$(sed -n 's|^anteroom listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$work/server.out")
[[ -n $PORT ]] || fail "the server did not start: $(cat "$work/server.out")"
export ANTEROOM_ADMIN_KEY=$KEY
T=127.0.0.1:$PORT

# Reads a report and checks what must hold; prints one line.
check() {
  python3 - "$1" "$2" <<'PY'
import json, sys
path, strict = sys.argv[1], sys.argv[2] == "strict"
r = json.load(open(path))
bad = [c["name"] + " (" + c["detail"] + ")" for c in r["checks"] if not c["passed"]]
if not r["passed"] or bad:
    sys.exit(f"{path}: checks failed: {bad}")
for p in r["phases"]:
    if p["name"] == "direct":
        continue
    t = p["truth"]
    if t["inversions"] or t["join_order_violations"] or t["positions_grew"] or t["unresolved"]:
        sys.exit(f"{path}: truth checks: {t}")
    if strict and sum(p["errors"].values()) != 0:
        sys.exit(f"{path}: errors {p['errors']}")
    v = p["visits"]
    if strict and v["joined"] != v["planned"]:
        sys.exit(f"{path}: {v['joined']} of {v['planned']} joined")
    if strict and v["left"] + v["abandoned"] + v["expired"] != v["planned"]:
        sys.exit(f"{path}: not every visit ended: {v}")
print(f"ok {path}: {r['scenario']} " + ", ".join(
    f"{p['name']}: {p['visits']['planned']} visitors, {p['requests']} requests, "
    f"error rate {p['error_rate']:.3f}" for p in r["phases"]))
PY
}

"$LOADGEN" seed-visit --target "$T" --out "$OUT/seed-visit" --quiet >"$work/seed.txt" ||
  { cat "$work/seed.txt"; fail "seed-visit"; }
grep -c '^PASS ' "$work/seed.txt" | grep -qx 10 || { cat "$work/seed.txt"; fail "seed-visit steps"; }
grep -q '^FAIL' "$work/seed.txt" && fail "a seed-visit step failed"
check "$OUT/seed-visit.json" strict

for transport in poll sse ws; do
  "$LOADGEN" surge --target "$T" --users 500 --capacity 100 --stay 0.2 --transport "$transport" \
    --abandon 0.04 --patience 2 --out "$OUT/surge-$transport" --quiet >"$work/surge.txt" ||
    { tail -40 "$work/surge.txt"; fail "surge over $transport"; }
  check "$OUT/surge-$transport.json" strict
done

"$LOADGEN" protect --target "$T" --users 300 --origin-capacity 30 --origin-service-ms 50 \
  --out "$OUT/protect" --quiet >"$work/protect.txt" || { tail -40 "$work/protect.txt"; fail "protect"; }
check "$OUT/protect.json" lenient
python3 - "$OUT/protect.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
d, q = r["phases"]
assert d["errors"]["5xx"] > 0, "the origin should refuse some of 300 direct visitors"
assert sum(q["errors"].values()) == 0, q["errors"]
assert q["visits"]["used"] == q["visits"]["planned"], q["visits"]
print(f"ok protect: direct error rate {d['error_rate']:.2f}, queued {q['error_rate']:.2f}")
PY
for f in surge-poll surge-ws protect; do
  [[ $(grep -o '<svg' "$OUT/$f.html" | wc -l) -ge 4 ]] || fail "$f.html lacks its charts"
  grep -q '^# ' "$OUT/$f.md" || fail "$f.md has no title"
done
grep -q 'user_10000 is admitted' "$OUT/seed-visit.md" || fail "seed-visit.md lacks its steps"
echo "PASS: loadgen against a real server"
