#!/bin/bash
# Wrote anteroom.log beside it: `make.sh OLD_BINARY DATA_DIR OUT_DIR` with the server built
# from 3a5c915 (log format version 3), then read the tickets back with the same binary
# (tests/storage/old_log_test.cc checks this build reads them the same).
set -e
BIN=$1; DIR=$2; OUT=$3
rm -rf "$DIR" "$OUT"; mkdir -p "$DIR" "$OUT"
K=fixture-admin-key-0123456789
$BIN --listen 127.0.0.1:18181 --data-dir "$DIR" --admin-key $K --appendfsync always > "$OUT/server.out" 2>&1 &
PID=$!
sleep 1
A="Authorization: Bearer $K"; U=http://127.0.0.1:18181
c() { curl -s -H "$A" "$@"; echo; }
j() { c -X POST $U/v1/rooms/$1/tickets -d "$2" > "$OUT/$1-$3.json"; }
c -X PUT $U/v1/rooms/shop -d '{"capacity":2,"allowed_ttl_seconds":2}'
for i in 0 1 2 3 4 5; do j shop "{\"user\":\"u$i\"}" $i; done
c -X PUT $U/v1/rooms/manual -d '{"capacity":5,"admission":"manual"}'
for i in 0 1 2 3; do j manual '{}' $i; done
c -X POST $U/v1/rooms/manual/admit -d '{"count":1}'
c -X POST $U/v1/admin/snapshot
c -X POST $U/v1/rooms/manual/clear -d '{}'
j manual '{}' 4
c -X PUT $U/v1/rooms/gone -d '{}'
c -X DELETE $U/v1/rooms/gone
c -X PUT $U/v1/rooms/sale -d '{"capacity":1}'
PRE=$(date -u -d '+1 sec' +%Y-%m-%dT%H:%M:%SZ); START=$(date -u -d '+3 sec' +%Y-%m-%dT%H:%M:%SZ)
c -X PUT $U/v1/rooms/sale/event -d "{\"prequeue_at\":\"$PRE\",\"start_at\":\"$START\",\"shuffle\":true}"
sleep 2
for i in 0 1 2; do j sale '{}' $i; done
sleep 4
c -X PUT $U/v1/rooms/live -d '{"capacity":2}'
for i in 0 1 2 3; do j live "{\"user\":\"v$i\"}" $i; done
TOK=$(python3 -c "import json;print(json.load(open('$OUT/live-0.json'))['token'])")
c -X POST $U/v1/rooms/live/verify -d "{\"token\":\"$TOK\"}"
T3=$(python3 -c "import json;print(json.load(open('$OUT/live-3.json'))['ticket'])")
c -X DELETE $U/v1/rooms/live/tickets/$T3
kill $PID; wait $PID || true
cp "$DIR/anteroom.log" "$OUT/anteroom.log"
# What the same binary reads back from it.
$BIN --listen 127.0.0.1:18181 --data-dir "$DIR" --admin-key $K > "$OUT/server2.out" 2>&1 &
PID=$!
sleep 1
for f in "$OUT"/*-*.json; do
  base=$(basename "$f" .json); room=${base%-*}
  t=$(python3 -c "import json;print(json.load(open('$f'))['ticket'])")
  echo "$base $t $(curl -s $U/v1/rooms/$room/tickets/$t | python3 -c 'import json,sys;d=json.load(sys.stdin);print(d.get("status"),d.get("position"),d.get("error",{}).get("code"))')"
done > "$OUT/readback.txt"
c $U/v1/rooms/sale/event/draw > "$OUT/draw.json"
kill $PID; wait $PID || true
