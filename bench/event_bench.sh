#!/usr/bin/env bash
# Scheduled events and modes, measured, into results/events.md:
#  1. the engine: the start's draw for 100k and 1M pre-queued tickets, a status read by what
#     the room is doing (fifo, random, queue_all, pre-queue, drawn) side by side, the ref's cost
#     (build/bench/anteroom-bench, event_bench.cc);
#  2. the server over HTTP: status throughput with wrk in a fifo, a random and a pre-queue room
#     of 100,000 each, interleaved rounds in one run (ratio to fifo);
#  3. the start of a drop end to end: a pre-queue of 1,000,000 with 10,000 of them watching
#     over SSE, and how long after start_at each watcher was told its place (event_push.py).
# usage: bench/event_bench.sh [ANTEROOM_BINARY] [SECONDS_PER_WRK_ROUND]  (needs wrk, python3)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-build/server/anteroom}
SECS=${2:-5}
OUT=results/events.md
source bench/lib.sh
bench_workdir
ulimit -n 20000

echo "1/3 engine benchmarks" >&2
build/bench/anteroom-bench --benchmark_filter='StartDraw|StatusByPolicy|TicketRef' \
  --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
  --benchmark_format=json >"$work/engine.json" 2>/dev/null

echo "2/3 status over HTTP by policy" >&2
A=$(free_port); KEY=bench-admin-key-0001
"$BIN" --listen "127.0.0.1:$A" --threads 2 --no-persistence --admin-key "$KEY" \
  --token-secret bench-token-secret-0123456789abcdefg >/dev/null 2>&1 & pids+=($!)
wait_port "$A"
python3 - "$A" "$KEY" "$work" <<'PY'
import datetime, http.client, json, sys, time
port, key, work = int(sys.argv[1]), sys.argv[2], sys.argv[3]
c = http.client.HTTPConnection("127.0.0.1", port)
def call(method, path, body=None):
    c.request(method, path, body=None if body is None else json.dumps(body),
              headers={"Authorization": "Bearer " + key})
    return json.loads(c.getresponse().read() or b"{}")
iso = lambda t: datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
for room, mode in (("fifo", "fifo"), ("random", "queue_all"), ("prequeue", "fifo")):
    call("PUT", f"/v1/rooms/{room}", {"capacity": 0, "admission": "manual", "mode": mode,
                                      "heartbeat_timeout_seconds": 86400, "max_waiting": 0})
    if room == "prequeue":
        call("PUT", f"/v1/rooms/{room}/event", {"prequeue_at": iso(time.time() - 5),
                                                "start_at": iso(time.time() + 86400), "shuffle": True})
    with open(f"{work}/{room}.ids", "w") as f:
        for _ in range(100_000):
            f.write(call("POST", f"/v1/rooms/{room}/tickets")["ticket"] + "\n")
    if room == "random":  # filled while paused, then random: nobody is admitted (manual)
        call("PUT", f"/v1/rooms/{room}", {"mode": "random"})
PY
for room in fifo random prequeue; do
  cat >"$work/$room.lua" <<LUA
