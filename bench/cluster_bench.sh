#!/usr/bin/env bash
# Cluster mode beside the same binary alone, in one run: joins through two nodes on one
# Redis (appendfsync everysec) against one process (log everysec), status on one node
# against one process, and Redis's memory per waiting ticket.
# usage: bench/cluster_bench.sh [ANTEROOM_BINARY] [SECONDS]   (needs wrk, redis-server)
set -euo pipefail
BIN=${1:-build/server/anteroom}
SECS=${2:-10}
source "$(dirname "$0")/lib.sh"
bench_workdir
ADMIN=bench-admin-key-0123456789
SECRET=bench-token-secret-0123456789-0123456789
cat >"$work/join.lua" <<'LUA'
wrk.method = "POST"
wrk.body = "{}"
wrk.headers["Content-Type"] = "application/json"
LUA
room() {  # port: a manual room without limits
  curl -sf -X PUT -H "Authorization: Bearer $ADMIN" "127.0.0.1:$1/v1/rooms/bench" \
    -d '{"admission":"manual","capacity":0,"max_waiting":0}' >/dev/null
}
rps() { awk '/^Requests\/sec/ {print $2}' <<<"$1"; }

R=$(free_port)
redis-server --port "$R" --bind 127.0.0.1 --dir "$work" --save "" --appendonly yes \
  --appendfsync everysec --logfile "$work/redis.log" &
pids+=($!)
wait_port "$R"
P1=$(free_port); P2=$(free_port); PS=$(free_port)
for n in 1 2; do
  port=$([[ $n == 1 ]] && echo "$P1" || echo "$P2")
  mkdir -p "$work/n$n"
  "$BIN" --cluster "127.0.0.1:$R" --node-name "n$n" --listen "127.0.0.1:$port" --threads 1 \
    --data-dir "$work/n$n" --token-secret "$SECRET" --admin-key "$ADMIN" >/dev/null 2>&1 &
  pids+=($!)
  wait_port "$port"
done
mkdir -p "$work/single"
"$BIN" --listen "127.0.0.1:$PS" --data-dir "$work/single" --appendfsync everysec \
  --token-secret "$SECRET" --admin-key "$ADMIN" >/dev/null 2>&1 &
pids+=($!)
wait_port "$PS"
room "$P1"; room "$PS"
sleep 0.5

echo "# cluster_bench: $(date -u +%FT%TZ), $(machine_line)"
echo "# $0 $BIN $SECS"
# Joins: two nodes at once (one wrk thread and 100 connections each), then one process with
# the same total (two wrk threads, 200 connections).
o1=$(mktemp); o2=$(mktemp)
wrk -t1 -c100 -d"${SECS}s" -s "$work/join.lua" "http://127.0.0.1:$P1/v1/rooms/bench/tickets" >"$o1" &
w1=$!
wrk -t1 -c100 -d"${SECS}s" -s "$work/join.lua" "http://127.0.0.1:$P2/v1/rooms/bench/tickets" >"$o2"
wait "$w1"
cluster_joins=$(python3 -c "print(round($(rps "$(cat "$o1")") + $(rps "$(cat "$o2")")))")
single=$(wrk -t2 -c200 -d"${SECS}s" -s "$work/join.lua" "http://127.0.0.1:$PS/v1/rooms/bench/tickets")
single_joins=$(rps "$single")
echo "joins/s  cluster(2 nodes) $cluster_joins  single $single_joins  ratio $(python3 -c "print(round($cluster_joins/$single_joins, 2))")"

# Status of one ticket: a node of the cluster against the single process.
t=$(curl -sf -X POST "127.0.0.1:$P1/v1/rooms/bench/tickets" -d '{}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["ticket"])')
ts=$(curl -sf -X POST "127.0.0.1:$PS/v1/rooms/bench/tickets" -d '{}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["ticket"])')
node_status=$(rps "$(wrk -t2 -c200 -d"${SECS}s" "http://127.0.0.1:$P2/v1/rooms/bench/tickets/$t")")
single_status=$(rps "$(wrk -t2 -c200 -d"${SECS}s" "http://127.0.0.1:$PS/v1/rooms/bench/tickets/$ts")")
echo "status/s node $node_status  single $single_status  ratio $(python3 -c "print(round($node_status/$single_status, 2))")"

# Redis memory per waiting ticket: after a snapshot and a trim (the decider's, every 30 s;
# two snapshots trim the stream to the first).
sleep 65
tickets=$(curl -sf -H "Authorization: Bearer $ADMIN" "127.0.0.1:$P1/v1/rooms/bench" | python3 -c 'import json,sys; print(json.load(sys.stdin)["waiting"])')
mem=$(redis-cli -p "$R" memory usage "anteroom:{bench}:log" | tr -d '\r')
snap=$(redis-cli -p "$R" memory usage "anteroom:{bench}:snap" | tr -d '\r')
echo "redis bytes per waiting ticket $(python3 -c "print(round(($mem+$snap)/$tickets, 1))") (stream $mem B + snapshot $snap B for $tickets tickets; a sorted set: 141 B)"
