#!/usr/bin/env bash
# End to end through real Caddy 2.6 (Debian's caddy) with deploy/caddy/Caddyfile and
# Caddyfile.pass, a tiny origin and anteroom's forward-auth gate: while the room has room a
# visitor reaches the origin on the first request, never seeing the waiting page (through the
# one-time /v1/enter link in the short form, on the 200 in the expanded one); once a line
# forms a browser is sent to the page and a script gets JSON 429; a bypassed asset never
# makes a ticket. Everything on 127.0.0.1, stops by itself.
# With a browser script (tests/browser/site.mjs), it then runs it through Caddy (the short
# form) against a room of its own.
# usage: tests/caddy/run.sh PATH/TO/anteroom [BROWSER_SCRIPT.mjs [SCREENSHOT_PREFIX]]
set -euo pipefail
BIN=$1
BROWSER_SCRIPT=${2:-}
SCREENSHOT=${3:-}
HERE=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; tail -5 "$work/caddy.log" >&2 2>/dev/null || true; exit 1; }
pass() { echo "PASS: $*"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() {
  for _ in $(seq 1 200); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.05
  done
  fail "nothing listens on port $1"
}
command -v caddy >/dev/null || fail "caddy is not installed (scripts/deps.sh installs it)"

A=$(free_port); O=$(free_port)
KEY=caddy-test-admin-key
"$BIN" --listen "127.0.0.1:$A" --data-dir "$work/data" --no-persistence --admin-key "$KEY" \
  --trusted-proxy 127.0.0.1 --token-secret caddy-test-token-secret-0123456789abc \
  >"$work/anteroom.log" 2>&1 &
pids+=($!)
mkdir -p "$work/origin/shop" "$work/origin/static"
echo "ORIGIN OK" >"$work/origin/shop/index.html"
echo "body{}" >"$work/origin/static/site.css"
mkdir -p "$work/origin/store"
echo '<!doctype html><link rel="stylesheet" href="/static/site.css"><body>STORE OK</body>' \
  >"$work/origin/store/index.html"
python3 -m http.server "$O" --bind 127.0.0.1 --directory "$work/origin" >/dev/null 2>&1 &
pids+=($!)
wait_port "$A"; wait_port "$O"
admin() { curl -sf -X "$1" -H "Authorization: Bearer $KEY" "http://127.0.0.1:$A$2" ${3:+-d "$3"}; }
joined() { admin GET /v1/rooms/shop | python3 -c 'import json,sys; print(json.load(sys.stdin)["totals"]["joined"])'; }
browser=(-H 'Accept: text/html,application/xhtml+xml')

# Runs one Caddyfile on a port of its own: `caddy_with FILE` sets $C.
caddy_with() {
  C=$(free_port)
  # Loopback only (the bind), and Caddy's autosave in the work directory.
  sed -e "s/^:8000 {/:$C {\n\tbind 127.0.0.1/; s/127.0.0.1:8080/127.0.0.1:$A/g; s/127.0.0.1:9000/127.0.0.1:$O/" \
    "$HERE/../../deploy/caddy/$1" >"$work/$1"
  XDG_CONFIG_HOME=$work XDG_DATA_HOME=$work caddy run --config "$work/$1" --adapter caddyfile \
    >>"$work/caddy.log" 2>&1 &
  caddy_pid=$!
  pids+=("$caddy_pid")
  wait_port "$C"
}

# The short form: the cookie comes through the gate's one-time /v1/enter link.
admin PUT /v1/rooms/shop '{"capacity":2,"match":[{"path_prefix":"/shop/"}],
  "bypass":[{"name":"assets","path_prefix":"/static/"}]}' >/dev/null || fail "cannot create the room"
caddy_with Caddyfile
first=$(curl -s -i "${browser[@]}" -c "$work/jar1" "http://127.0.0.1:$C/shop/?x=1")
grep -q "^HTTP/1.1 302" <<<"$first" || fail "the first visit was not sent round for its cookie: $(head -1 <<<"$first")"
grep -qi "^Location: http://127.0.0.1:$C/v1/enter?t=" <<<"$first" || fail "not the one-time link: $(grep -i location <<<"$first")"
link=$(sed -n 's/^[Ll]ocation: \(.*\)\r$/\1/p' <<<"$first")
trip=$(curl -s -L "${browser[@]}" -b "$work/jar1" -c "$work/jar1" "$link")
grep -q "ORIGIN OK" <<<"$trip" || fail "with room to spare the visitor did not reach the origin: $trip"
grep -q 'id="position"' <<<"$trip" && fail "the visitor saw the waiting page with room to spare"
again=$(curl -s -i "${browser[@]}" -b "$work/jar1" "http://127.0.0.1:$C/shop/")
grep -q "^HTTP/1.1 200" <<<"$again" && grep -q "ORIGIN OK" <<<"$again" ||
  fail "the cookie did not open the origin on the next request"
