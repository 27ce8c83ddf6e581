#!/usr/bin/env bash
# deploy/nginx/anteroom-cluster.conf through real nginx, with two cluster nodes on a real
# redis-server: a visitor joins through nginx, its node dies, and its status and its stream
# (Server-Sent Events, as the waiting page's EventSource reopens it) still answer through
# nginx from the other node, same ticket, same place. Everything on 127.0.0.1.
# usage: tests/nginx/cluster.sh PATH/TO/anteroom
set -euo pipefail
BIN=$1
HERE=$(cd "$(dirname "$0")" && pwd)
CONF="$HERE/../../deploy/nginx/anteroom-cluster.conf"
source "$HERE/lib.sh"
source "$HERE/forged_forwarded_for.sh"

R=$(free_port); A=$(free_port); B=$(free_port); C=$(free_port); O=$(free_port); N=$(free_port)
KEY=nginx-cluster-admin-key
redis-server --port "$R" --bind 127.0.0.1 --dir "$work" --save "" --appendonly yes \
  --logfile "$work/redis.log" &
pids+=($!)
wait_port "$R"
node() {  # name port
  mkdir -p "$work/$1"
  "$BIN" --cluster "127.0.0.1:$R" --node-name "$1" --listen "127.0.0.1:$2" --data-dir "$work/$1" \
    --admin-key "$KEY" --trusted-proxy 127.0.0.1 --threads 1 \
    --token-secret nginx-cluster-token-secret-0123456789 >"$work/$1.log" 2>&1 &
  pids+=($!)
}
node a "$A"; node_a=$!
node b "$B"
# The third upstream (C) is never started: nginx must pass over it too.
sed -e "s/127.0.0.1:8000/127.0.0.1:$N/; s/127.0.0.1:8081/127.0.0.1:$A/; s/127.0.0.1:8082/127.0.0.1:$B/" \
  -e "s/127.0.0.1:8083/127.0.0.1:$C/; s/127.0.0.1:9000/127.0.0.1:$O/" "$CONF" >"$work/anteroom.conf"
start_nginx "$work/anteroom.conf" crit
wait_port "$A"; wait_port "$B"; wait_port "$N"

curl -sf -X PUT -H "Authorization: Bearer $KEY" "http://127.0.0.1:$A/v1/rooms/demo" \
  -d '{"capacity":1,"admission":"manual","match":[{"path_prefix":"/"}]}' >/dev/null ||
  fail "cannot create the room"
tickets=()
for i in 1 2 3 4; do
  join=$(curl -sf -X POST "http://127.0.0.1:$N/v1/rooms/demo/tickets" -d '{}') || fail "join $i through nginx"
  tickets+=("$(python3 -c 'import json,sys; print(json.load(sys.stdin)["ticket"])' <<<"$join")")
done
pass "four visitors joined through nginx"

# The stream as the page opens it, then node a dies; the page's EventSource reopens it.
first=$(curl -s -N --max-time 1 "http://127.0.0.1:$N/v1/rooms/demo/tickets/${tickets[2]}/events" | grep -m1 '^data:' || true)
grep -q '"position":3' <<<"$first" || fail "no stream through nginx: $first"
kill -9 "$node_a"
for t in 0 1 2 3; do
  s=$(curl -sf "http://127.0.0.1:$N/v1/rooms/demo/tickets/${tickets[$t]}") || fail "status after node a died"
  grep -q "\"position\":$((t + 1))" <<<"$s" || fail "ticket $t lost its place: $s"
done
again=$(curl -s -N --max-time 1 "http://127.0.0.1:$N/v1/rooms/demo/tickets/${tickets[2]}/events" | grep -m1 '^data:' || true)
grep -q '"position":3' <<<"$again" || fail "the stream did not reopen through nginx: $again"
pass "node a died: status and the reopened stream answer through nginx, same places"

curl -sf -X POST -H "Authorization: Bearer $KEY" "http://127.0.0.1:$B/v1/rooms/demo/admit" -d '{"count":1}' |
  grep -q '"admitted":1' || fail "admit through node b"
s=$(curl -sf "http://127.0.0.1:$N/v1/rooms/demo/tickets/${tickets[0]}")
grep -q '"status":"ALLOWED"' <<<"$s" || fail "the first visitor is not admitted: $s"
pass "the first in line is admitted through the surviving node"
forged_forwarded_for_is_ignored "$N" "$B" "$KEY" demo
