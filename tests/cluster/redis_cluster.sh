#!/usr/bin/env bash
# Nodes on a Redis Cluster of 3 masters and 3 replicas (Debian's redis-server, on 127.0.0.1):
# rooms land on different shards; a master is killed under joins (--redis-wait 1: a join
# counts once a replica has it): service resumes after the failover and no acknowledged join
# is lost, on either node.
# usage: tests/cluster/redis_cluster.sh PATH/TO/anteroom
set -euo pipefail
BIN=$1
source "$(dirname "$0")/lib.sh"

# A Redis Cluster node also listens on its port + 10,000 (the cluster bus): both must be free,
# and below the ephemeral range.
cluster_port() {
  python3 -c '
import random, socket
def free(p):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p)); return True
    except OSError:
        return False
    finally:
        s.close()
while True:
    p = random.randint(20000, 22000)
    if free(p) and free(p + 10000):
        print(p); break'
}
ports=()
declare -A redis_pid
start_redis() {  # port
  redis-server --port "$1" --bind 127.0.0.1 --dir "$work/r$1" --save "" --appendonly yes \
    --cluster-enabled yes --cluster-config-file "$work/r$1/nodes.conf" --cluster-node-timeout 1000 \
    --logfile "$work/redis-$1.log" &
  pids+=($!); redis_pid[$1]=$!
}
for i in 1 2 3 4 5 6; do
  p=$(cluster_port)
  while [[ " ${ports[*]} " == *" $p "* ]]; do p=$(cluster_port); done
  mkdir -p "$work/r$p"
  start_redis "$p"
  ports+=("$p")
done
for p in "${ports[@]}"; do wait_port "$p"; done
redis-cli --cluster create $(for p in "${ports[@]}"; do printf '127.0.0.1:%s ' "$p"; done) \
  --cluster-replicas 1 --cluster-yes >"$work/create.out" 2>&1 || fail "cluster create: $(tail -5 "$work/create.out")"
for _ in $(seq 1 200); do
  ok=0
  for p in "${ports[@]}"; do
    redis-cli -p "$p" cluster info | grep -q 'cluster_state:ok' && ok=$((ok + 1))
  done
  [[ $ok -eq 6 ]] && break
  sleep 0.1
done
[[ $ok -eq 6 ]] || fail "the Redis Cluster never became ok"
# Every replica in sync with its master (WAIT counts only those).
for _ in $(seq 1 200); do
  up=0
  for p in "${ports[@]}"; do
    redis-cli -p "$p" info replication | grep -q 'master_link_status:up' && up=$((up + 1))
  done
  [[ $up -eq 3 ]] && break
  sleep 0.1
done
[[ $up -eq 3 ]] || fail "the replicas never came in sync"
seeds=$(for p in "${ports[@]}"; do printf '127.0.0.1:%s,' "$p"; done); seeds=${seeds%,}

SECRET=redis-cluster-token-secret-0123456789
KEY=redis-cluster-admin-key-0123
P1=$(free_port); P2=$(free_port)
for n in 1 2; do
  port=$([[ $n == 1 ]] && echo "$P1" || echo "$P2")
  mkdir -p "$work/n$n"
  "$BIN" --cluster "$seeds" --redis-wait 1 --node-name "n$n" --listen "127.0.0.1:$port" \
    --data-dir "$work/n$n" --token-secret "$SECRET" --admin-key "$KEY" --threads 1 >"$work/n$n.log" 2>&1 &
  pids+=($!)
  wait_port "$port"
done

# Rooms over the shards: which master owns each room's slot.
declare -A owner
for room in alpha bravo charlie delta echo foxtrot; do
  curl -sf -X PUT -H "Authorization: Bearer $KEY" "127.0.0.1:$P1/v1/rooms/$room" \
    -d '{"admission":"manual","capacity":0}' >"$work/put.out" 2>&1 || fail "room $room: $(cat "$work/put.out"; curl -s -X PUT -H "Authorization: Bearer $KEY" "127.0.0.1:$P1/v1/rooms/$room" -d "{}")"
  slot=$(redis-cli -p "${ports[0]}" cluster keyslot "anteroom:{$room}:log")
  for p in "${ports[@]}"; do
    if redis-cli -p "$p" role | head -1 | grep -q master &&
       [[ $(redis-cli -p "$p" cluster countkeysinslot "$slot") -gt 0 ]]; then
      owner[$room]=$p
    fi
  done
done
shards=$(printf '%s\n' "${owner[@]}" | sort -u | wc -l)
[[ $shards -ge 2 ]] || fail "all rooms on one shard: ${owner[*]}"
pass "six rooms over $shards shards"

# Joins into every room through both nodes; the master of alpha's shard dies meanwhile.
victim=${owner[alpha]}
python3 "$(dirname "$0")/joins.py" "$P1" "$P2" "$work/acked" 9 alpha,bravo,charlie,delta,echo,foxtrot &
joiner=$!
sleep 2
kill -9 "${redis_pid[$victim]}"
# Its replica takes over; the old master, started again, comes back as the new one's
# replica, and with it --redis-wait 1 can be met again on that shard.
sleep 3
start_redis "$victim"
wait "$joiner"
before=$(awk '$2=="alpha"' "$work/acked" | wc -l)
# After the failover, alpha takes joins again.
ok=""
for _ in $(seq 1 200); do
  if curl -sf -X POST "127.0.0.1:$P2/v1/rooms/alpha/tickets" -d '{}' >/dev/null; then ok=yes; break; fi
  sleep 0.1
