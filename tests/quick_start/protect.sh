#!/usr/bin/env bash
# The README's quick start, scripts/protect, as a visitor meets it: a site on a free port,
# the script run in front of it (with Caddy, then with nginx), the first visitor reaching
# the site, the next one (the room holds one) getting the waiting page; then the script
# stopped with TERM, as Ctrl-C would, leaving anteroom and the proxy stopped too.
# usage: tests/quick_start/protect.sh PATH/TO/anteroom
set -euo pipefail
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../cluster/lib.sh"
mkdir -p "$work/site"
echo "THE SITE" >"$work/site/index.html"
O=$(free_port)
python3 -m http.server "$O" --bind 127.0.0.1 --directory "$work/site" >/dev/null 2>&1 &
pids+=($!)
wait_port "$O"

for proxy in caddy nginx; do
  N=$(free_port); A=$(free_port)
  extra=()
  [[ $proxy == nginx ]] && extra=(--nginx)
  ANTEROOM_BIN=$BIN "$HERE/../../scripts/protect" "http://127.0.0.1:$O" --port "$N" \
    --anteroom-port "$A" --data "$work/data-$proxy" --capacity 1 "${extra[@]}" \
    >"$work/protect-$proxy.out" 2>&1 &
  protect=$!
  wait_port "$N"
  first=$(curl -s -L -c "$work/jar-$proxy" -b "$work/jar-$proxy" -H "Accept: text/html" \
    "http://127.0.0.1:$N/")
  grep -q "THE SITE" <<<"$first" || fail "$proxy: the first visitor did not reach the site: $first"
  curl -s -b "$work/jar-$proxy" "http://127.0.0.1:$N/" | grep -q "THE SITE" ||
    fail "$proxy: the first visitor's cookie did not let them back in"
  second=$(curl -s -L -H "Accept: text/html" "http://127.0.0.1:$N/")
  grep -q 'id="position"' <<<"$second" || fail "$proxy: the second visitor did not get the page"
  pass "$proxy: one command puts the room in front of the site: the first visitor in, the next one waits"
  kill -TERM "$protect"
  wait "$protect" 2>/dev/null || true
  for p in "$N" "$A"; do
    for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || break; sleep 0.05; done
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && fail "$proxy: port $p still answers after TERM"
  done
  pass "$proxy: TERM stops anteroom and the proxy"
done
echo "quick start: 4 passed, 0 failed"
