# Shared by run_node.sh and run_python.sh: a work directory, and on exit every anteroom the
# test started (their pids are in WORK/pids) stopped and the directory removed.
# usage: source lib.sh PATH/TO/anteroom
binary="$(realpath "$1")"
[[ -x "$binary" ]] || { echo "FAIL: $1 is not an executable anteroom binary" >&2; exit 2; }
work="$(mktemp -d "${TMPDIR:-/tmp}/anteroom-connectors.XXXXXX")"

stop_started() {
  local pid
  if [[ -f "$work/pids" ]]; then
    while read -r pid; do
      # Only a process that is still our anteroom (a pid is reused once it has exited).
      if [[ "$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline")" == "$binary "* ]]; then
        kill "$pid" 2>/dev/null || true
      fi
    done <"$work/pids"
  fi
  rm -rf "$work"
}
trap stop_started EXIT
