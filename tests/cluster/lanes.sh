#!/usr/bin/env bash
# Invite-only rooms and lanes across two cluster nodes, over HTTP, on a real redis-server:
# invitees join through either node, each in its invite's lane; both nodes give every ticket
# the same place under the lanes' schedule (weights 3 and 1: m m p m m p p for four members
# and three of the public); a bad invite gets no ticket on either node; an admission asked
# of one node takes the schedule's turns, as the other node sees. All on 127.0.0.1, stops
# by itself.  usage: tests/cluster/lanes.sh PATH/TO/anteroom
set -euo pipefail
BIN=$1
source "$(dirname "$0")/lib.sh"

R=$(free_port)
redis-server --port "$R" --bind 127.0.0.1 --dir "$work" --save "" --appendonly no \
  --logfile "$work/redis.log" &
pids+=($!)
wait_port "$R"
SECRET=cluster-lanes-token-secret-0123456789abcdef
USER_SECRET=cluster-lanes-user-secret-0123456789
ADMIN=cluster-lanes-admin-key-01
node() {  # name
  mkdir -p "$work/$1"
  "$BIN" --cluster "redis://127.0.0.1:$R" --node-name "$1" --listen 127.0.0.1:0 \
    --data-dir "$work/$1" --token-secret "$SECRET" --user-secret "$USER_SECRET" \
    --admin-key "$ADMIN" --threads 1 >"$work/$1.log" 2>&1 &
  pids+=($!)
}
node n1; node n2
node_port n1 P1; node_port n2 P2
curl -sf -X PUT -H "Authorization: Bearer $ADMIN" "127.0.0.1:$P1/v1/rooms/sale" \
  -d '{"capacity":0,"admission":"manual","join_requires":"invite",
       "lanes":[{"name":"members","weight":3},{"name":"public","weight":1}]}' >/dev/null ||
  fail "room not created"

python3 - "$P1" "$P2" "$USER_SECRET" "$ADMIN" <<'PY' || fail "see above"
import base64, hashlib, hmac, http.client, json, sys, time
p1, p2, secret, admin = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].encode(), sys.argv[4]

def b64(b):
    return base64.urlsafe_b64encode(b).decode().rstrip("=")

def invite(sub, lane=None, key=secret):
    claims = {"room": "sale", "sub": sub, "exp": int(time.time()) + 3600}
    if lane:
        claims["lane"] = lane
    head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode()) + "." + b64(json.dumps(claims).encode())
    return head + "." + b64(hmac.new(key, head.encode(), hashlib.sha256).digest())

def call(port, method, path, body=None, key=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    headers = {"Authorization": "Bearer " + key} if key else {}
    c.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
    r = c.getresponse()
    data = r.read()
    return r.status, json.loads(data) if data else {}

failed = []
def check(cond, what):
    print(("PASS: " if cond else "FAIL: ") + what)
    if not cond:
        failed.append(what)

# Members and the public joining in turn through both nodes, each join answered first.
people = [("m1", "members"), ("p1", None), ("m2", "members"), ("p2", None),
          ("m3", "members"), ("p3", None), ("m4", "members")]
tickets = {}
for i, (who, lane) in enumerate(people):
    status, t = call(p1 if i % 2 == 0 else p2, "POST", "/v1/rooms/sale/tickets",
                     {"user": who, "invite": invite(who, lane)})
    check(status == 201 and t.get("lane") == (lane or "public"),
          f"{who} joins through n{1 + i % 2} into lane {lane or 'public'} ({status})")
    tickets[who] = t["ticket"]
# 4 members and 3 public at weights 3:1: m1 m2 p1 m3 m4 p2 p3.
want = {"m1": 1, "m2": 2, "p1": 3, "m3": 4, "m4": 5, "p2": 6, "p3": 7}
def places(port):
    return {who: call(port, "GET", f"/v1/rooms/sale/tickets/{t}")[1].get("position")
            for who, t in tickets.items()}
seen = {}
for _ in range(100):  # a node reads what the other wrote within moments
    seen = {1: places(p1), 2: places(p2)}
    if seen[1] == want and seen[2] == want:
        break
    time.sleep(0.05)
check(seen[1] == want and seen[2] == want,
      f"both nodes give every ticket its place under the schedule: n1 {seen[1]}, n2 {seen[2]}")

# Bad invites: another key, another lane, none: no ticket on either node.
for port in (p1, p2):
    for body in ({"user": "x", "invite": invite("x", None, b"another-secret-0123456789")},
                 {"user": "y", "invite": invite("y", "vip")}, {}):
        status, e = call(port, "POST", "/v1/rooms/sale/tickets", body)
        check(status == 403 and e["error"]["code"] == "invite_invalid",
              f"a bad invite through port {port} gets 403 invite_invalid ({status})")
status, room = call(p1, "GET", "/v1/rooms/sale", key=admin)
check(room["waiting"] == 7, f"no ticket was made by a bad invite (waiting {room['waiting']})")

# Three admissions asked of n2 take the first three turns: m1, m2, p1.
call(p2, "PUT", "/v1/rooms/sale", {"capacity": 3}, key=admin)
status, _ = call(p2, "POST", "/v1/rooms/sale/admit", {"count": 3}, key=admin)
state = {}
for _ in range(100):
    state = {who: call(p1, "GET", f"/v1/rooms/sale/tickets/{t}")[1].get("status")
             for who, t in tickets.items()}
    if sorted(w for w, s in state.items() if s == "ALLOWED") == ["m1", "m2", "p1"]:
        break
    time.sleep(0.05)
check(sorted(w for w, s in state.items() if s == "ALLOWED") == ["m1", "m2", "p1"],
      f"an admission asked of n2 takes the schedule's turns, as n1 sees: {state}")
after = places(p1)
check(after["m3"] == 1 and after["m4"] == 2 and after["p2"] == 3 and after["p3"] == 4,
      f"the rest move up in schedule order: {after}")
sys.exit(1 if failed else 0)
PY
echo "cluster lanes and invites: all passed"
