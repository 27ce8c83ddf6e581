#!/usr/bin/env bash
# The drop scenario against a real server: a scheduled event with a 3 s pre-queue and 200
# visitors, once drawn (visitors on SSE) and once in join order (visitors polling). Asserts
# the loadgen passed and what its report says: the draw verified (or, without a shuffle, that
# there is none), no order violations, everyone admitted, and the wait by arrival fifth.
# Loopback only; the reports go to a temporary directory; about 16 s.
# usage: tests/loadgen/drop.sh PATH/TO/anteroom PATH/TO/anteroom-loadgen
set -euo pipefail
SERVER=$1
LOADGEN=$2
source "$(dirname "$0")/lib.sh"
start_server drop

# Reads a report; "shuffle" or "join" says which verdicts it must carry.
check() {
  python3 - "$1" "$2" <<'PY'
import json, sys
path, kind = sys.argv[1], sys.argv[2]
r = json.load(open(path))
checks = {c["name"]: c for c in r["checks"]}
bad = [n + " (" + c["detail"] + ")" for n, c in checks.items() if not c["passed"]]
if not r["passed"] or bad:
    sys.exit(f"{path}: checks failed: {bad}")
need = ["order violations", "every visitor admitted", "every visitor joined in the pre-queue",
        "pre-start answers: position null and opens_at", "no errors"]
if kind == "shuffle":
    need += ["draw verified", "every visitor in the draw exactly once",
             "admission in drawn order", "wait flat across arrival fifths (max mean <= 1.5x min)"]
    if "200 refs in HMAC order" not in checks["draw verified"]["detail"]:
        sys.exit(f"{path}: draw verified says {checks['draw verified']['detail']}")
else:
    need += ["no draw without shuffle (404 not_drawn)", "admission in join order",
             "wait rises with arrival fifth"]
missing = [n for n in need if n not in checks]
if missing:
    sys.exit(f"{path}: checks missing: {missing}")
m = {x["name"]: x["value"] for x in r["metrics"]}
fifths = [m[f"wait after start, arrivals {o} fifth (mean)"] for o in ("1st", "2nd", "3rd", "4th", "5th")]
if m["visitors"] != 200 or m["joined in the pre-queue"] != 200:
    sys.exit(f"{path}: metrics {m}")
if kind == "shuffle" and m["draw size"] != 200:
    sys.exit(f"{path}: draw size {m['draw size']}")
print(f"ok {path}: admission took {m['admission took']:.2f} s, wait by arrival fifth "
      + ", ".join(f"{w:.2f}" for w in fifths) + " s")
PY
}

"$LOADGEN" drop --target "127.0.0.1:$PORT" --users 200 --prequeue-s 3 --shuffle \
  --out "$work/drop-shuffle" --quiet >"$work/shuffle.txt" ||
  { tail -60 "$work/shuffle.txt"; fail "drop with a shuffle"; }
check "$work/drop-shuffle.json" shuffle
grep -q '| draw verified | PASS |' "$work/drop-shuffle.md" || fail "drop-shuffle.md: no verified draw"

"$LOADGEN" drop --target "127.0.0.1:$PORT" --users 200 --prequeue-s 3 --no-shuffle \
  --transport poll --out "$work/drop-join" --quiet >"$work/join.txt" ||
  { tail -60 "$work/join.txt"; fail "drop in join order"; }
check "$work/drop-join.json" join
echo "PASS: drop against a real server"
