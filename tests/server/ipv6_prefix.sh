#!/usr/bin/env bash
# --max-connections-per-address counts an IPv6 client by its /64, as the join limiter does:
# in a network namespace of its own, with a /64 on its loopback, connections from four
# addresses of that /64 are refused past a limit of 2, and one from another /64 still gets
# in. (Counted by the full /128, the four addresses took 4 connections.) Needs root (ip
# netns); skipped, saying so, without it.
# usage: tests/server/ipv6_prefix.sh PATH/TO/anteroom
set -euo pipefail
BIN=$1
if [[ $(id -u) -ne 0 ]] || ! command -v ip >/dev/null; then
  echo "SKIP: needs root and iproute2 for a network namespace"
  exit 0
fi
ns="anteroom-v6-$$"
work=$(mktemp -d)
pid=""
cleanup() {
  [[ -n $pid ]] && kill "$pid" 2>/dev/null
  # Whatever still runs in the namespace (the server, if $! was only the shell around it).
  ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null || true
  wait 2>/dev/null || true
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; tail -5 "$work/anteroom.log" >&2 || true; exit 1; }
in_ns() { ip netns exec "$ns" "$@"; }

ip netns add "$ns"
in_ns ip link set lo up
for a in 1 2 3 4 5; do in_ns ip -6 addr add "fd00:64:1::$a/64" dev lo nodad; done
in_ns ip -6 addr add "fd00:64:2::9/64" dev lo nodad

ip netns exec "$ns" "$BIN" --listen "[fd00:64:1::1]:0" --no-persistence --threads 1 \
  --max-connections-per-address 2 --admin-key ipv6-admin-key-0123456789 \
  --token-secret ipv6-token-secret-0123456789-0123456789 >"$work/anteroom.log" 2>&1 &
pid=$!
port=""
for _ in $(seq 1 200); do
  port=$(sed -n 's|^anteroom listening on http://\[fd00:64:1::1\]:\([0-9]*\)$|\1|p' "$work/anteroom.log")
  [[ -n $port ]] && break
  sleep 0.05
done
[[ -n $port ]] || fail "anteroom did not start"

# Holds a connection from each of the /64's addresses 2-5, then one from the other /64; says
# for each whether the server kept it (answered /healthz 200) or refused it (503).
in_ns python3 - "$port" >"$work/out" <<'PY' || fail "the client failed: $(cat "$work/out")"
import socket, sys
port = int(sys.argv[1])
held = []
def open_from(src):
    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    s.settimeout(5)
    s.bind((src, 0))
    s.connect(("fd00:64:1::1", port))
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    answer = s.recv(4096).decode(errors="replace")
    held.append(s)
    return answer.split("\r\n", 1)[0]
for src in ["fd00:64:1::2", "fd00:64:1::3", "fd00:64:1::4", "fd00:64:1::5", "fd00:64:2::9"]:
    print(src, open_from(src))
PY
cat "$work/out"
codes=$(awk '{print $3}' "$work/out" | tr '\n' ' ')
[[ $codes == "200 200 503 503 200 " ]] ||
  fail "expected 200 200 503 503 200 (the /64's first two, then refused, then another /64): $codes"
echo "PASS: connections counted per /64: two from one /64, the third and fourth refused, another /64 served"
