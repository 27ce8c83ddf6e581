# Sourced by the loadgen's end-to-end scripts: a work directory removed at exit, fail(), and
# start_server NAME [SERVER OPTIONS...], which starts $SERVER on a free loopback port with the
# admin key loadgen-NAME-admin-key (exported as ANTEROOM_ADMIN_KEY for the loadgen) and sets PORT.
work=$(mktemp -d)
pid=
cleanup() {
  [[ -n $pid ]] && kill "$pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

start_server() {
  local name=$1
  shift
  KEY=loadgen-$name-admin-key
  "$SERVER" --listen 127.0.0.1:0 --data-dir "$work/data" --appendfsync everysec --admin-key "$KEY" \
    --token-secret "loadgen-$name-token-secret-0123456789" "$@" >"$work/server.out" 2>&1 &
  pid=$!
  for _ in $(seq 1 100); do
    grep -q '^anteroom listening on' "$work/server.out" 2>/dev/null && break
    sleep 0.05
  done
  PORT=$(sed -n 's|^anteroom listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$work/server.out")
  [[ -n $PORT ]] || fail "the server did not start: $(cat "$work/server.out")"
  export ANTEROOM_ADMIN_KEY=$KEY
}
