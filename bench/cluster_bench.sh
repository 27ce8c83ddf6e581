#!/usr/bin/env bash
# Cluster mode beside its anchors, in one run on one Redis (appendfsync everysec): joins
# through two nodes against the seeds' design (bench/peers/seeds-redis: two Node.js
# processes, a sorted set per room) and against the same binary alone (log everysec);
# status on one node against the binary alone; how fast a join reaches the other node; and
# Redis's memory per waiting ticket.
# usage: bench/cluster_bench.sh [ANTEROOM_BINARY] [SECONDS]
#        (needs wrk, redis-server, node and npm; installs the peer's ioredis from npm once)
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
    -d '{"admission":"manual","capacity":0,"max_waiting":0,"heartbeat_timeout_seconds":3600}' >/dev/null
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
  "$BIN" --cluster "127.0.0.1:$R" --node-name "n$n" --listen "127.0.0.1:$port" \
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
peer="$(dirname "$0")/peers/seeds-redis"
[[ -d $peer/node_modules/ioredis ]] || (cd "$peer" && npm install --silent --no-audit --no-fund)
Q1=$(free_port); Q2=$(free_port)
node "$peer/server.js" "$Q1" "$R" & pids+=($!)
node "$peer/server.js" "$Q2" "$R" & pids+=($!)
wait_port "$Q1"; wait_port "$Q2"
sleep 0.5

echo "# cluster_bench: $(date -u +%FT%TZ), $(machine_line)"
echo "# $0 $BIN $SECS"
# Joins, the same wrk on each side: two processes at once (one wrk thread and 100
# connections each), then one process with the same total (two wrk threads, 200).
# Two rounds, the seeds' design first in each: the cluster leaves work behind (its decider
# sweeps the line it just filled), which would slow whatever runs after it.
# The seeds' design as they describe it is one Node.js server: both wrk processes on it; then
# scaled like the cluster, two Node.js processes on the same Redis.
for round in 1 2; do
  seeds_one=$(pair_joins "$SECS" "$Q1" "$Q1")
  seeds_two=$(pair_joins "$SECS" "$Q1" "$Q2")
  cluster_joins=$(pair_joins "$SECS" "$P1" "$P2")
  echo "round $round joins/s  cluster(2 nodes) $cluster_joins  seeds' design: one process $seeds_one (ratio $(python3 -c "print(round($cluster_joins/$seeds_one, 2))")), two processes $seeds_two (ratio $(python3 -c "print(round($cluster_joins/$seeds_two, 2))"))"
done
single=$(wrk -t2 -c200 -d"${SECS}s" -s "$work/join.lua" "http://127.0.0.1:$PS/v1/rooms/bench/tickets")
single_joins=$(rps "$single")
echo "joins/s  cluster(2 nodes) $cluster_joins  single process $single_joins  ratio $(python3 -c "print(round($cluster_joins/$single_joins, 2))")"

# Status of one ticket: a node of the cluster against the single process.
t=$(curl -sf -X POST "127.0.0.1:$P1/v1/rooms/bench/tickets" -d '{}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["ticket"])')
ts=$(curl -sf -X POST "127.0.0.1:$PS/v1/rooms/bench/tickets" -d '{}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["ticket"])')
node_status=$(rps "$(wrk -t2 -c200 -d"${SECS}s" "http://127.0.0.1:$P2/v1/rooms/bench/tickets/$t")")
single_status=$(rps "$(wrk -t2 -c200 -d"${SECS}s" "http://127.0.0.1:$PS/v1/rooms/bench/tickets/$ts")")
echo "status/s node $node_status  single $single_status  ratio $(python3 -c "print(round($node_status/$single_status, 2))")"
tq=$(curl -sf -X POST "127.0.0.1:$Q1/v1/rooms/bench/tickets" -d '{}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["ticket"])')
seeds_status=$(rps "$(wrk -t2 -c200 -d"${SECS}s" "http://127.0.0.1:$Q2/v1/rooms/bench/tickets/$tq")")
echo "status/s node $node_status  seeds' design $seeds_status  ratio $(python3 -c "print(round($node_status/$seeds_status, 2))")"

# Propagation: a join answered by n1 until n2's copy counts it (a fresh room, idle cluster).
curl -sf -X PUT -H "Authorization: Bearer $ADMIN" "127.0.0.1:$P1/v1/rooms/prop" \
  -d '{"admission":"manual","capacity":0}' >/dev/null
sleep 0.2
python3 "$(dirname "$0")/cluster_propagation.py" "$P1" "$P2" "$ADMIN" prop 1000

# Redis memory per waiting ticket: after a snapshot and a trim (the decider's, every 30 s;
# two snapshots trim the stream to the first).
sleep 65
tickets=$(curl -sf -H "Authorization: Bearer $ADMIN" "127.0.0.1:$P1/v1/rooms/bench" | python3 -c 'import json,sys; print(json.load(sys.stdin)["waiting"])')
mem=$(redis-cli -p "$R" memory usage "anteroom:{bench}:log" | tr -d '\r')
snap=$(redis-cli -p "$R" memory usage "anteroom:{bench}:snap" | tr -d '\r')
echo "redis bytes per waiting ticket $(python3 -c "print(round(($mem+$snap)/$tickets, 1))") (stream $mem B + snapshot $snap B for $tickets tickets; a sorted set: 141 B)"
