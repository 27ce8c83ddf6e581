#!/usr/bin/env bash
# deploy/compose/compose.yaml with podman-compose: one command up (the images built from
# the source tree with --pull=never on the Debian 12 base tests/deploy/container_lib.sh
# makes), then a visitor's whole trip through its nginx: the site open while no room
# matches; a room made; a visitor in line gets the waiting page, joins, is admitted by an
# operator, and is let through to the shop with the room's cookie; a forged X-Forwarded-For
# does not escape the per-address join limit; every node ready (anteroom health inside each
# container); Redis reached with its password only. One command down; the volumes stay until the test removes
# them. Skipped (77) without podman-compose. Stops by itself.
# usage: tests/deploy/compose.sh SOURCE_DIR
set -euo pipefail
SRC=$(cd "$1" && pwd)
command -v podman-compose >/dev/null && command -v mmdebstrap >/dev/null ||
  { echo "SKIP: no podman-compose"; exit 77; }
source "$SRC/tests/cluster/lib.sh"
source "$SRC/tests/deploy/container_lib.sh"
PROJECT=anteroom-test-$$
FILE=$SRC/deploy/compose/compose.yaml
compose() { podman-compose -p "$PROJECT" -f "$FILE" "$@"; }
export ANTEROOM_TOKEN_SECRET=compose-test-token-secret-0123456789abcdef
export ANTEROOM_ADMIN_KEY=compose-test-admin-key-01
export ANTEROOM_REDIS_PASSWORD=compose-test-redis-password-01
ANTEROOM_HTTP_PORT=$(free_port)
export ANTEROOM_HTTP_PORT
extra_cleanup() {
  compose down -t 0 >/dev/null 2>&1 || true
  for v in $(podman volume ls -q --filter "name=${PROJECT}_"); do podman volume rm -f "$v" >/dev/null 2>&1; done
}
debian_base
started=$(date +%s)
compose --podman-build-args='--pull=never --network host --format docker' up -d --build \
  >"$work/up.log" 2>&1 || fail "compose up: $(tail -5 "$work/up.log")"
pass "compose up ($(( $(date +%s) - started )) s, the images built)"

P=$ANTEROOM_HTTP_PORT
KEY=$ANTEROOM_ADMIN_KEY
for _ in $(seq 1 200); do
  curl -sf "127.0.0.1:$P/" >/dev/null 2>&1 && break
  sleep 0.1
done
curl -sf "127.0.0.1:$P/" | grep -q "Welcome to the shop" || fail "the shop is not open through nginx: $(compose logs 2>&1 | tail -5)"
pass "no room matches yet: the shop answers through nginx"

curl -sf -X PUT -H "Authorization: Bearer $KEY" "127.0.0.1:$P/v1/rooms/shop" \
  -d '{"capacity":0,"admission":"manual","match":[{"path_prefix":"/"}]}' >/dev/null ||
  fail "cannot make the room through nginx"
python3 - "$P" "$KEY" <<'PY' || fail "see above"
import http.client, json, re, sys, time
port, key = int(sys.argv[1]), sys.argv[2]

def call(method, path, body=None, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    h = {"Accept": "text/html", "Host": "shop.example"}
    h.update(headers or {})
    c.request(method, path, body=body, headers=h)
    r = c.getresponse()
    return r.status, dict((k.lower(), v) for k, v in r.getheaders()), r.read().decode(errors="replace")

failed = []
def check(cond, what):
    print(("PASS: " if cond else "FAIL: ") + what)
    if not cond:
        failed.append(what)

# The room is made through one node; each node learns it from Redis.
for _ in range(100):
    status, _, page = call("GET", "/products/42")
    if "Welcome to the shop" not in page:
        break
    time.sleep(0.1)
check(status == 200 and "Welcome to the shop" not in page and "<html" in page.lower(),
      "a visitor in line gets the waiting page in place of the shop")
status, _, body = call("POST", "/v1/rooms/shop/tickets", "{}",
                       {"Content-Type": "application/json", "Origin": "http://shop.example"})
check(status == 201, "the visitor joins through nginx (%d)" % status)
ticket = json.loads(body)["ticket"]
status, _, body = call("POST", "/v1/rooms/shop/admit", json.dumps({"count": 1}),
                       {"Authorization": "Bearer " + key, "Content-Type": "application/json"})
check(status == 200, "an operator admits one (%d %s)" % (status, body[:80]))
seen = set()
cookie = None
for _ in range(100):
    status, headers, body = call("GET", "/v1/rooms/shop/tickets/" + ticket)
    state = json.loads(body).get("status")
    seen.add(body)
    if state in ("ALLOWED", "ACTIVE"):
        break
    time.sleep(0.1)
check(state in ("ALLOWED", "ACTIVE"), "the visitor is admitted (%s)" % state)
# The page's own step once admitted: the cookie route, which sets the room's cookie.
status, headers, body = call("POST", "/v1/rooms/shop/tickets/%s/cookie" % ticket, "{}",
                             {"Content-Type": "application/json", "Origin": "http://shop.example"})
set_cookie = headers.get("set-cookie", "")
m = re.match(r"([^=;]+=[^;]+)", set_cookie)
check(status in (200, 204) and m is not None, "the cookie route sets the room's cookie (%d)" % status)
if m:
    status, _, page = call("GET", "/products/42", headers={"Cookie": m.group(1)})
    check(status == 200 and "Welcome to the shop" in page, "with it, the visitor reaches the shop")
sys.exit(1 if failed else 0)
PY
pass "a visitor's whole trip through the compose file's nginx and nodes"

# The nodes trust private addresses as proxies, and this visitor comes from one (the
# container network's gateway): a forged X-Forwarded-For must still not choose its address.
# One join a minute per address, counted by each node: seven joins from one address with
# seven forged ones get at most three tickets (one a node), where believed they would get 7.
curl -sf -X PUT -H "Authorization: Bearer $KEY" "127.0.0.1:$P/v1/rooms/limited" \
  -d '{"capacity":0,"admission":"manual","ip_joins_per_minute":1}' >/dev/null || fail "second room"
codes=""
for forged in 1.1.1.1 2.2.2.2 3.3.3.3 4.4.4.4 5.5.5.5 6.6.6.6 7.7.7.7; do
  for _ in $(seq 1 50); do  # a node that has not applied the new room yet answers 404
    code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "X-Forwarded-For: $forged" \
      "127.0.0.1:$P/v1/rooms/limited/tickets" -d '{}')
    [[ $code != 404 ]] && break
    sleep 0.1
  done
  codes+="$code "
done
ok=$(grep -o 201 <<<"$codes" | wc -l); limited=$(grep -o 429 <<<"$codes" | wc -l)
(( ok <= 3 && limited >= 4 )) || fail "forged X-Forwarded-For chose the address: $codes"
pass "a forged X-Forwarded-For does not escape the per-address join limit ($codes)"

# Every node is ready, asked from inside its container (no curl in the image).
for n in node1 node2 node3; do
  podman exec "${PROJECT}_${n}_1" /usr/bin/anteroom health 127.0.0.1:8080 /readyz >/dev/null ||
    fail "$n is not ready"
done
pass "the three nodes are ready"
t0=$(date +%s)
compose down >"$work/down.log" 2>&1 || fail "compose down: $(tail -5 "$work/down.log")"
[[ -z $(podman ps -q --filter "name=${PROJECT}_") ]] || fail "containers left after down"
[[ -n $(podman volume ls -q --filter "name=${PROJECT}_redis-data") ]] || fail "down removed Redis's volume"
pass "compose down ($(( $(date +%s) - t0 )) s): nothing runs, the volumes stay"
