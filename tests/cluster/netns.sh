#!/usr/bin/env bash
# A node cut off from Redis by the network (it runs in its own network namespace, joined to
# this one by a veth pair): it stops taking writes (503) while its reads go on, another node
# takes over its room's decisions, and when the link comes back it catches up; nothing is
# admitted twice and capacity is never exceeded (sampled all along on the other node).
# Needs root (ip netns); skipped, saying so, without it.
# usage: tests/cluster/netns.sh PATH/TO/anteroom
set -euo pipefail
BIN=$1
if [[ $(id -u) -ne 0 ]] || ! command -v ip >/dev/null; then
  echo "SKIP: needs root and iproute2 for a network namespace"
  exit 0
fi
ns="anteroom-$$"
extra_cleanup() {
  ip netns del "$ns" 2>/dev/null || true
  ip link del "vh$$" 2>/dev/null || true
}
source "$(dirname "$0")/lib.sh"

# The namespace and its link: this side 10.231.7.1 (visitors) and 10.231.7.3 (Redis), the
# node's side 10.231.7.2.
ip netns add "$ns"
ip link add "vh$$" type veth peer name "vn$$"
ip link set "vn$$" netns "$ns"
ip addr add 10.231.7.1/24 dev "vh$$"
ip addr add 10.231.7.3/32 dev "vh$$"
ip link set "vh$$" up
ip netns exec "$ns" ip addr add 10.231.7.2/24 dev "vn$$"
ip netns exec "$ns" ip link set "vn$$" up
ip netns exec "$ns" ip link set lo up
ip netns exec "$ns" ip route add 10.231.7.3/32 dev "vn$$"

R=$(free_port)
redis-server --port "$R" --bind "127.0.0.1 10.231.7.3" --protected-mode no --dir "$work" --save "" \
  --appendonly yes --logfile "$work/redis.log" &
pids+=($!)
wait_tcp 127.0.0.1 "$R"
KEY=netns-admin-key-0123456789
SECRET=netns-token-secret-0123456789-0123456789
P1=$(free_port); P2=$(free_port)
mkdir -p "$work/cut" "$work/home"
ip netns exec "$ns" "$BIN" --cluster "10.231.7.3:$R" --node-name cut --listen "10.231.7.2:$P1" \
  --data-dir "$work/cut" --token-secret "$SECRET" --admin-key "$KEY" --threads 1 >"$work/cut.log" 2>&1 &
pids+=($!)
"$BIN" --cluster "127.0.0.1:$R" --node-name home --listen "127.0.0.1:$P2" \
  --data-dir "$work/home" --token-secret "$SECRET" --admin-key "$KEY" --threads 1 >"$work/home.log" 2>&1 &
pids+=($!)
wait_tcp 10.231.7.2 "$P1"; wait_tcp 127.0.0.1 "$P2"
CUT="http://10.231.7.2:$P1"; HOME_NODE="http://127.0.0.1:$P2"

# An auto room, capacity 2, created through the node to be cut: it takes the lease first.
curl -sf -X PUT -H "Authorization: Bearer $KEY" "$CUT/v1/rooms/sale" \
  -d '{"capacity":2,"allowed_ttl_seconds":2}' >/dev/null || fail "room"
for _ in $(seq 1 100); do
  curl -sf -H "Authorization: Bearer $KEY" "$CUT/v1/cluster" | grep -q '"leases":\["sale"\]' && break
  sleep 0.05
done
tickets=()
for i in 1 2 3 4 5 6; do
  tickets+=("$(curl -sf -X POST "$HOME_NODE/v1/rooms/sale/tickets" -d '{}' |
               python3 -c 'import json,sys; print(json.load(sys.stdin)["ticket"])')")
done

# Capacity watched on the home node all along.
( while true; do
    curl -s -H "Authorization: Bearer $KEY" "$HOME_NODE/v1/rooms/sale" |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["active"])' 2>/dev/null || true
    sleep 0.1
  done ) >"$work/active.log" &
