#!/usr/bin/env bash
# Idle CPU: a server with N empty rooms (created over the API, no visitors), its CPU time over
# SECONDS read from /proc/PID/stat (utime + stime), for each room count, for the binary
# under test and, when given, a baseline binary started the same way in the same round
# (`--vs`), so the two compare side by side. --no-persistence (the log does not change what
# is measured). Writes results/idle.md.
# usage: bench/idle_cpu.sh [--vs BASELINE_BINARY] [ANTEROOM_BINARY] [SECONDS] [ROOM_COUNTS]
# BASE_NOTE says what the baseline is (written beside the command); BASE_UP_TO=N runs the
# baseline only for room counts up to N (a baseline that holds a core busy at 100,000 rooms
# need not be made to hold a million). VISITORS=1: each room is manual and holds one waiting
# visitor who does not come back (heartbeat timeout 600 s): live tickets whose deadlines
# are far off, which a timer that polls every room pays for and one that waits does not.
# Writes results/idle-visitors.md then. CLUSTER=1: each server is a cluster node on a Redis of
# its own (started here, on loopback), and that Redis's CPU is read beside the node's; writes
# results/idle-cluster.md then.
#   e.g. bench/idle_cpu.sh --vs /tmp/base/build/server/anteroom build/server/anteroom 30 "1000 10000 100000"
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=""
if [[ ${1:-} == --vs ]]; then BASE=$2; shift 2; fi
BIN=${1:-build/server/anteroom}
SECS=${2:-30}
COUNTS=${3:-"1000 10000 100000"}
OUT=results/idle.md
VISITORS=${VISITORS:-0}
CLUSTER=${CLUSTER:-0}
((VISITORS)) && OUT=results/idle-visitors.md
((CLUSTER)) && OUT=results/idle-cluster.md
source bench/lib.sh
bench_workdir
KEY=bench-admin-key-0001

# cpu_of BINARY ROOMS: "cpu_percent_of_one_core rss_kib redis_cpu_percent" after creating
# ROOMS rooms (redis_cpu_percent is - unless CLUSTER=1).
cpu_of() {
  local bin=$1 rooms=$2 port pid t0 t1 c0 c1 rpid="" rport
  local cluster=()
  if ((CLUSTER)); then
    rport=$(free_port)
    mkdir -p "$work/redis-$rport"
    redis-server --port "$rport" --bind 127.0.0.1 --dir "$work/redis-$rport" --save "" \
      --appendonly no --logfile "$work/redis-$rport/log" &
    rpid=$!
    pids+=("$rpid")
    wait_port "$rport"
    cluster=(--cluster "127.0.0.1:$rport" --node-name idle)
  fi
  local limit=()
  if "$bin" --help | grep -q -- --max-rooms; then
    limit=(--max-rooms "$rooms")
  elif ((rooms > 10000)); then
    echo "- - -"  # a build before --max-rooms holds 10,000 rooms at most
    return
  fi
  port=$(free_port)
  "$bin" --listen "127.0.0.1:$port" --threads 2 --no-persistence --admin-key "$KEY" \
    --token-secret bench-token-secret-0123456789abcdefg "${limit[@]}" "${cluster[@]}" >/dev/null 2>&1 &
  pid=$!
  pids+=("$pid")
  wait_port "$port"
  python3 - "$port" "$rooms" "$KEY" "$VISITORS" <<'PY'
import http.client, sys
port, rooms, key, visitors = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
c = http.client.HTTPConnection("127.0.0.1", port)
body = '{"admission":"manual","heartbeat_timeout_seconds":600}' if visitors else '{"capacity":10}'
for i in range(rooms):
    c.request("PUT", f"/v1/rooms/idle{i}", body=body,
              headers={"Authorization": "Bearer " + key, "Content-Type": "application/json"})
    r = c.getresponse(); r.read()
    if r.status not in (200, 201):
        sys.exit(f"PUT idle{i}: {r.status}")
    if visitors:
        c.request("POST", f"/v1/rooms/idle{i}/tickets", body="{}",
                  headers={"Content-Type": "application/json"})
        r = c.getresponse(); r.read()
        if r.status not in (200, 201):
            sys.exit(f"join idle{i}: {r.status}")
PY
  sleep 3  # every room seen idle by a sweep
  ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
  local r0=0 r1=0
  c0=$(ticks "$pid"); [[ -n $rpid ]] && r0=$(ticks "$rpid"); t0=$(date +%s.%N)
  sleep "$SECS"
  c1=$(ticks "$pid"); [[ -n $rpid ]] && r1=$(ticks "$rpid"); t1=$(date +%s.%N)
  local rss
  rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
  kill "$pid"; wait "$pid" 2>/dev/null || true
  [[ -n $rpid ]] && { kill "$rpid"; wait "$rpid" 2>/dev/null || true; }
  python3 -c "
hz, dt = $(getconf CLK_TCK), $t1 - $t0
print(f'{100 * ($c1 - $c0) / hz / dt:.2f} $rss', f'{100 * ($r1 - $r0) / hz / dt:.2f}' if '$rpid' else '-')"
}

