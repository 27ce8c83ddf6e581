#!/usr/bin/env bash
# A rolling restart's step, through real nginx (deploy/nginx/anteroom-cluster.conf) in front
# of two cluster nodes on a real redis-server: node a is told SIGTERM (--drain-seconds 3)
# while visitors join through nginx and others hold their Server-Sent Events streams. No
# acknowledged join is lost (each is a ticket node b knows, each its own seq); every stream
# node a held is told to reconnect, and reconnects through nginx to node b with the same
# place; node a exits 0 within its drain. Prints the figures results/deploy.md keeps. All on
# 127.0.0.1; stops by itself.  usage: tests/cluster/drain.sh PATH/TO/anteroom
set -euo pipefail
BIN=$1
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../nginx/lib.sh"
HOLDERS=${HOLDERS:-40}

R=$(free_port); A=$(free_port); B=$(free_port); C=$(free_port); O=$(free_port); N=$(free_port)
KEY=cluster-drain-admin-key-01
redis-server --port "$R" --bind 127.0.0.1 --dir "$work" --save "" --appendonly yes \
  --appendfsync always --logfile "$work/redis.log" &
pids+=($!)
wait_port "$R"
node() {  # name port drain-seconds
  mkdir -p "$work/$1"
  "$BIN" --cluster "redis://127.0.0.1:$R" --node-name "$1" --listen "127.0.0.1:$2" \
    --data-dir "$work/$1" --admin-key "$KEY" --trusted-proxy 127.0.0.1 --threads 1 \
    --drain-seconds "$3" --token-secret cluster-drain-token-secret-0123456789 >"$work/$1.log" 2>&1 &
  pids+=($!)
}
node a "$A" 3; node_a=$!
node b "$B" 0
sed -e "s/127.0.0.1:8000/127.0.0.1:$N/; s/127.0.0.1:8081/127.0.0.1:$A/; s/127.0.0.1:8082/127.0.0.1:$B/" \
  -e "s/127.0.0.1:8083/127.0.0.1:$C/; s/127.0.0.1:9000/127.0.0.1:$O/" \
  "$HERE/../../deploy/nginx/anteroom-cluster.conf" >"$work/anteroom.conf"
start_nginx "$work/anteroom.conf" crit
wait_port "$A"; wait_port "$B"; wait_port "$N"
curl -sf -X PUT -H "Authorization: Bearer $KEY" "http://127.0.0.1:$A/v1/rooms/demo" \
  -d '{"capacity":0,"admission":"manual","heartbeat_timeout_seconds":600}' >/dev/null ||
  fail "cannot create the room"

# The visitors run in Python; it sends the signal and reports when node a has exited.
python3 "$HERE/drain_visitors.py" "$N" "$A" "$B" "$KEY" "$HOLDERS" "$work/told" "$work/exited" \
  >"$work/visitors.out" 2>&1 &
visitors=$!
pids+=("$visitors")
for _ in $(seq 1 600); do [[ -f $work/told ]] && break; sleep 0.05; done
[[ -f $work/told ]] || fail "the visitors never got ready: $(cat "$work/visitors.out")"
told=$(date +%s%N)
kill -TERM "$node_a"
status=0
wait "$node_a" || status=$?
exited=$(date +%s%N)
echo "$(( (exited - told) / 1000000 ))" >"$work/exited"
wait "$visitors" || { cat "$work/visitors.out"; fail "see above"; }
cat "$work/visitors.out"
[[ $status -eq 0 ]] || fail "node a exited $status on SIGTERM"
ms=$(( (exited - told) / 1000000 ))
# 3 s of drain, with room for a busy machine's (or a sanitizer's) scheduling.
(( ms < 8000 )) || fail "node a took $ms ms to drain (--drain-seconds 3)"
grep -q "draining for 3 s" "$work/a.log" || fail "node a did not say it drained"
pass "node a drained and exited 0 in $ms ms (--drain-seconds 3)"