done
[[ -n $ok ]] || fail "alpha never took joins again after its master died"
pass "the master of alpha's shard killed: service resumed after the failover ($before joins into alpha acknowledged around it)"

python3 - "$P1" "$P2" "$work/acked" <<'PY' || fail "an acknowledged join is missing"
import http.client, json, sys
rows = [l.split() for l in open(sys.argv[3])]
for port in (int(sys.argv[1]), int(sys.argv[2])):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    for _, room, tid, seq in rows:
        for attempt in range(50):
            c.request("GET", f"/v1/rooms/{room}/tickets/{tid}")
            r = c.getresponse(); v = json.loads(r.read())
            if r.status == 200: break
        assert r.status == 200 and v["seq"] == int(seq), (port, room, tid, r.status, v)
print(f"{len(rows)} acknowledged joins on both nodes")
PY
pass "with --redis-wait 1 no acknowledged join was lost ($(wc -l <"$work/acked") joins, both nodes)"

# Resharding while rooms run: bravo's slot moves to another master, one key at a time (the
# documented manual migration: IMPORTING, MIGRATING, MIGRATE, SETSLOT NODE), while joins go
# into every room through both nodes. The nodes follow ASK during the move and MOVED after
# it: no acknowledged join is lost, each client's joins into a room keep their order, and
# the waiting positions follow the seqs on both nodes.
slot=$(redis-cli -p "${ports[0]}" cluster keyslot "anteroom:{bravo}:log")
src=""; dst=""
for p in "${ports[@]}"; do
  redis-cli -p "$p" role | head -1 | grep -q master || continue
  if [[ $(redis-cli -p "$p" cluster countkeysinslot "$slot") -gt 0 ]]; then src=$p
  elif [[ -z $dst ]]; then dst=$p; fi
done
[[ -n $src && -n $dst ]] || fail "bravo's shard or another master not found"
python3 "$(dirname "$0")/joins.py" "$P1" "$P2" "$work/acked2" 8 alpha,bravo,charlie &
joiner=$!
sleep 1.5
src_id=$(redis-cli -p "$src" cluster myid); dst_id=$(redis-cli -p "$dst" cluster myid)
redis-cli -p "$dst" cluster setslot "$slot" importing "$src_id" >/dev/null
redis-cli -p "$src" cluster setslot "$slot" migrating "$dst_id" >/dev/null
moved=0
while :; do
  key=$(redis-cli -p "$src" cluster getkeysinslot "$slot" 1)
  [[ -n $key ]] || break
  out=$(redis-cli -p "$src" migrate 127.0.0.1 "$dst" "$key" 0 5000)
  [[ $out == OK || $out == NOKEY ]] || fail "MIGRATE $key: $out"
  moved=$((moved + 1))
  sleep 0.3  # the room stays half moved for a while: ASK and TRYAGAIN meanwhile
done
for p in "${ports[@]}"; do
  redis-cli -p "$p" role | head -1 | grep -q master || continue
  redis-cli -p "$p" cluster setslot "$slot" node "$dst_id" >/dev/null
done
wait "$joiner"
[[ $moved -ge 2 ]] || fail "bravo's slot held $moved keys"
[[ $(redis-cli -p "$dst" cluster countkeysinslot "$slot") -gt 0 &&
   $(redis-cli -p "$src" cluster countkeysinslot "$slot") -eq 0 ]] || fail "bravo's slot did not move"
ok=""
for _ in $(seq 1 100); do
  if curl -sf -X POST "127.0.0.1:$P1/v1/rooms/bravo/tickets" -d '{}' >/dev/null; then ok=yes; break; fi
  sleep 0.1
done
[[ -n $ok ]] || fail "bravo took no joins after its slot moved"
python3 - "$P1" "$P2" "$work/acked2" <<'PY' || fail "resharding lost or reordered a join"
import collections, http.client, json, sys
rows = [l.split() for l in open(sys.argv[3])]
by = collections.defaultdict(list)
for k, room, tid, seq in rows: by[(k, room)].append(int(seq))
for key, seqs in by.items(): assert seqs == sorted(set(seqs)), ("order", key, seqs)
bravo = sum(1 for r in rows if r[1] == "bravo")
assert bravo >= 10, ("too few joins into bravo", bravo)
for port in (int(sys.argv[1]), int(sys.argv[2])):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    pos = collections.defaultdict(list)
    for k, room, tid, seq in rows:
        for attempt in range(50):
            c.request("GET", f"/v1/rooms/{room}/tickets/{tid}")
            r = c.getresponse(); v = json.loads(r.read())
            if r.status == 200: break
        assert r.status == 200 and v["seq"] == int(seq), (port, room, tid, r.status, v)
        pos[room].append((int(seq), v["position"]))
    for room, p in pos.items():
        p.sort()
        assert all(a[1] < b[1] for a, b in zip(p, p[1:])), ("positions", port, room, p[:5])
print(f"{len(rows)} joins ({bravo} into bravo) on both nodes, in order")
PY
pass "bravo's slot moved to another master key by key under joins ($moved keys): nothing lost, order kept"
