#!/usr/bin/env bash
# Real nginx in the shape ingress-nginx generates for auth-url / auth-signin
# (deploy/nginx/ingress-nginx-shape.conf): the gate asked with X-Original-URL and a Host of
# its own; with room to spare the visitor reaches the origin at once and the gate's cookie
# rides on the answer; once a line forms the 401 becomes a 302 to /wait?rd=<the URL>, whose
# page is the room's and goes back to the address; the admitted cookie opens the origin; a
# site path that only starts like anteroom's (/waitlist) stays the site's. First, that
# deploy/kubernetes/ingress.yaml's annotations and paths are the ones this shape is made of.
# Everything on 127.0.0.1, stops by itself.
# usage: tests/nginx/ingress_shape.sh PATH/TO/anteroom
set -euo pipefail
BIN=$1
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh"

python3 - "$HERE/../../deploy/kubernetes/ingress.yaml" "$HERE/../../deploy/nginx/ingress-nginx-shape.conf" <<'PY' || fail "deploy/kubernetes/ingress.yaml and the shape disagree"
import sys, yaml
site, own = list(yaml.safe_load_all(open(sys.argv[1])))
a = site["metadata"]["annotations"]
p = "nginx.ingress.kubernetes.io/"
assert a[p + "auth-url"].endswith("/v1/gate"), a
assert "/wait?rd=$escaped_request_uri" in a[p + "auth-signin"], a
assert a[p + "auth-response-headers"] == "X-Anteroom-Visitor", a
assert a[p + "auth-always-set-cookie"] == "true", a
paths = [(x["path"], x["pathType"]) for x in own["spec"]["rules"][0]["http"]["paths"]]
assert paths == [("/wait", "Prefix"), ("/v1/rooms", "Prefix"), ("/v1/enter", "Exact")], paths
conf = open(sys.argv[2]).read()
for loc in ("location = /wait {", "location /wait/ {", "location /v1/rooms/ {", "location = /v1/enter {"):
    assert loc in conf, loc
PY
pass "deploy/kubernetes/ingress.yaml's annotations and paths are the shape's"

A=$(free_port); O=$(free_port); N=$(free_port)
KEY=ingress-shape-admin-key
"$BIN" --listen "127.0.0.1:$A" --data-dir "$work/data" --no-persistence --admin-key "$KEY" \
  --trusted-proxy 127.0.0.1 --token-secret ingress-shape-token-secret-0123456789 \
  >"$work/anteroom.log" 2>&1 &
pids+=($!)
mkdir -p "$work/origin/shop"
echo "ORIGIN OK" >"$work/origin/shop/index.html"
echo "THE SITE'S WAITLIST" >"$work/origin/waitlist"
python3 -m http.server "$O" --bind 127.0.0.1 --directory "$work/origin" >/dev/null 2>&1 &
pids+=($!)
sed -e "s/127.0.0.1:8000/127.0.0.1:$N/; s/127.0.0.1:8080/127.0.0.1:$A/; s/127.0.0.1:9000/127.0.0.1:$O/" \
  "$HERE/../../deploy/nginx/ingress-nginx-shape.conf" >"$work/site.conf"
start_nginx "$work/site.conf"
wait_port "$A"; wait_port "$O"; wait_port "$N"
admin() { curl -sf -X "$1" -H "Authorization: Bearer $KEY" "http://127.0.0.1:$A$2" ${3:+-d "$3"}; }

admin PUT /v1/rooms/shop '{"capacity":1,"match":[{"path_prefix":"/shop/"}]}' >/dev/null ||
  fail "cannot create the room"
first=$(curl -s -i -H 'Accept: text/html' "http://127.0.0.1:$N/shop/")
grep -q "ORIGIN OK" <<<"$first" || fail "with room to spare the visitor did not reach the origin: $(head -1 <<<"$first")"
cookie=$(sed -n 's/^Set-Cookie: \(anteroom_shop=[^;]*\);.*/\1/p' <<<"$first" | tr -d '\r')
[[ -n $cookie ]] || fail "the gate's cookie did not ride on the answer: $(grep -i cookie <<<"$first")"
pass "with room to spare: the origin at once, and the gate's one cookie rides on the answer"

# The one slot is taken: a new visitor is sent to the waiting page by auth-signin.
page=$(curl -s -i -H 'Accept: text/html' "http://127.0.0.1:$N/shop/item?x=1")
grep -q "^HTTP/1.1 302" <<<"$page" || fail "no signin redirect: $(head -1 <<<"$page")"
rd=$(sed -n 's/^Location: \(.*\)\r$/\1/p' <<<"$page")
[[ $rd == "http://127.0.0.1:$N/wait?rd=http://127.0.0.1:$N/shop/item?x=1" ]] || fail "the signin address: $rd"
shown=$(curl -s -H "Accept: text/html" "$rd")
grep -qF '"room":"shop"' <<<"$shown" || fail "/wait?rd= did not find the room"
grep -qF '"returnTo":"/shop/item?x=1"' <<<"$shown" || fail "the page does not go back to the address"
pass "once the room is full: 401 -> auth-signin's 302 -> the room's page, which goes back to the address"

through=$(curl -s -i -H "Cookie: $cookie" "http://127.0.0.1:$N/shop/")
grep -q "ORIGIN OK" <<<"$through" || fail "the admitted cookie did not open the origin"
grep -qi "^Set-Cookie: anteroom_shop=" <<<"$through" || fail "no fresh cookie on the admitted answer"
pass "the admitted visitor's cookie opens the origin and is renewed on the way"

grep -q "THE SITE'S WAITLIST" <<<"$(curl -s "http://127.0.0.1:$N/waitlist")" ||
  fail "/waitlist did not reach the site"
pass "a site path that starts like anteroom's (/waitlist) is the site's"
echo "ingress-nginx shape: 5 passed, 0 failed"