pass "Caddy: with room to spare the first visit reaches the origin through one redirect, no waiting page"

before=$(joined)
for _ in 1 2 3; do
  grep -q "body{}" <<<"$(curl -s "http://127.0.0.1:$C/static/site.css")" || fail "the asset did not pass"
done
[[ $(joined) == "$before" ]] || fail "a bypassed asset made a ticket"
pass "Caddy: a bypassed asset reaches the origin and makes no ticket"

# A second visitor takes the last slot; a third finds a line and gets the page.
curl -s -L "${browser[@]}" -b "$work/jar2" -c "$work/jar2" "http://127.0.0.1:$C/shop/" | grep -q "ORIGIN OK" ||
  fail "the second visitor did not get in: $(curl -s -i -L "${browser[@]}" -b "$work/jar2" -c "$work/jar2" "http://127.0.0.1:$C/shop/" | head -30)"
admin POST /v1/rooms/shop/tickets '{}' >/dev/null  # waits: the room is full
page=$(curl -s -i "${browser[@]}" "http://127.0.0.1:$C/shop/?x=2")
grep -q "^HTTP/1.1 302" <<<"$page" || fail "a browser in a full room was not sent to the page"
grep -qi "^Location: http://127.0.0.1:$C/wait/shop?return=/shop/%3Fx%3D2" <<<"$page" ||
  fail "the page's address: $(grep -i location <<<"$page")"
shown=$(curl -s -L "${browser[@]}" "http://127.0.0.1:$C/shop/?x=2")
grep -q 'id="position"' <<<"$shown" || fail "the waiting page did not come through Caddy"
xhr=$(curl -s -i -H 'Accept: application/json' "http://127.0.0.1:$C/shop/api")
grep -q "^HTTP/1.1 429" <<<"$xhr" && grep -qi "^Retry-After: 5" <<<"$xhr" && grep -q '"code":"in_line"' <<<"$xhr" ||
  fail "a script did not get the JSON 429: $(head -1 <<<"$xhr")"
pass "Caddy: once a line forms, a browser gets the waiting page and a script JSON 429 with Retry-After"
for forged in "X-Original-URI: /static/x" "X-Original-URL: http://nobody.example/"; do
  r=$(curl -s -i "${browser[@]}" -H "$forged" "http://127.0.0.1:$C/shop/")
  grep -q "ORIGIN OK" <<<"$r" && fail "a visitor's own '$forged' let it past a full room"
  grep -q "^HTTP/1.1 302" <<<"$r" || fail "with '$forged' the visitor was not sent to the page: $(head -1 <<<"$r")"
done
pass "Caddy: a visitor's own X-Original-* headers do not choose the request the gate decides"
kill "$caddy_pid"

# The expanded form: the gate's cookie on its 200, no round trip.
admin PUT /v1/rooms/shop '{"capacity":9,"gate_cookies":"pass"}' >/dev/null
admin POST /v1/rooms/shop/clear >/dev/null
caddy_with Caddyfile.pass
direct=$(curl -s -i "${browser[@]}" -c "$work/jar3" "http://127.0.0.1:$C/shop/")
grep -q "^HTTP/1.1 200" <<<"$direct" && grep -q "ORIGIN OK" <<<"$direct" ||
  fail "the expanded form did not let the visitor straight in: $(head -1 <<<"$direct")"
grep -qi "^Set-Cookie: anteroom_shop=" <<<"$direct" || fail "the gate's cookie did not reach the visitor"
curl -s "${browser[@]}" -b "$work/jar3" "http://127.0.0.1:$C/shop/" | grep -q "ORIGIN OK" ||
  fail "the cookie from the 200 did not open the origin"
pass "Caddy (expanded form): the first request reaches the origin and carries the gate's cookie"
echo "caddy: 5 passed, 0 failed"
if [[ -n $BROWSER_SCRIPT ]]; then
  kill "$caddy_pid"
  echo 'body{background:rgb(1,2,3)}' >"$work/origin/static/site.css"
  caddy_with Caddyfile
  bash "$HERE/../browser/run.sh" "$BROWSER_SCRIPT" "http://127.0.0.1:$C" "http://127.0.0.1:$A" "$KEY" \
    ${SCREENSHOT:+"$SCREENSHOT"}
fi
