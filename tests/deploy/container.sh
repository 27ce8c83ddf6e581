#!/usr/bin/env bash
# deploy/container/Containerfile built and run with podman (runc, host network, a
# containers.conf of the test's own): the Debian 12 base it names made locally with
# mmdebstrap when absent (no registry is reachable), the image built with --pull=never; then
# the container runs as a non-root user with its flags from ANTEROOM_* variables, answers a
# join, passes its health check (anteroom health, no shell); `podman stop` (SIGTERM, the
# default 10 s before SIGKILL) drains it for the image's 5 s and it exits 0; started again, the line is still there (the volume); the image's size
# printed for results/deploy.md. Skipped (77) without podman. Stops by itself.
# usage: tests/deploy/container.sh SOURCE_DIR
set -euo pipefail
SRC=$(cd "$1" && pwd)
command -v podman >/dev/null && command -v mmdebstrap >/dev/null || { echo "SKIP: no podman"; exit 77; }
source "$SRC/tests/cluster/lib.sh"
source "$SRC/tests/deploy/container_lib.sh"
IMAGE=localhost/anteroom:test
NAME=anteroom-test-$$
VOLUME=anteroom-test-$$
extra_cleanup() {
  podman rm -f -t 0 "$NAME" >/dev/null 2>&1 || true
  podman volume rm -f "$VOLUME" >/dev/null 2>&1 || true
}

debian_base
started=$(date +%s)
podman build --pull=never --network host --format docker -f "$SRC/deploy/container/Containerfile" \
  -t "$IMAGE" "$SRC" >"$work/build.log" 2>&1 || fail "podman build: $(tail -5 "$work/build.log")"
pass "the image builds from the source tree ($(( $(date +%s) - started )) s)"

[[ $(podman image inspect --format '{{.Config.User}}' "$IMAGE") == 10001:10001 ]] ||
  fail "the image does not run as user 10001"
P=$(free_port)
KEY=container-admin-key-0123
run() {
  # The health check's timer needs systemd (podman says so on stderr, which goes to a log):
# the test runs the check itself.
  podman run -d --name "$NAME" --network host -v "$VOLUME:/var/lib/anteroom" --health-interval disable \
    -e ANTEROOM_LISTEN="127.0.0.1:$P" -e ANTEROOM_ADMIN_KEY="$KEY" \
    -e ANTEROOM_ROOM_ADMISSION=manual "$IMAGE" >/dev/null 2>>"$work/podman.log"
}
run
wait_port "$P"
pid=$(podman inspect --format '{{.State.Pid}}' "$NAME")
[[ $(awk '/^Uid:/ {print $2}' "/proc/$pid/status") == 10001 ]] || fail "the server does not run as uid 10001"
curl -sf -X PUT -H "Authorization: Bearer $KEY" "127.0.0.1:$P/v1/rooms/shop" -d '{"capacity":0}' >/dev/null ||
  fail "cannot create a room"
curl -sf -X POST "127.0.0.1:$P/v1/rooms/shop/tickets" -d '{}' >/dev/null || fail "first join"
ticket=$(curl -sf -X POST "127.0.0.1:$P/v1/rooms/shop/tickets" -d '{}' |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["ticket"])') || fail "second join"
room=$(curl -sf -H "Authorization: Bearer $KEY" "127.0.0.1:$P/v1/rooms/shop")
grep -q '"admission":"manual"' <<<"$room" || fail "ANTEROOM_ROOM_ADMISSION was not read: $room"
pass "runs as uid 10001, flags from ANTEROOM_* variables, a visitor joins"
podman healthcheck run "$NAME" >/dev/null || fail "the health check fails on a ready server"
pass "the health check (anteroom health, no shell in it) passes"

t0=$(date +%s%N)
podman stop "$NAME" >/dev/null 2>>"$work/podman.log"  # the default 10 s before SIGKILL
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[[ $(podman inspect --format '{{.State.ExitCode}}' "$NAME") == 0 ]] || fail "exit status on SIGTERM: $(podman logs "$NAME" 2>&1 | tail -3)"
podman logs "$NAME" 2>&1 | grep -q "draining for 5 s" || fail "SIGTERM did not drain: $(podman logs "$NAME" 2>&1 | tail -3)"
(( ms >= 3500 )) || fail "stopped in $ms ms: the image's 5 s drain was not waited for"
pass "podman stop (its default timeout) drains for the image's 5 s and the server exits 0 in $ms ms"

podman start "$NAME" >/dev/null 2>>"$work/podman.log"
wait_port "$P"
s=$(curl -sf "127.0.0.1:$P/v1/rooms/shop/tickets/$ticket") || fail "the ticket is gone after a restart"
grep -q '"position":2' <<<"$s" || fail "the ticket lost its place after a restart: $s"
pass "started again, the line is still there (the volume): same ticket, same place"

size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
base=$(podman image inspect --format '{{.Size}}' "$DEBIAN_BASE")
echo "figures: image $IMAGE $(( size / 1000000 )) MB, of which the Debian 12 base $(( base / 1000000 )) MB"
