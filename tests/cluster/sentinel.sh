#!/usr/bin/env bash
# Cluster mode through Redis Sentinel, on real redis-servers: a master, two replicas, three
# Sentinels, and two nodes started with --cluster redis-sentinel://S1,S2,S3/mymaster and
# --redis-wait 1. Visitors join through both nodes; the master is killed (-9) under the
# joins; the Sentinels promote the replica and the nodes follow (they ask the Sentinels at
# each reconnection). Every join either node acknowledged, before or after, is a ticket both
# nodes know, each with its own place. All on 127.0.0.1; stops by itself.
# usage: tests/cluster/sentinel.sh PATH/TO/anteroom
set -euo pipefail
BIN=$1
source "$(dirname "$0")/lib.sh"

M=$(free_port)
redis-server --port "$M" --bind 127.0.0.1 --dir "$work" --dbfilename m.rdb --save "" \
  --appendonly yes --appendfilename m.aof --appendfsync always --repl-diskless-sync-delay 0 \
  --logfile "$work/master.log" &
master=$!
pids+=("$master")
wait_port "$M"
# Two replicas: after the failover the new master still has one for --redis-wait 1.
replicas=()
for i in 1 2; do
  p=$(free_port)
  mkdir -p "$work/replica$i"
  redis-server --port "$p" --bind 127.0.0.1 --dir "$work/replica$i" --save "" --appendonly yes \
    --appendfsync always --repl-diskless-sync-delay 0 --replicaof 127.0.0.1 "$M" \
    --logfile "$work/replica$i.log" &
  pids+=($!)
  replicas+=("$p")
  wait_port "$p"
done
# Writes wait for a replica (--redis-wait 1): let both be in sync first.
for p in "${replicas[@]}"; do
  for _ in $(seq 1 200); do
    redis-cli -p "$p" info replication | grep -q master_link_status:up && break
    sleep 0.05
  done
  redis-cli -p "$p" info replication | grep -q master_link_status:up || fail "a replica never synced"
done
sentinels=()
for i in 1 2 3; do
  s=$(free_port)
  cat >"$work/sentinel$i.conf" <<CONF
port $s
bind 127.0.0.1
dir $work
logfile $work/sentinel$i.log
sentinel monitor mymaster 127.0.0.1 $M 2
sentinel down-after-milliseconds mymaster 1000
sentinel failover-timeout mymaster 10000
sentinel parallel-syncs mymaster 1
CONF
  redis-server "$work/sentinel$i.conf" --sentinel &
  pids+=($!)
  sentinels+=("127.0.0.1:$s")
  wait_port "$s"
done
url="redis-sentinel://$(IFS=,; echo "${sentinels[*]}")/mymaster"
ADMIN=cluster-sentinel-admin-key
node() {  # name
  mkdir -p "$work/$1"
  "$BIN" --cluster "$url" --redis-wait 1 --node-name "$1" --listen 127.0.0.1:0 \
    --data-dir "$work/$1" --admin-key "$ADMIN" --threads 1 \
    --token-secret cluster-sentinel-token-secret-0123456789 >"$work/$1.log" 2>&1 &
  pids+=($!)
}
node n1; node n2
node_port n1 P1; node_port n2 P2
curl -sSf -X PUT -H "Authorization: Bearer $ADMIN" "127.0.0.1:$P1/v1/rooms/sale" \
  -d '{"capacity":0,"admission":"manual"}' >/dev/null || fail "room not created"
pass "two nodes found the master through three Sentinels"

python3 - "$P1" "$P2" "$work/kill" "$work/killed" <<'PY' &
import http.client, json, os, sys, time
p1, p2, kill_file, killed_file = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]

def call(port, method, path):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    c.request(method, path, body="{}" if method == "POST" else None)
    r = c.getresponse()
    return r.status, r.read()

acked, refused, after = [], 0, 0
start = time.monotonic()
i = 0
while time.monotonic() - start < 40:
    i += 1
    port = p1 if i % 2 else p2
    try:
        status, body = call(port, "POST", "/v1/rooms/sale/tickets")
    except OSError:
        status, body = 0, b""
    if status == 201:
        acked.append(json.loads(body)["ticket"])
        if os.path.exists(killed_file):
            after += 1
    else:
        refused += 1
        time.sleep(0.02)
    if len(acked) == 200 and not os.path.exists(kill_file):
        open(kill_file, "w").close()
    if after >= 200:
        break
print("figures: joins acknowledged %d (%d after the kill), refused %d; %.1f s" %
      (len(acked), after, refused, time.monotonic() - start))
failed = []
if after < 200:
    failed.append("fewer than 200 joins after the failover (%d)" % after)
# Both nodes know every acknowledged ticket (they catch up from the new master).
for port in (p1, p2):
    deadline = time.monotonic() + 15
    missing = acked
    while missing and time.monotonic() < deadline:
        missing = [t for t in missing if call(port, "GET", "/v1/rooms/sale/tickets/" + t)[0] != 200]
        if missing:
            time.sleep(0.2)
    if missing:
        failed.append("node on %d lost %d acknowledged tickets" % (port, len(missing)))
    positions = [json.loads(call(port, "GET", "/v1/rooms/sale/tickets/" + t)[1])["position"] for t in acked]
    if len(set(positions)) != len(positions):
        failed.append("node on %d gives two tickets one place" % port)
for f in failed:
    print("FAIL: " + f)
sys.exit(1 if failed else 0)
PY
visitors=$!
for _ in $(seq 1 600); do [[ -f $work/kill ]] && break; sleep 0.05; done
[[ -f $work/kill ]] || fail "the visitors never had 200 joins"
kill -9 "$master"
touch "$work/killed"
pass "the master killed under joins"
wait "$visitors" || fail "see above"
grep -q "+switch-master" "$work"/sentinel*.log || fail "no Sentinel switched the master"
pass "the Sentinels promoted the replica; both nodes followed and know every acknowledged join"
