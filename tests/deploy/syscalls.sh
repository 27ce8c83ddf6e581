#!/usr/bin/env bash
# The unit's SystemCallFilter lets anteroom do its work: the server runs under strace while it
# takes rooms, joins, an SSE stream, an admission, a snapshot, /metrics and (given the
# loadgen) seed 000's WebSocket visit, with --appendfsync always and an access log, which it
# reopens on SIGHUP, then stops on SIGTERM; every system call it made must be one the filter of
# deploy/systemd/anteroom.service allows (its allow lists minus its ~ deny lists, as
# `systemd-analyze syscall-filter` expands the groups). Usage: syscalls.sh ANTEROOM SOURCE_DIR [ANTEROOM_LOADGEN]. Exits 77 (ctest:
# skipped), saying why, when strace or systemd-analyze is missing or strace cannot trace here.
set -euo pipefail
server=$1 source=$2 loadgen=${3:-}
for tool in strace systemd-analyze curl python3; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: $tool is missing (scripts/deps.sh installs it)"
    exit 77
  fi
done
if ! strace -f -qq -o /dev/null true 2>/dev/null; then
  echo "SKIP: strace cannot trace here (ptrace is not permitted)"
  exit 77
fi
work=$(mktemp -d)
pid=
cleanup() {
  if [[ -n $pid ]]; then
    for child in $(pgrep -P "$pid"); do kill "$child" 2>/dev/null || true; done  # anteroom
    kill "$pid" 2>/dev/null || true
  fi
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
KEY=syscalls-admin-key-0123456789

strace -f -qq -o "$work/trace" "$server" --listen 127.0.0.1:0 --data-dir "$work/data" \
  --appendfsync always --snapshot-after 0 --access-log "$work/access.log" --admin-key "$KEY" \
  --token-secret syscalls-token-secret-0123456789abcdef >"$work/out" 2>&1 &
pid=$!
PORT=
for _ in $(seq 1 200); do
  PORT=$(sed -n 's|^anteroom listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$work/out" \
    2>/dev/null || true)
  [[ -n $PORT ]] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.05
done
[[ -n $PORT ]] || fail "the server did not start under strace: $(cat "$work/out")"
base=127.0.0.1:$PORT
admin=(-H "Authorization: Bearer $KEY")
curl() { command curl --max-time 10 "$@"; }  # each bounded; the SSE one says 3 s itself
curl -sf -X PUT "${admin[@]}" "$base/v1/rooms/r" -d '{"capacity":1}' >/dev/null || fail "PUT room"
ticket=
for u in a b c; do
  ticket=$(curl -sf -X POST "$base/v1/rooms/r/tickets" -d "{\"user\":\"$u\"}" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["ticket"])') || fail "join $u"
done
curl -s --max-time 3 "$base/v1/rooms/r/tickets/$ticket/events" >"$work/sse" || true
grep -q '^event: status' "$work/sse" || fail "no SSE status: $(head -c 300 "$work/sse")"
curl -sf -X POST "${admin[@]}" "$base/v1/rooms/r/admit" -d '{"count":1}' >/dev/null || fail "admit"
curl -sf -X POST "${admin[@]}" "$base/v1/admin/snapshot" >/dev/null || fail "snapshot"
# To a file first: grep -q stopping early would fail the pipeline (pipefail) with curl's SIGPIPE.
curl -sf -H "Authorization: Bearer $KEY" "$base/metrics" >"$work/metrics" || fail "GET /metrics"
grep -q '^anteroom_fsync_seconds_count' "$work/metrics" || fail "no fsync histogram in /metrics"
curl -sf "$base/readyz" >/dev/null || fail "readyz"
if [[ -n $loadgen ]]; then
  ANTEROOM_ADMIN_KEY=$KEY "$loadgen" seed-visit --target "$base" --quiet --out "$work/visit" \
    >"$work/visit.out" 2>&1 || fail "seed-visit: $(tail -5 "$work/visit.out")"
fi
# Signals to anteroom itself (strace, told SIGTERM, would detach instead of passing it on).
traced=$(pgrep -P "$pid" | head -1)
[[ -n $traced ]] || fail "no process under strace"
# A rotation as deploy/logrotate/anteroom does it: rename, SIGHUP; the writer opens the path
# again.
mv "$work/access.log" "$work/access.log.1"
kill -HUP "$traced"
for _ in $(seq 1 200); do
  [[ -e $work/access.log ]] && break
  sleep 0.05
done
[[ -e $work/access.log ]] || fail "no new access log within 10 s of SIGHUP"
curl -sf "$base/healthz" >/dev/null || fail "healthz after SIGHUP"
kill -TERM "$traced"
for _ in $(seq 1 200); do
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.05
done
kill -0 "$pid" 2>/dev/null && fail "anteroom did not stop within 10 s of SIGTERM"
wait "$pid" || fail "anteroom under strace did not exit 0 on SIGTERM"
pid=
# The access log's writer wrote (it flushes its last lines before the process exits).
grep -q '"/v1/rooms/r/tickets"' "$work/access.log.1" || fail "the rotated access log has no join"
grep -q '"/healthz"' "$work/access.log" || fail "the reopened access log has no /healthz"

python3 - "$source/deploy/systemd/anteroom.service" "$work/trace" <<'PY'
import re, subprocess, sys
unit, trace = sys.argv[1], sys.argv[2]
listing = subprocess.run(["systemd-analyze", "syscall-filter"], capture_output=True, text=True,
                         check=True).stdout
groups, current = {}, None
for line in listing.splitlines():
    if line.startswith("@"):
        current = groups.setdefault(line.strip(), [])
    elif current is not None and line.strip() and not line.strip().startswith("#"):
        current.append(line.strip())
def expand(item):
    if not item.startswith("@"):
        return {item}
    if item not in groups:
        sys.exit(f"FAIL: systemd-analyze does not know {item}")
    return set().union(*(expand(i) for i in groups[item]))
allowed, denied = set(), set()
for line in open(unit):
    if line.startswith("SystemCallFilter="):
        value = line.split("=", 1)[1].strip()
        deny = value.startswith("~")
        names = set().union(*(expand(i) for i in value.lstrip("~").split()))
        (denied if deny else allowed).update(names)
if not allowed:
    sys.exit("FAIL: the unit has no SystemCallFilter allow list")
call = re.compile(r"^\d+\s+(?:<\.\.\.\s+)?([a-z_0-9]+)[( ]")
used = {m.group(1) for line in open(trace) if (m := call.match(line))}
used -= {"exit", "exit_group", "resumed"}
bad = sorted(n for n in used if n not in allowed or n in denied)
if len(used) < 20:
    sys.exit(f"FAIL: only {len(used)} system calls read from the trace: {sorted(used)}")
if bad:
    sys.exit(f"FAIL: anteroom made system calls the unit's filter refuses: {bad}")
print(f"PASS: the {len(used)} system calls anteroom made are all allowed: {' '.join(sorted(used))}")
PY
