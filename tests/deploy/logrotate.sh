#!/usr/bin/env bash
# deploy/logrotate/anteroom: `logrotate --debug` reads it without an error; it rotates the
# directory the unit gives the service (LogsDirectory=anteroom) where the example
# configuration puts the access log, and signals the service through its ExecReload; and a
# copy of it, pointed at a directory of the test's and signalling a server started here
# instead, rotates that server's access log twice: the renamed file keeps the lines before the
# rotation, the server opens a new one, the older file is compressed a rotation later
# (delaycompress). Usage: logrotate.sh ANTEROOM SOURCE_DIR. Exits 77 (ctest: skipped), saying
# why, when logrotate, curl or python3 is missing.
set -euo pipefail
server=$1 source=$2
for tool in logrotate curl gzip python3; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: $tool is missing (scripts/deps.sh installs it)"
    exit 77
  fi
done
work=$(mktemp -d)
pid=
cleanup() {
  [[ -n $pid ]] && kill "$pid" 2>/dev/null
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
config=$source/deploy/logrotate/anteroom
unit=$source/deploy/systemd/anteroom.service
curl() { command curl --max-time 10 "$@"; }  # every request bounded

# The file as installed: read without an error (logrotate exits 0 on some errors in debug
# mode, so its output is read too).
logrotate --debug --state "$work/debug.state" "$config" >"$work/debug.out" 2>&1 ||
  fail "logrotate --debug: $(cat "$work/debug.out")"
! grep -qi '^error' "$work/debug.out" || fail "logrotate --debug: $(cat "$work/debug.out")"
grep -q '^rotating pattern: /var/log/anteroom/\*\.log' "$work/debug.out" ||
  fail "logrotate did not read the pattern: $(cat "$work/debug.out")"

# What it rotates is where the service writes: the unit's logs directory, and the example
# configuration's access log matches the pattern.
grep -qx 'LogsDirectory=anteroom' "$unit" || fail "the unit has no LogsDirectory=anteroom"
grep -qx 'ExecReload=/bin/kill -HUP $MAINPID' "$unit" || fail "the unit has no ExecReload"
example=$(sed -n 's/^#\{0,1\}access-log = //p' "$source/deploy/anteroom.conf")
[[ $example == /var/log/anteroom/*.log ]] ||
  fail "deploy/anteroom.conf's access-log ($example) is not under /var/log/anteroom/*.log"
for want in daily 'rotate [0-9]*' compress delaycompress missingok notifempty nocreate \
  sharedscripts 'systemctl reload anteroom.service'; do
  grep -Eq "^[[:space:]]*$want\$" "$config" || fail "the file lacks '$want'"
done

# A real rotation: the same file with the test's directory, and the reload replaced by the
# signal it sends (ExecReload).
mkdir "$work/logs"  # the server does not create directories
"$server" --listen 127.0.0.1:0 --no-persistence --admin-key logrotate-admin-key-0123456789 \
  --token-secret logrotate-token-secret-0123456789 --access-log "$work/logs/access.log" \
  >"$work/server.out" 2>&1 &
pid=$!
PORT=
for _ in $(seq 1 200); do
  PORT=$(sed -n 's|^anteroom listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$work/server.out" \
    2>/dev/null || true)
  [[ -n $PORT ]] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.05
done
[[ -n $PORT ]] || fail "the server did not start: $(cat "$work/server.out")"
awk -v logs="$work/logs" -v pid="$pid" '
  /^\/var\/log\/anteroom\/\*\.log/ { sub(/\/var\/log\/anteroom/, logs) }
  /^[[:space:]]*endscript/ { skip = 0 }
  skip { next }
  { print }
  /^[[:space:]]*postrotate/ { print "\t\tkill -HUP " pid; skip = 1 }' "$config" >"$work/rotate.conf"

# Polls (10 s at most) until FILE has N lines.
lines_in() {
  local file=$1 n=$2
  for _ in $(seq 1 200); do
    [[ -f $file && $(wc -l <"$file") -eq $n ]] && return 0
    sleep 0.05
  done
  fail "$file: $(wc -l <"$file" 2>/dev/null || echo no) lines, not $n"
}
# Every line of FILE (read by CAT) a JSON object with this path.
all_for() {
  local cat=$1 file=$2 path=$3
  "$cat" "$file" | python3 -c '
import json, sys
for line in sys.stdin:
    if json.loads(line)["path"] != sys.argv[1]:
        sys.exit(f"a line for another path: {line}")' "$path" || fail "$file: not all $path lines"
}

for _ in 1 2 3; do curl -sf "127.0.0.1:$PORT/healthz" >/dev/null || fail "GET /healthz"; done
lines_in "$work/logs/access.log" 3
logrotate --state "$work/state" --force "$work/rotate.conf" >"$work/rotate.out" 2>&1 ||
  fail "logrotate: $(cat "$work/rotate.out")"
[[ -f $work/logs/access.log.1 ]] || fail "no access.log.1: $(ls "$work/logs")"
lines_in "$work/logs/access.log" 0  # the server opened the path again
for _ in 1 2; do curl -sf "127.0.0.1:$PORT/readyz" >/dev/null || fail "GET /readyz"; done
lines_in "$work/logs/access.log" 2
logrotate --state "$work/state" --force "$work/rotate.conf" >"$work/rotate.out" 2>&1 ||
  fail "logrotate (second): $(cat "$work/rotate.out")"
lines_in "$work/logs/access.log" 0
kill -TERM "$pid"
wait "$pid" || fail "the server did not exit 0 on SIGTERM: $(cat "$work/server.out")"
pid=
[[ $(zcat "$work/logs/access.log.2.gz" | wc -l) -eq 3 ]] || fail "access.log.2.gz: not 3 lines"
all_for zcat "$work/logs/access.log.2.gz" /healthz
lines_in "$work/logs/access.log.1" 2
all_for cat "$work/logs/access.log.1" /readyz
grep -q 'SIGHUP received, reopening the access log' "$work/server.out" ||
  fail "the server did not say it reopened: $(cat "$work/server.out")"
echo "PASS: deploy/logrotate/anteroom reads cleanly and rotates a running server's access log"
