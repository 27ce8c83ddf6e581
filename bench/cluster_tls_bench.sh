#!/usr/bin/env bash
# Cluster joins over TLS against plain TCP, in one run: two Redis 7 servers alike
# (appendfsync everysec) but for TLS (a certificate made here by openssl, no client
# certificates), two nodes on each (the TLS ones with --redis-tls-ca and an ACL-less
# requirepass, as a managed Redis is sold), rounds alternating plain then TLS, each `wrk
# -t1 -c100` on each node of the pair at once; the ratio TLS / plain per round.
# usage: bench/cluster_tls_bench.sh [ANTEROOM_BINARY] [SECONDS] [ROUNDS]
set -euo pipefail
BIN=${1:-build/server/anteroom}
SECS=${2:-5}
ROUNDS=${3:-3}
source "$(dirname "$0")/lib.sh"
bench_workdir
ADMIN=bench-admin-key-0123456789
SECRET=bench-token-secret-0123456789-0123456789
PASS=bench-redis-password-0123456789

(
  cd "$work"
  key="-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes"
  echo "subjectAltName=IP:127.0.0.1" >ext
  openssl req -x509 $key -keyout ca.key -out ca.crt -subj /CN=bench-ca -days 2
  openssl req $key -keyout server.key -out server.csr -subj /CN=redis
  openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
    -extfile ext -out server.crt
) >/dev/null 2>&1
RP=$(free_port); RT=$(free_port)
redis-server --port "$RP" --bind 127.0.0.1 --dir "$work" --dbfilename plain.rdb --save "" \
  --appendonly yes --appendfilename plain.aof --appendfsync everysec --requirepass "$PASS" \
  --logfile "$work/redis-plain.log" &
pids+=($!)
mkdir -p "$work/tls"
redis-server --port 0 --tls-port "$RT" --bind 127.0.0.1 --dir "$work/tls" --save "" \
  --appendonly yes --appendfsync everysec --requirepass "$PASS" \
  --tls-cert-file "$work/server.crt" --tls-key-file "$work/server.key" \
  --tls-ca-cert-file "$work/ca.crt" --tls-auth-clients no --logfile "$work/redis-tls.log" &
pids+=($!)
wait_port "$RP"; wait_port "$RT"
node() {  # name port url [more flags]
  mkdir -p "$work/$1"
  ANTEROOM_REDIS_PASSWORD=$PASS "$BIN" --cluster "$3" --node-name "$1" --listen "127.0.0.1:$2" \
    --data-dir "$work/$1" --token-secret "$SECRET" --admin-key "$ADMIN" "${@:4}" \
    >"$work/$1.log" 2>&1 &
  pids+=($!)
  wait_port "$2"
}
P1=$(free_port); P2=$(free_port); T1=$(free_port); T2=$(free_port)
node p1 "$P1" "redis://127.0.0.1:$RP"; node p2 "$P2" "redis://127.0.0.1:$RP"
node t1 "$T1" "rediss://127.0.0.1:$RT" --redis-tls-ca "$work/ca.crt"
node t2 "$T2" "rediss://127.0.0.1:$RT" --redis-tls-ca "$work/ca.crt"
for p in "$P1" "$T1"; do
  curl -sf -X PUT -H "Authorization: Bearer $ADMIN" "127.0.0.1:$p/v1/rooms/bench" \
    -d '{"admission":"manual","capacity":0,"max_waiting":0,"heartbeat_timeout_seconds":3600}' >/dev/null
done
sleep 0.5

echo "# cluster_tls_bench: $(date -u +%FT%TZ), $(machine_line)"
echo "# $0 $BIN $SECS $ROUNDS"
for round in $(seq 1 "$ROUNDS"); do
  plain=$(pair_joins "$SECS" "$P1" "$P2")
  tls=$(pair_joins "$SECS" "$T1" "$T2")
  echo "round $round joins/s  plain TCP $plain  TLS $tls  ratio $(python3 -c "print(round($tls/$plain, 2))")"
done
for n in p1 t1; do
  port=$([[ $n == p1 ]] && echo "$P1" || echo "$T1")
  waiting=$(curl -sf -H "Authorization: Bearer $ADMIN" "127.0.0.1:$port/v1/rooms/bench" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["waiting"])')
  echo "$n's copy: $waiting waiting (every acknowledged join of its pair)"
done
