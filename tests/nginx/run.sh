#!/usr/bin/env bash
# End to end through real nginx (Debian nginx-light) with deploy/nginx/anteroom.conf, a
# tiny origin and anteroom: a visitor without admission gets the waiting page of the room
# whose match rules fit the address (the config names no room) instead of the origin; after
# admission the cookie lets them through; an address no room protects goes straight
# through. Everything on 127.0.0.1, stops by itself.
# With a browser script (tests/browser/bound.mjs), it then runs it against the same nginx:
# a real browser through the page, the proof of work and the gate.
# usage: tests/nginx/run.sh PATH/TO/anteroom [BROWSER_SCRIPT.mjs [SCREENSHOT.png]]
set -euo pipefail
BIN=$1
BROWSER_SCRIPT=${2:-}
SCREENSHOT=${3:-}
HERE=$(cd "$(dirname "$0")" && pwd)
CONF="$HERE/../../deploy/nginx/anteroom.conf"
source "$HERE/forged_forwarded_for.sh"
source "$HERE/lib.sh"

A=$(free_port); O=$(free_port); N=$(free_port)
KEY=nginx-test-admin-key

"$BIN" --listen "127.0.0.1:$A" --data-dir "$work/data" --no-persistence --admin-key "$KEY" \
  --trusted-proxy 127.0.0.1 \
  --token-secret nginx-test-token-secret-0123456789abc >"$work/anteroom.out" 2>&1 &
pids+=($!)
mkdir -p "$work/origin/shop" "$work/origin/tickets"
echo "ORIGIN OK" >"$work/origin/shop/index.html"
echo "ORIGIN OK" >"$work/origin/tickets/index.html"
echo "ABOUT US" >"$work/origin/about.html"
mkdir -p "$work/origin/store" "$work/origin/static"
echo '<!doctype html><link rel="stylesheet" href="/static/site.css"><body>STORE OK</body>' \
  >"$work/origin/store/index.html"
echo 'body{background:rgb(1,2,3)}' >"$work/origin/static/site.css"

python3 -m http.server "$O" --bind 127.0.0.1 --directory "$work/origin" >/dev/null 2>&1 &
pids+=($!)

sed -e "s/127.0.0.1:8000/127.0.0.1:$N/; s/127.0.0.1:8080/127.0.0.1:$A/; s/127.0.0.1:9000/127.0.0.1:$O/" \
  "$CONF" >"$work/anteroom.conf"
start_nginx "$work/anteroom.conf"
wait_port "$A"; wait_port "$O"; wait_port "$N"

curl -sf -X PUT -H "Authorization: Bearer $KEY" "http://127.0.0.1:$A/v1/rooms/demo" \
  -d '{"capacity":5,"admission":"manual","match":[{"path_prefix":"/shop/"}]}' >/dev/null ||
  fail "cannot create the room"
curl -sf -X PUT -H "Authorization: Bearer $KEY" "http://127.0.0.1:$A/v1/rooms/concert" \
  -d '{"capacity":0,"admission":"manual","match":[{"path_prefix":"/tickets/"}]}' >/dev/null ||
  fail "cannot create the second room"

grep -q "ABOUT US" <<<"$(curl -s "http://127.0.0.1:$N/about.html")" ||
  fail "an address no room protects did not reach the origin"
pass "an address no room protects goes straight to the origin"
other=$(curl -s -H "Accept: text/html" "http://127.0.0.1:$N/tickets/")
grep -qF '"room":"concert"' <<<"$other" || fail "the second room's address did not get its own page"
pass "one config, many rooms: each address gets the page of the room whose rules fit it"

page=$(curl -s -i -H "Accept: text/html" "http://127.0.0.1:$N/shop/?from=ad&x=1")
grep -q "^HTTP/1.1 200" <<<"$page" || fail "no waiting page: $(head -1 <<<"$page")"
grep -q 'id="position"' <<<"$page" || fail "the answer is not the waiting page"
grep -q "ORIGIN OK" <<<"$page" && fail "the origin was reached without admission"
grep -qF '"returnTo":"/shop/?from=ad&x=1"' <<<"$page" || fail "the page does not know where to return"
xhr=$(curl -s -i -H "Accept: application/json" "http://127.0.0.1:$N/shop/api")
grep -q "^HTTP/1.1 429" <<<"$xhr" && grep -q '"code":"in_line"' <<<"$xhr" ||
  fail "a script got no JSON 429 in place of the page: $(head -1 <<<"$xhr")"
form=$(curl -s -i -X POST -H "Accept: text/html" -d 'qty=1' "http://127.0.0.1:$N/shop/cart")
grep -q "^HTTP/1.1 429" <<<"$form" && grep -q '"code":"in_line"' <<<"$form" ||
  fail "a POST not admitted got no JSON 429 (nginx keeps its method): $(head -1 <<<"$form")"
