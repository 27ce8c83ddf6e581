#!/usr/bin/env bash
# The bots scenario against a real server: 150 humans (one address each) arrive over 5 s
# while 10 bot addresses hammer joins. Three runs:
#   1. per-address limit (2 a minute) and proof of work at 8 bits: the humans get at least 90%
#      of their fair share, bots are refused 429 and 403 (pow_required, pow_invalid), no
#      unsolved or replayed proof is accepted, no human is refused;
#   2. the limit alone (no proof of work): the same share, the bots refused 429 only;
#   3. no defence at all, briefly: the bots flood the line and the loadgen must say FAIL
#      (the fair-share verdict can fail).
# Loopback only; the reports go to a temporary directory; about 30 s.
# usage: tests/loadgen/bots.sh PATH/TO/anteroom PATH/TO/anteroom-loadgen
set -euo pipefail
SERVER=$1
LOADGEN=$2
source "$(dirname "$0")/lib.sh"
start_server bots
COMMON=(--target "127.0.0.1:$PORT" --users 150 --arrival-rate 30 --bots 10 --bot-connections 2
        --quiet)

# Reads a report; "pow", "limit" or "none" says which run it is.
check() {
  python3 - "$1" "$2" <<'PY'
import json, sys
path, kind = sys.argv[1], sys.argv[2]
r = json.load(open(path))
checks = {c["name"]: c for c in r["checks"]}
m = {x["name"]: x["value"] for x in r["metrics"]}
def bots(what):
    return sum(v for k, v in m.items() if k.startswith("bots (") and k.endswith("): " + what))
ratio = m["humans' share / fair share"]
if kind == "none":
    # No defence: the bots' tickets fill the line ahead of the humans.
    if r["passed"] or checks["humans got >= 90% of their fair share of admissions"]["passed"]:
        sys.exit(f"{path}: undefended, the verdict should fail: ratio {ratio}")
    if bots("201 tickets") < 1000:
        sys.exit(f"{path}: undefended, the bots got only {bots('201 tickets')} tickets")
    print(f"ok {path}: undefended, humans' share / fair share {ratio:.3f}, "
          f"bots' tickets {bots('201 tickets'):.0f}")
    sys.exit(0)
bad = [n + " (" + c["detail"] + ")" for n, c in checks.items() if not c["passed"]]
if not r["passed"] or bad:
    sys.exit(f"{path}: checks failed: {bad}")
need = ["humans got >= 90% of their fair share of admissions", "every human admitted",
        "no human rate limited", "bots were refused (429 or 403)",
        "no bot address past the per-address limit",
        "the server counted every join (humans' and bots')", "baseline: every human admitted",
        "baseline: no errors", "with bots: no errors"]
if kind == "pow":
    need += ["no join without a solved challenge accepted", "no solution accepted twice"]
missing = [n for n in need if n not in checks]
if missing:
    sys.exit(f"{path}: checks missing: {missing}")
if ratio < 0.9 or m["with bots: humans admitted"] != 150 or m["with bots: humans' joins answered 429"] != 0:
    sys.exit(f"{path}: humans: ratio {ratio}, metrics {m}")
if bots("429 rate_limited") == 0:
    sys.exit(f"{path}: no bot join was rate limited")
if m["most tickets one bot address got"] > 4:  # 2 a minute, over less than a minute
    sys.exit(f"{path}: a bot address got {m['most tickets one bot address got']} tickets")
if kind == "pow":
    if m["bots (no proof): 403 pow_required"] == 0 or m["bots (wrong nonce): 403 pow_invalid"] == 0:
        sys.exit(f"{path}: the bots without a proof were not refused 403: {m}")
    if m["bots (no proof): 201 tickets"] or m["bots (wrong nonce): 201 tickets"]:
        sys.exit(f"{path}: a bot without a proof got a ticket")
    if m["bots: proofs of work solved"] == 0 or m["with bots: humans' proof of work, arrival to solved (p99)"] <= 0:
        sys.exit(f"{path}: nobody solved a proof of work")
    replays = checks["no solution accepted twice"]["detail"]
    if replays.startswith("0 "):
        sys.exit(f"{path}: no solution was replayed: {replays}")
else:
    if bots("403 pow_required") or bots("403 pow_invalid"):
        sys.exit(f"{path}: 403s without proof of work")
extra = m["humans' extra wait with bots (p50)"]
print(f"ok {path}: humans' share / fair share {ratio:.3f}, bots' 429 {bots('429 rate_limited'):.0f}, "
      f"403 {bots('403 pow_required') + bots('403 pow_invalid'):.0f}, extra wait p50 {extra:.3f} s")
PY
}

"$LOADGEN" bots "${COMMON[@]}" --ip-joins-per-minute 2 --pow-difficulty 8 --out "$work/pow" \
  >"$work/pow.txt" || { tail -80 "$work/pow.txt"; fail "bots with the limit and proof of work"; }
check "$work/pow.json" pow

"$LOADGEN" bots "${COMMON[@]}" --ip-joins-per-minute 2 --out "$work/limit" >"$work/limit.txt" ||
  { tail -80 "$work/limit.txt"; fail "bots with the limit alone"; }
check "$work/limit.json" limit

# Undefended: the phase is cut at 6 s (the humans never reach the front), and must FAIL (1).
status=0
"$LOADGEN" bots "${COMMON[@]}" --ip-joins-per-minute 0 --no-baseline --duration 6 --timeout 3 \
  --out "$work/none" >"$work/none.txt" || status=$?
[[ $status == 1 ]] || { tail -40 "$work/none.txt"; fail "undefended run exited $status, not 1"; }
check "$work/none.json" none
echo "PASS: bots against a real server"