pids+=($!)

# Cut: the node's packets to Redis go nowhere; visitors still reach it.
ip netns exec "$ns" ip route replace blackhole 10.231.7.3/32
code=0
for _ in $(seq 1 60); do  # its connection gives up within its 2 s command timeout
  code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$CUT/v1/rooms/sale/tickets" -d '{}')
  [[ $code == 503 ]] && break
  sleep 0.1
done
[[ $code == 503 ]] || fail "the cut-off node still takes writes ($code)"
curl -sf "$CUT/v1/rooms/sale/tickets/${tickets[3]}" | grep -q '"status":"WAITING"' ||
  fail "the cut-off node does not answer status from memory"
pass "cut off from Redis: writes 503, status from memory"

# Meanwhile the home node takes the lease over and goes on deciding: admissions (never used)
# expire every 2 s and the next are admitted, while the waiting keep polling the home node.
# What is checked is that the home node holds the lease and admits after the cut was seen,
# not one ticket's state at one moment (under load the cut node may have admitted and
# expired the next few before it lost Redis).
admitted_total() {
  curl -sf -H "Authorization: Bearer $KEY" "$HOME_NODE/v1/rooms/sale" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["totals"]["admitted"])'
}
home_holds_lease() {
  curl -sf -H "Authorization: Bearer $KEY" "$HOME_NODE/v1/cluster" | python3 -c '
import json, sys
nodes = json.load(sys.stdin)["nodes"]
sys.exit(0 if any(n["name"] == "home" and "sale" in n["leases"] for n in nodes) else 1)'
}
before=$(admitted_total)
took_over=""
for _ in $(seq 1 150); do
  for t in 2 3 4 5; do curl -s "$HOME_NODE/v1/rooms/sale/tickets/${tickets[$t]}" >/dev/null; done
  if home_holds_lease && (($(admitted_total) > before)); then took_over=yes; break; fi
  sleep 0.1
done
[[ -n $took_over ]] || fail "the home node never took over the decisions (admitted $before, then $(admitted_total))"
pass "the other node took over: it holds the lease and admitted the next in line while the decider was cut off"

# The link comes back: the node catches up and agrees.
ip netns exec "$ns" ip route replace 10.231.7.3/32 dev "vn$$"
for _ in $(seq 1 100); do
  code=$(curl -s -o /dev/null -w '%{http_code}' "$CUT/readyz")
  [[ $code == 200 ]] && break
  sleep 0.1
done
[[ $code == 200 ]] || fail "the node did not come back"
counts() {
  curl -sf -H "Authorization: Bearer $KEY" "$1/v1/rooms/sale" |
    python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["totals"]["admitted"], d["active"], d["waiting"], d["totals"]["joined"])'
}
for _ in $(seq 1 100); do  # both apply whatever was decided meanwhile, then agree
  a=$(counts "$CUT"); b=$(counts "$HOME_NODE")
  [[ $a == "$b" ]] && break
  sleep 0.1
done
[[ $a == "$b" ]] || fail "the nodes disagree after the cut: $a vs $b"
most=$(sort -n "$work/active.log" | tail -1)
[[ $most -le 2 ]] || fail "capacity exceeded: $most active"
state_of() {
  curl -sf "$1/v1/rooms/sale/tickets/$2" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["status"], d["seq"])'
}
for t in "${tickets[@]}"; do
  # The room goes on (admissions expire every 2 s): a record may land between the two reads,
  # so look again until both nodes applied the same.
  for _ in $(seq 1 50); do
    s1=$(state_of "$CUT" "$t"); s2=$(state_of "$HOME_NODE" "$t")
    [[ $s1 == "$s2" ]] && break
    sleep 0.05
  done
  [[ $s1 == "$s2" ]] || fail "ticket $t: $s1 on the cut node, $s2 at home"
done
pass "back on the network: both nodes agree (admitted, active, waiting, joined: $a), never more than $most active"
