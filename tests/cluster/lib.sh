# Shared by the cluster's end-to-end scripts (source it): a work directory and the
# background processes the script starts (append their pids to `pids`), killed and removed
# on exit (with KILL_SIGNAL, default KILL; a function `extra_cleanup`, if defined, runs
# too); free ports, waiting for a listener, and the PASS/FAIL lines.
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -s "${KILL_SIGNAL:-KILL}" "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if declare -F extra_cleanup >/dev/null; then extra_cleanup; fi
  rm -rf "$work"
}
trap cleanup EXIT
# Says what failed and the last lines of every log in the work directory, then exits 1.
fail() {
  echo "FAIL: $*" >&2
  for f in "$work"/*.log; do
    [[ -f $f ]] || continue
    echo "== $f" >&2
    tail -n 3 "$f" >&2
  done
  exit 1
}
pass() { echo "PASS: $*"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_tcp() {  # host port: until something accepts there (10 s at most)
  for _ in $(seq 1 200); do
    (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null && return 0
    sleep 0.05
  done
  fail "nothing listens on $1:$2"
}
wait_port() { wait_tcp 127.0.0.1 "$1"; }
# A node started with --listen 127.0.0.1:0 and its output in $work/NAME.log says its port
# on its first line (a port picked ahead could be taken by another test meanwhile).
node_port() {  # name, variable: sets the variable to the node's port (10 s at most)
  local p=""
  for _ in $(seq 1 200); do
    p=$(sed -n 's|^anteroom listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$work/$1.log" 2>/dev/null || true)
    [[ -n $p ]] && break
    sleep 0.05
  done
  [[ -n $p ]] || fail "node $1 did not start"
  printf -v "$2" '%s' "$p"
}