pass "a visitor without admission gets the waiting page, not the origin; a script or a POST gets JSON 429"
for forged in "X-Original-URL: http://nobody.example/" "X-Original-URI: /about.html"; do
  r=$(curl -s -H "Accept: text/html" -H "$forged" "http://127.0.0.1:$N/shop/")
  grep -q "ORIGIN OK" <<<"$r" && fail "a visitor's own '$forged' reached the origin"
  grep -q 'id="position"' <<<"$r" || fail "with '$forged' the visitor did not get the page: $r"
done
invited=$(curl -s -H "Accept: text/html" "http://127.0.0.1:$N/shop/?invite=abc.def.ghi")
grep -qF '"invite":"abc.def.ghi"' <<<"$invited" || fail "an invite in the address did not reach the page"
pass "a visitor's own X-Original-* headers choose nothing; an invite in the address reaches the page"

join=$(curl -s -X POST "http://127.0.0.1:$N/v1/rooms/demo/tickets" -d '{"user":"visitor-1","key":"visitor-1-key"}')
ticket=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["ticket"])' <<<"$join")
[[ $(python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])' <<<"$join") == WAITING ]] ||
  fail "expected WAITING: $join"
pass "the visitor joined the line through nginx"

curl -sf -X POST -H "Authorization: Bearer $KEY" "http://127.0.0.1:$A/v1/rooms/demo/admit" \
  -d '{"count":1}' >/dev/null || fail "admit failed"
status=$(curl -s "http://127.0.0.1:$N/v1/rooms/demo/tickets/$ticket")
token=$(python3 -c 'import json,sys; print(json.load(sys.stdin).get("token",""))' <<<"$status")
[[ -n $token ]] || fail "no token after admission: $status"
pass "admitted: the status carries a token"

# The join named a key, so the admission is bound to it: the token alone (copied to another
# browser, replayed with curl) gets the waiting page.
copied=$(curl -s -H "Accept: text/html" -H "Cookie: anteroom_demo=$token" "http://127.0.0.1:$N/shop/")
grep -q "ORIGIN OK" <<<"$copied" && fail "a bound token without its key reached the origin"
grep -q 'id="position"' <<<"$copied" || fail "a bound token without its key did not get the waiting page"
pass "a bound token without its key gets the waiting page"

through=$(curl -s -i -H "Cookie: anteroom_demo=$token; anteroom_demo_key=visitor-1-key" "http://127.0.0.1:$N/shop/?from=ad&x=1")
grep -q "^HTTP/1.0 200\|^HTTP/1.1 200" <<<"$through" || fail "admitted visitor refused: $(head -1 <<<"$through")"
grep -q "ORIGIN OK" <<<"$through" || fail "admitted visitor did not reach the origin"
pass "with the cookie the visitor reaches the origin"

# One cookie comes back, the fresh token and the key together (TOKEN~KEY): the key is
# renewed with the token (the separate key cookie of earlier versions was never renewed).
fresh=$(sed -n 's/^Set-Cookie: anteroom_demo=\([^;]*\);.*/\1/p' <<<"$through" | tr -d '\r')
[[ -n $fresh && ${fresh%%~*} != "$token" && $fresh == *"~visitor-1-key" ]] ||
  fail "nginx did not pass on the gate's fresh token and key: $(grep -i set-cookie <<<"$through")"
again_through=$(curl -s -H "Cookie: anteroom_demo=$fresh" "http://127.0.0.1:$N/shop/")
grep -q "ORIGIN OK" <<<"$again_through" || fail "the refreshed cookie does not open the origin"
pass "each use hands the visitor one fresh cookie (token and key) through nginx"

again=$(curl -s -H "Cookie: anteroom_demo=forged.token.here" "http://127.0.0.1:$N/shop/")
grep -q "ORIGIN OK" <<<"$again" && fail "a forged cookie reached the origin"
pass "a forged cookie gets the waiting page"

curl -s -X DELETE "http://127.0.0.1:$N/v1/rooms/demo/tickets/$ticket" >/dev/null
gone=$(curl -s -H "Cookie: anteroom_demo=$token; anteroom_demo_key=visitor-1-key" "http://127.0.0.1:$N/shop/")
grep -q "ORIGIN OK" <<<"$gone" && fail "the cookie of a ticket that left still opens the origin"
pass "after leaving, the old cookie no longer opens the origin"
forged_forwarded_for_is_ignored "$N" "$A" "$KEY" demo
echo "nginx: 12 passed, 0 failed"
if [[ -n $BROWSER_SCRIPT ]]; then
  bash "$HERE/../browser/run.sh" "$BROWSER_SCRIPT" "http://127.0.0.1:$N" "http://127.0.0.1:$A" "$KEY" \
    ${SCREENSHOT:+"$SCREENSHOT"}
fi
