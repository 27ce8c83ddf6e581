#!/usr/bin/env bash
# End to end through real nginx with deploy/nginx/anteroom-fast-pass.conf: an admitted
# visitor gets the anteroom_fast cookie beside the admission cookie; with it nginx sends
# the next requests (a POST with its body too) to the origin without asking the gate; a
# changed, expired or other host's fast pass makes nginx ask the gate again. The hash is
# computed here on its own (Python's hashlib), so nginx, anteroom and this script agree on
# the formula. Everything on 127.0.0.1, stops by itself.
# usage: tests/nginx/fast_pass.sh PATH/TO/anteroom
set -euo pipefail
BIN=$1
HERE=$(cd "$(dirname "$0")" && pwd)
CONF="$HERE/../../deploy/nginx/anteroom-fast-pass.conf"
source "$HERE/lib.sh"

A=$(free_port); O=$(free_port); N=$(free_port)
KEY=nginx-test-admin-key
SECRET=fast-pass-test-secret-0123456789abcdef
"$BIN" --listen "127.0.0.1:$A" --data-dir "$work/data" --no-persistence --admin-key "$KEY" \
  --trusted-proxy 127.0.0.1 --fast-pass-secret "$SECRET" --fast-pass-seconds 30 \
  --token-secret nginx-test-token-secret-0123456789abc >"$work/anteroom.out" 2>&1 &
pids+=($!)
# The origin: says what it got (method, URI, body).
cat >"$work/origin.py" <<'PY'
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class H(BaseHTTPRequestHandler):
    def answer(self, body):
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        self.answer(b"ORIGIN GET " + self.path.encode())
    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        self.answer(b"ORIGIN POST " + self.path.encode() + b" " + self.rfile.read(n))
    def log_message(self, *a):
        pass
ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
python3 "$work/origin.py" "$O" &
pids+=($!)
echo "set \$anteroom_fast_pass_secret \"$SECRET\";" >"$work/secret.nginx"
sed -e "s/127.0.0.1:8000/127.0.0.1:$N/; s/127.0.0.1:8080/127.0.0.1:$A/; s/127.0.0.1:9000/127.0.0.1:$O/" \
  -e "s#/etc/anteroom/fast-pass-secret.nginx#$work/secret.nginx#" "$CONF" >"$work/anteroom.conf"
start_nginx "$work/anteroom.conf"
wait_port "$A"; wait_port "$O"; wait_port "$N"

curl -sf -X PUT -H "Authorization: Bearer $KEY" "http://127.0.0.1:$A/v1/rooms/shop" \
  -d '{"capacity":1,"match":[{"host":"shop.example"}]}' >/dev/null || fail "cannot create the room"
asks() {
  curl -s -H "Authorization: Bearer $KEY" "http://127.0.0.1:$A/metrics" |
    awk '/^anteroom_gate_answers_total/ {n += $2} END {print n + 0}'
}
site() { curl -s -i -H "Host: shop.example" -H "Accept: text/html" "$@"; }
fast_cookie() { sed -n 's/^Set-Cookie: \(anteroom_fast=[^;]*\);.*/\1/p' | tr -d '\r'; }

first=$(site "http://127.0.0.1:$N/item?id=7")
grep -q "ORIGIN GET /item?id=7" <<<"$first" || fail "the first visitor did not reach the origin: $first"
fast=$(fast_cookie <<<"$first")
admission=$(sed -n 's/^Set-Cookie: \(anteroom_shop=[^;]*\);.*/\1/p' <<<"$first" | tr -d '\r')
[[ -n $fast && -n $admission ]] || fail "not both cookies came back: $(grep -i set-cookie <<<"$first")"
pass "an admitted visitor gets the fast pass beside the admission cookie"

before=$(asks)
for i in 1 2 3; do
  r=$(site -H "Cookie: $fast" "http://127.0.0.1:$N/page/$i?q=a%20b")
  grep -q "ORIGIN GET /page/$i?q=a%20b" <<<"$r" || fail "a fast pass did not reach the origin: $r"
done
post=$(site -H "Cookie: $fast" -d 'qty=2' "http://127.0.0.1:$N/cart")
grep -q "ORIGIN POST /cart qty=2" <<<"$post" || fail "a POST with a fast pass lost its body: $post"
[[ $(asks) == "$before" ]] || fail "nginx asked the gate although the fast pass was valid"
pass "with it nginx sends GETs and a POST with its body to the origin without asking the gate"

# The room is full (one slot, held): any request nginx must ask about gets the waiting page.
check_page() {  # $1: what, the rest: curl arguments
  local what=$1 r
  shift
  r=$(site "$@")
  grep -q 'id="position"' <<<"$r" || fail "$what reached the origin: $(head -1 <<<"$r")"
}
hash_of() {  # EXPIRES HOST -> the value anteroom and nginx compute
  python3 -c 'import base64,hashlib,sys
e,h,s=sys.argv[1:]
d=hashlib.md5((e+" "+h+" "+s).encode()).digest()
print(base64.urlsafe_b64encode(d).decode().rstrip("=")+"."+e)' "$1" "$2" "$SECRET"
}
now=$(date +%s)
[[ $fast == "anteroom_fast=$(hash_of "${fast##*.}" shop.example)" ]] ||
  fail "the fast pass is not the documented MD5: $fast"
site -H "Cookie: anteroom_fast=$(hash_of $((now + 60)) shop.example)" "http://127.0.0.1:$N/x" |
  grep -q "ORIGIN GET /x" || fail "a fast pass made by the documented formula was refused"
check_page "an expired fast pass" -H "Cookie: anteroom_fast=$(hash_of $((now - 1)) shop.example)" \
  "http://127.0.0.1:$N/x"
check_page "another host's fast pass" -H "Cookie: anteroom_fast=$(hash_of $((now + 60)) other.example)" \
  "http://127.0.0.1:$N/x"
# Digits moved from a host to the expiry ("1" on 2shop.example as "12" on shop.example).
moved=$(hash_of $((now + 60)) 2shop.example)
check_page "a pass whose host's digit moved into its expiry" -H "Cookie: ${moved}2" \
  "http://127.0.0.1:$N/x"
tampered=${fast/anteroom_fast=?/anteroom_fast=A}
[[ $tampered != "$fast" ]] || tampered=${fast/anteroom_fast=?/anteroom_fast=B}
check_page "a changed fast pass" -H "Cookie: $tampered" "http://127.0.0.1:$N/x"
check_page "a fast pass with a later expiry" -H "Cookie: ${fast%.*}.$((${fast##*.} + 100))" \
  "http://127.0.0.1:$N/x"
check_page "a visitor without one" "http://127.0.0.1:$N/x"
pass "an expired, changed, extended or other host's fast pass makes nginx ask: the waiting page"
# Still admitted: the admission cookie goes through the gate, which gives a new fast pass.
again=$(site -H "Cookie: $admission" "http://127.0.0.1:$N/y")
grep -q "ORIGIN GET /y" <<<"$again" && [[ -n $(fast_cookie <<<"$again") ]] ||
  fail "the admission cookie did not bring a new fast pass: $again"
pass "the admission cookie, asked about again, brings a new fast pass"
echo "nginx fast pass: 4 passed, 0 failed"
