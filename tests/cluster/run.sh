#!/usr/bin/env bash
# Cluster nodes as real processes on a real redis-server (appendfsync always), all on
# 127.0.0.1, stopping by themselves:
#   1. kill -9 a node under joins: every join it acknowledged is on the other node, in the
#      same order, and its visitors keep their place there;
#   2. a token issued by one node is verified by another;
#   3. a node started with another token secret refuses to start;
#   4. (given the loadgen) visitors spread over three nodes, one killed under them: they move
#      to the others with their tickets and every truth check holds.
# usage: tests/cluster/run.sh PATH/TO/anteroom [PATH/TO/anteroom-loadgen]
set -euo pipefail
BIN=$1
LOADGEN=${2:-}
source "$(dirname "$0")/lib.sh"

R=$(free_port)
redis-server --port "$R" --bind 127.0.0.1 --dir "$work" --save "" --appendonly yes \
  --appendfsync always --logfile "$work/redis.log" &
pids+=($!)
wait_port "$R"

SECRET=$(python3 -c 'import secrets; print(secrets.token_urlsafe(40))')
ADMIN=cluster-admin-key-0123456789
# Each node listens on a port of the kernel's choosing (a port picked ahead could be taken by
# another test meanwhile); node_port reads it from the node's first line.
node() {  # name, [secret]
  mkdir -p "$work/$1"
  # The URL form (redis://HOST:PORT); tests/nginx/cluster.sh uses the bare HOST:PORT.
  "$BIN" --cluster "redis://127.0.0.1:$R" --node-name "$1" --listen "127.0.0.1:0" --data-dir "$work/$1" \
    --token-secret "${2:-$SECRET}" --admin-key "$ADMIN" --threads 1 >"$work/$1.log" 2>&1 &
  pids+=($!)
}
node n1; n1=$!
node n2
node_port n1 P1; node_port n2 P2

curl -sf -X PUT -H "Authorization: Bearer $ADMIN" "127.0.0.1:$P1/v1/rooms/sale" \
  -d '{"admission":"manual","capacity":0}' >/dev/null || fail "room not created"

# 1. Joins through n1 from four clients; n1 is killed while they run.
python3 - "$P1" "$work/acked" <<'PY' &
import http.client, json, sys, threading
port, out = int(sys.argv[1]), sys.argv[2]
acked, lock = [], threading.Lock()
def client():
    while True:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("POST", "/v1/rooms/sale/tickets", body="{}")
            r = c.getresponse()
            body = r.read()
            if r.status == 201:
                t = json.loads(body)
                with lock:
                    acked.append((t["ticket"], t["seq"]))
        except Exception:
            return  # the node is gone
threads = [threading.Thread(target=client) for _ in range(4)]
for t in threads: t.start()
for t in threads: t.join()
with open(out, "w") as f:
    for tid, seq in acked: f.write(f"{tid} {seq}\n")
PY
joiner=$!
for _ in $(seq 1 100); do
  n=$(curl -s -H "Authorization: Bearer $ADMIN" "127.0.0.1:$P2/v1/rooms/sale" |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["totals"]["joined"])')
  [[ $n -ge 300 ]] && break
  sleep 0.05
done
kill -9 "$n1"
wait "$joiner" || true
count=$(wc -l <"$work/acked")
[[ $count -ge 300 ]] || fail "only $count joins acknowledged before the kill"
python3 - "$P2" "$work/acked" <<'PY' || fail "an acknowledged join is missing or misplaced on n2"
import http.client, json, sys
port = int(sys.argv[1])
rows = [l.split() for l in open(sys.argv[2])]
c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
last = 0
for tid, seq in sorted(rows, key=lambda r: int(r[1])):
    c.request("GET", f"/v1/rooms/sale/tickets/{tid}")
    r = c.getresponse(); v = json.loads(r.read())
    assert r.status == 200, (tid, r.status, v)
    assert v["seq"] == int(seq), (tid, v["seq"], seq)
    assert v["status"] == "WAITING" and v["position"] > last, v
    last = v["position"]
print(f"{len(rows)} acknowledged joins, all on n2 in order")
PY
pass "kill -9 of a node under joins: all $count acknowledged joins kept their place on the other node"

