#!/usr/bin/env bash
# The loadgen names the server's connection limits: a hold of 60 sessions from one source
# address against a server allowing 20 per address, then against one allowing 30 connections
# in all. Asserts that the report counts the refusals under limit_per_address and
# limit_connections (not as plain HTTP errors) and that its Markdown says which option or
# loadgen flag to change. Loopback only; about 25 s.
# usage: tests/loadgen/limits.sh PATH/TO/anteroom PATH/TO/anteroom-loadgen
set -euo pipefail
SERVER=$1
LOADGEN=$2
source "$(dirname "$0")/lib.sh"

# Runs a hold of 60 sessions (it fails: some are refused) and checks its report: KIND counted
# at least once, the other limit never, and the advice naming FLAG.
hold_refused() {
  local name=$1 kind=$2 other=$3 flag=$4
  "$LOADGEN" hold --target "127.0.0.1:$PORT" --users 60 --sources 1 --duration 1 --out "$work/$name" \
    --quiet >"$work/$name.txt" 2>&1 && fail "$name: a hold past the limit passed"
  [[ -f $work/$name.json ]] || { tail -20 "$work/$name.txt"; fail "$name: no report"; }
  python3 - "$work/$name.json" "$kind" "$other" <<'PY'
import json, sys
path, kind, other = sys.argv[1:]
r = json.load(open(path))
errors = {}
for p in r["phases"]:
    for k, v in p["errors"].items():
        errors[k] = errors.get(k, 0) + v
if errors.get(kind, 0) == 0 or errors.get(other, 0) != 0:
    sys.exit(f"{path}: errors {errors}")
print(f"ok {path}: errors {errors}")
PY
  grep -q -- "$flag" "$work/$name.md" || fail "$name.md does not name $flag"
}

start_server limits --max-connections-per-address 20
hold_refused per-address limit_per_address limit_connections --max-connections-per-address
kill "$pid"
wait "$pid" 2>/dev/null || true

start_server limits --max-connections 30 --operator-reserve 0
hold_refused total limit_connections limit_per_address "--max-connections "
echo "PASS: the loadgen names the server's connection limits"