local ids = {}
init = function(args) for line in io.lines("$work/$room.ids") do ids[#ids + 1] = line end end
request = function() return wrk.format("GET", "/v1/rooms/$room/tickets/" .. ids[math.random(#ids)]) end
LUA
done
: >"$work/wrk.txt"
for round in 1 2 3; do
  for room in fifo random prequeue; do
    out=$(wrk -t2 -c200 -d"${SECS}s" --latency -s "$work/$room.lua" "http://127.0.0.1:$A/")
    echo "$room $(wrk_summary "$out")" >>"$work/wrk.txt"
  done
done
kill "${pids[-1]}"; wait "${pids[-1]}" 2>/dev/null || true

echo "3/3 the start of a drop: 1,000,000 pre-queued, 10,000 watching" >&2
P=$(free_port)
"$BIN" --listen "127.0.0.1:$P" --threads 2 --no-persistence --admin-key "$KEY" \
  --max-connections-per-address 19000 --token-secret bench-token-secret-0123456789abcdefg \
  >/dev/null 2>&1 & pids+=($!)
wait_port "$P"
python3 bench/event_push.py --port "$P" --admin-key "$KEY" --prequeue 1000000 --streams 10000 \
  --lead-s 60 --wait-s 20 >"$work/push.json" || true

python3 - "$work" "$OUT" "$(machine_line)" "$SECS" <<'PY'
import json, statistics, sys, datetime
work, out, machine, secs = sys.argv[1:5]
eng = json.load(open(f"{work}/engine.json"))["benchmarks"]
def med(prefix):
    return [b for b in eng if b["name"].startswith(prefix) and b.get("aggregate_name") == "median"]
draw = {b["name"].split("/")[1] + "/" + b["name"].split("/")[2]: b["real_time"] for b in med("BM_StartDraw")}
labels = ["fifo", "random", "queue_all", "prequeue", "drawn"]
status = {labels[int(b["name"].split("/")[1])]: b["items_per_second"] for b in med("BM_StatusByPolicy")}
ref_ns = med("BM_TicketRef")[0]["real_time"]
rows = {}
for line in open(f"{work}/wrk.txt"):
    room, rps, p50, p99, errs = line.split()
    rows.setdefault(room, []).append((float(rps), p50, p99, int(errs)))
push = json.load(open(f"{work}/push.json")) if open(f"{work}/push.json").read().strip() else {}
L = []
w = L.append
w("# Scheduled events and modes")
w("")
w(f"- Command: `bench/event_bench.sh` ({secs} s per wrk round); raw numbers are not kept, the script prints nothing else")
w(f"- Machine: {machine}, 24 GiB; server, wrk, the benchmark and the watchers on the same 2 cores (loopback)")
w(f"- Date: {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC; Release build (GCC 12, -O3)")
w("- The machine is shared and noisy: read the ratios, each taken within one run.")
w("")
w("## Targets")
w("")
w("| target | goal | measured | met |")
w("|---|---|---:|---|")
d1m = draw.get("1000000/1")
w(f"| the start's draw, 1,000,000 pre-queued | <= 1 s | {d1m/1000:.2f} s | {'yes' if d1m <= 1000 else '**no**'} |")
mx = push.get("told_after_s", {}).get("max")
ok = mx is not None and mx <= 2.0 and push.get("told") == push.get("streams")
w(f"| every SSE watcher told its place after the start, 1M pre-queued, {push.get('streams', '?'):,} watching | <= 2 s | "
  + (f"{mx:.2f} s ({push.get('told'):,} of {push.get('streams'):,})" if mx is not None else "no result") + f" | {'yes' if ok else '**no**'} |")
fifo_http = statistics.median(r[0] for r in rows["fifo"])
for room in ("random", "prequeue"):
    ratio = statistics.median(r[0] for r in rows[room]) / fifo_http
    w(f"| status over HTTP, {room} room / fifo room | >= 0.95 | {ratio:.3f} | {'yes' if ratio >= 0.95 else '**no**'} |")
w("")
w("## The start's draw (engine, `BM_StartDraw`, median of 3 runs of 3)")
w("")
w("The owner pass at start_at: each pre-queued ticket's ref (SHA-256 of its id), its HMAC under the seed (on both cores), the sort, the drawn line; or, without shuffle, only the phase change.")
w("")
w("| pre-queue | order | time |")
w("|---:|---|---:|")
for k, v in sorted(draw.items(), key=lambda kv: (int(kv[0].split('/')[0]), kv[0])):
    n, sh = k.split("/")
    w(f"| {int(n):,} | {'drawn' if sh == '1' else 'join order'} | {v:.1f} ms |")
w("")
w("## Status by policy")
w("")
w("Engine (`BM_StatusByPolicy`, one thread, a room of 100,000 waiting, random tickets, median of 3):")
w("")
w("| room | status/s | ratio to fifo |")
w("|---|---:|---:|")
for k in labels:
    w(f"| {k} | {status[k]/1e6:.2f} M | {status[k]/status['fifo']:.2f} |")
w("")
w(f"A status answer over HTTP also carries the ticket's `ref`: SHA-256 of its id, {ref_ns:.0f} ns (`BM_TicketRef`).")
w("")
w(f"Server (`wrk -t2 -c200 -d{secs}s --latency`, GET status of a random ticket of 100,000; rounds interleaved fifo, random, prequeue, three times; the ratio is of medians):")
w("")
w("| room | req/s (rounds) | median | ratio to fifo | p50 / p99 (last round) | errors |")
w("|---|---|---:|---:|---|---:|")
for room in ("fifo", "random", "prequeue"):
    rs = rows[room]
    m = statistics.median(r[0] for r in rs)
    w(f"| {room} | {' / '.join(f'{r[0]:,.0f}' for r in rs)} | {m:,.0f} | {m/fifo_http:.3f} | {rs[-1][1]} / {rs[-1][2]} | {sum(r[3] for r in rs)} |")
w("")
w("## The start of a drop, end to end (`bench/event_push.py`)")
w("")
w("A manual room's event: pre-queue open, start 60 s ahead, shuffle. wrk fills the pre-queue with anonymous joins; then 10,000 more visitors join and hold an SSE stream each (their status says `position: null` and `opens_at`). At start_at the server draws everyone and pushes; each watcher notes when the first status with a position arrived.")
w("")
w("```")
w(json.dumps(push, indent=1))
w("```")
open(out, "w").write("\n".join(L) + "\n")
print("\n".join(L))
PY