rows=()
for n in $COUNTS; do
  now=$(cpu_of "$BIN" "$n")
  base="- - -"
  [[ -n $BASE ]] && ((n <= ${BASE_UP_TO:-n})) && base=$(cpu_of "$BASE" "$n")
  echo "rooms $n: this $now, baseline $base" >&2
  rows+=("$n $now $base")
done
python3 - "$OUT" "$(machine_line)" "$SECS" "$BIN" "$BASE" "$(git rev-parse --short HEAD)" "${BASE_NOTE:-}" "${rows[@]}" <<'PY'
import datetime, sys
out, machine, secs, bin_, base, commit, base_note, *rows = sys.argv[1:]
visitors = out.endswith("idle-visitors.md")
cluster = out.endswith("idle-cluster.md")
env = ("VISITORS=1 " if visitors else "") + ("CLUSTER=1 " if cluster else "")
L = ["# Idle CPU: rooms whose one visitor waits cost nothing" if visitors else
     "# Idle CPU: empty rooms of a cluster node" if cluster else
     "# Idle CPU: empty rooms cost nothing", "",
     f"- Command: `{env}bench/idle_cpu.sh{' --vs ' + base if base else ''} {bin_} {secs} \"{' '.join(r.split()[0] for r in rows)}\"`",
     f"- Built from {commit} (the binary under test){'; the baseline: ' + base_note if base and base_note else ''}",
     f"- Machine: {machine}; {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC",
     f"- Each server: `--threads 2 --no-persistence --max-rooms N`, N rooms created with `PUT /v1/rooms/idleI` "
     + ("(`{\"admission\":\"manual\",\"heartbeat_timeout_seconds\":600}`), each with one waiting visitor (`POST /v1/rooms/idleI/tickets`) who never comes back; CPU" if visitors else
        "(`{\"capacity\":10}`), no visitor; CPU")
     + f" is utime + stime from /proc/PID/stat over {secs} s, as a share of one core."
     + (" Each is a cluster node (`--cluster`) on a Redis of its own (no persistence), whose CPU is read over the same 30 s." if cluster else ""), "",
     "| rooms | goal | CPU, this build | CPU, baseline | ratio | RSS this / baseline (MiB) | RSS / rooms, this (KiB) | met |"
     + (" Redis CPU, this / baseline |" if cluster else ""),
     "|---:|---|---:|---:|---:|---|---:|---|" + ("---|" if cluster else "")]
goals = {} if visitors or cluster else {10000: 0.5, 100000: 1.0}
for r in rows:
    n, cpu, rss, rcpu, bcpu, brss, brcpu = r.split()
    n = int(n)
    g = goals.get(n)
    ratio = f"{float(cpu) / float(bcpu):.3f}" if bcpu != "-" and float(bcpu) > 0 else "-"
    b_rss = f"{int(brss) / 1024:.0f}" if brss != "-" else "-"
    met = "-" if g is None else ("yes" if float(cpu) < g else "**no**")
    L.append(f"| {n:,} | {'< ' + str(g) + '%' if g else 'reported'} | {float(cpu):.2f}% | "
             f"{(bcpu + '%') if bcpu != '-' else '-'} | {ratio} | {int(rss) / 1024:.0f} / {b_rss} | {int(rss) / n:.2f} | {met} |"
             + (f" {rcpu}% / {brcpu}{'%' if brcpu != '-' else ''} |" if cluster else ""))
try:  # what was written about the figures (## Notes, by hand) stays
    old = open(out).read()
    notes = old[old.index("\n## Notes"):] if "\n## Notes" in old else ""
except FileNotFoundError:
    notes = ""
open(out, "w").write("\n".join(L) + "\n" + notes)
print("\n".join(L))
PY