# 2. A token from n2, verified by n3 (started now: it loads the room from Redis).
node n3; node_port n3 P3
# (awk reads all its input: `sort | head -1` under pipefail failed the script when head closed
# the pipe before sort had written everything.)
first=$(awk 'NR == 1 || $2 < min { min = $2; t = $1 } END { print t }' "$work/acked")
curl -sf -X POST -H "Authorization: Bearer $ADMIN" "127.0.0.1:$P2/v1/rooms/sale/admit" \
  -d '{"count":1}' | grep -q '"admitted":1' || fail "admit through n2"
token=$(curl -sf "127.0.0.1:$P2/v1/rooms/sale/tickets/$first" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
curl -sf -X POST -H "Authorization: Bearer $ADMIN" "127.0.0.1:$P3/v1/rooms/sale/verify" \
  -d "{\"token\":\"$token\"}" | grep -q '"status":"ACTIVE"' || fail "n3 did not verify n2's token"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Cookie: anteroom_sale=$token" "127.0.0.1:$P3/v1/gate/sale")
[[ $code == 204 ]] || fail "n3's gate did not let n2's token through ($code)"
pass "a token issued by one node is verified and gated by another"

# 2b. Proof of work and a bound admission across nodes: n2's challenge solved and spent at
# n3, once for the whole cluster (refused after at n3 and at n2), the key-bound token refused at n2 without its key and taken with it.
curl -sf -X PUT -H "Authorization: Bearer $ADMIN" "127.0.0.1:$P2/v1/rooms/guard" \
  -d '{"pow_difficulty":8}' >/dev/null || fail "guard room not created"
python3 - "$P2" "$P3" "$ADMIN" <<'PY' || fail "proof of work or binding across nodes"
import hashlib, http.client, json, sys
p2, p3, admin = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
def call(port, method, path, body=None, auth=False):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    h = {"Authorization": "Bearer " + admin} if auth else {}
    c.request(method, path, body=json.dumps(body) if body is not None else None, headers=h)
    r = c.getresponse()
    return r.status, json.loads(r.read() or b"{}")
for _ in range(100):  # n3 applies the room's record from Redis
    if call(p3, "GET", "/v1/rooms/guard/challenge")[1].get("difficulty") == 8: break
ch = call(p2, "GET", "/v1/rooms/guard/challenge")[1]
n = next(i for i in range(1 << 20)
         if int.from_bytes(hashlib.sha256(f"{ch['challenge']}:{i}".encode()).digest(), "big") >> (256 - 8) == 0)
key = "cluster-visitor-key"
body = {"pow": {"challenge": ch["challenge"], "nonce": str(n)},
        "key_sha256": hashlib.sha256(key.encode()).hexdigest()}
st, s = call(p3, "POST", "/v1/rooms/guard/tickets", body)
assert st == 201 and s["status"] == "ALLOWED", (st, s)
st, again = call(p3, "POST", "/v1/rooms/guard/tickets", body)
assert st == 403 and again["error"]["code"] == "pow_invalid", (st, again)
st, again = call(p2, "POST", "/v1/rooms/guard/tickets", body)  # n2 never saw it spent
assert st == 403 and again["error"]["code"] == "pow_invalid", (st, again)
st, r = call(p2, "POST", "/v1/rooms/guard/verify", {"token": s["token"]}, auth=True)
assert st == 401, (st, r)
st, r = call(p2, "POST", "/v1/rooms/guard/verify", {"token": s["token"], "key": key}, auth=True)
assert st == 200 and r["status"] == "ACTIVE", (st, r)
PY
pass "n2's proof-of-work challenge is spent once in the cluster (at n3, then refused at n3 and n2); n3's key-bound token counts at n2 only with its key"

# 2c. The operator's dashboard on any node: n3's stream lists the rooms with the counts n2
# has, and n3 keeps the room's history.
python3 - "$P2" "$P3" "$ADMIN" <<'PY' || fail "the dashboard on another node"
import http.client, json, sys
p2, p3, admin = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
h = {"Authorization": "Bearer " + admin}
c = http.client.HTTPConnection("127.0.0.1", p2, timeout=10)
c.request("GET", "/v1/rooms/sale", headers=h)
want = json.loads(c.getresponse().read())
s = http.client.HTTPConnection("127.0.0.1", p3, timeout=10)
s.request("GET", "/v1/admin/stream", headers=h)
r = s.getresponse()
assert r.status == 200, r.status
for _ in range(3):  # a frame a second; the first may predate n3's copy catching up
    line = b""
    while not line.startswith(b"data: "):
        line = r.fp.readline()
    rooms = {x["room"]: x for x in json.loads(line[6:])["rooms"]}
    if rooms.get("sale", {}).get("waiting") == want["waiting"]: break
assert rooms["sale"]["waiting"] == want["waiting"], (rooms.get("sale"), want)
assert "guard" in rooms, rooms.keys()
c3 = http.client.HTTPConnection("127.0.0.1", p3, timeout=10)
c3.request("GET", "/v1/admin/rooms/sale/history", headers=h)
hist = c3.getresponse()
assert hist.status == 200 and json.loads(hist.read())["unix_ms"], hist.status
PY
pass "the dashboard's stream and history on n3 agree with n2"

# 2d. The operator's re-seed over HTTP: with Redis holding every room, each room of n3's copy
# is "intact" and nothing changes; without the admin key, 401.
python3 - "$P3" "$ADMIN" <<'PY' || fail "POST /v1/cluster/reseed"
import http.client, json, sys
p3, admin = int(sys.argv[1]), sys.argv[2]
c = http.client.HTTPConnection("127.0.0.1", p3, timeout=10)
c.request("POST", "/v1/cluster/reseed", body="", headers={"Authorization": "Bearer " + admin})
r = c.getresponse(); body = json.loads(r.read())
assert r.status == 200, (r.status, body)
rooms = body["rooms"]
assert {"sale", "guard"} <= set(rooms) and all(v["result"] == "intact" for v in rooms.values()), rooms
c.request("POST", "/v1/cluster/reseed", body="")
r = c.getresponse(); r.read()
assert r.status == 401, r.status
c.request("GET", "/v1/cluster", headers={"Authorization": "Bearer " + admin})
nodes = json.loads(c.getresponse().read())["nodes"]
assert nodes and all(n["lost"] == [] for n in nodes), nodes
PY
pass "POST /v1/cluster/reseed on a whole cluster: every room intact; the key is needed"

# 3. Another secret: refused.
node n4 "another-secret-of-at-least-32-bytes-long"
n4=$!
for _ in $(seq 1 100); do kill -0 "$n4" 2>/dev/null || break; sleep 0.05; done
if kill -0 "$n4" 2>/dev/null; then fail "a node with another secret started"; fi
grep -q "another token secret" "$work/n4.log" || fail "n4 did not say why: $(cat "$work/n4.log")"
pass "a node with another token secret refuses to start"

[[ -n $LOADGEN ]] || exit 0
# 4a. Seed 000's WebSocket visit, its sockets dealt over two nodes in turn: the waiting
#     visitor on one node, the visitors who leave ahead of it on the other.
curl -sf -X PUT -H "Authorization: Bearer $ADMIN" "127.0.0.1:$P2/v1/rooms/seed" \
  -d '{"admission":"auto","capacity":10}' >/dev/null || fail "seed room"
"$LOADGEN" seed-visit --target "127.0.0.1:$P2,127.0.0.1:$P3" --admin-key "$ADMIN" --room seed \
  --keep-room --out "$work/seed" >"$work/seed.out" 2>&1 || fail "seed 000's visit: $(cat "$work/seed.out")"
pass "seed 000's WebSocket visit across two nodes (the other node's positions settled $(grep -o 'each within [0-9]* ms' "$work/seed.out"))"

# 4b. The loadgen over three nodes; one of them is killed while visitors wait on it.
node n5; n5=$!
node_port n5 P5
(sleep 4; kill -9 "$n5") &
pids+=($!)
"$LOADGEN" surge --target "127.0.0.1:$P2,127.0.0.1:$P3,127.0.0.1:$P5" --admin-key "$ADMIN" \
  --users 600 --transport poll --arrival-rate 100 --capacity 50 --quiet \
  --out "$work/report" >"$work/loadgen.out" 2>&1 || fail "loadgen: $(tail -20 "$work/loadgen.out")"
moved=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]+".json")); print(sum(p["visits"]["moved"] for p in r["phases"]))' "$work/report")
[[ $moved -gt 0 ]] || fail "no visitor moved to another node"
pass "loadgen over three nodes, one killed: all checks pass, $moved visitors moved with their tickets"
