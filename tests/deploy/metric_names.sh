#!/usr/bin/env bash
# deploy/grafana/anteroom.json is a Grafana dashboard (valid JSON, a data source variable and
# a room variable, every panel querying through the data source variable), and every
# anteroom_* metric it and deploy/prometheus/alerts.yml query is in the /metrics of real
# servers: one with a log (anteroom_storage_up, anteroom_fsync_seconds) and a room with
# tickets, and a cluster node on a redis-server started here (anteroom_redis_up). Usage:
# metric_names.sh ANTEROOM SOURCE_DIR. Exits 77 (ctest: skipped), saying why, when
# redis-server, redis-cli or curl is missing.
set -euo pipefail
server=$1 source=$2
for tool in redis-server redis-cli curl python3; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: $tool is missing (scripts/deps.sh installs it)"
    exit 77
  fi
done
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
KEY=metric-names-admin-key-0123456789
curl() { command curl --max-time 10 "$@"; }  # every request bounded

start() {  # name, flags...: starts a server on a free port; sets PORT
  local name=$1
  shift
  "$server" --listen 127.0.0.1:0 --data-dir "$work/$name" --admin-key "$KEY" \
    --token-secret "metric-names-token-secret-0123456789" "$@" >"$work/$name.out" 2>&1 &
  pids+=($!)
  PORT=
  for _ in $(seq 1 200); do
    # The shell may not have created the output file yet.
    PORT=$(sed -n 's|^anteroom listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$work/$name.out" \
      2>/dev/null || true)
    [[ -n $PORT ]] && return 0
    kill -0 "${pids[-1]}" 2>/dev/null || break
    sleep 0.05
  done
  fail "$name did not start: $(cat "$work/$name.out")"
}

start lone --appendfsync always
curl -sf -X PUT -H "Authorization: Bearer $KEY" "127.0.0.1:$PORT/v1/rooms/sale" \
  -d '{"capacity":1}' >/dev/null || fail "PUT /v1/rooms/sale"
for u in a b; do
  curl -sf -X POST "127.0.0.1:$PORT/v1/rooms/sale/tickets" -d "{\"user\":\"$u\"}" >/dev/null ||
    fail "join $u"
done
curl -sf -H "Authorization: Bearer $KEY" "127.0.0.1:$PORT/metrics" >"$work/metrics" || fail "GET /metrics"

# Redis on a port picked ahead (redis-server cannot take one of the kernel's choosing); if
# another process took it meanwhile, another port.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
R=
for _ in 1 2 3 4 5; do
  port=$(free_port)
  redis-server --port "$port" --bind 127.0.0.1 --dir "$work" --save "" --appendonly no \
    --logfile "$work/redis.log" &
  pids+=($!)
  for _ in $(seq 1 100); do
    if [[ $(redis-cli -p "$port" ping 2>/dev/null) == PONG ]]; then R=$port; break; fi
    kill -0 "${pids[-1]}" 2>/dev/null || break
    sleep 0.05
  done
  [[ -n $R ]] && break
done
[[ -n $R ]] || fail "redis-server did not start: $(tail -3 "$work/redis.log")"
start node --cluster "127.0.0.1:$R" --node-name n1
curl -sf -H "Authorization: Bearer $KEY" "127.0.0.1:$PORT/metrics" >>"$work/metrics" || fail "GET /metrics of the cluster node"

grep -qx 'anteroom_storage_up 1' "$work/metrics" || fail "the lone server's storage is not up"
grep -qx 'anteroom_redis_up 1' "$work/metrics" || fail "the cluster node does not reach Redis"

python3 - "$source" "$work/metrics" <<'PY'
import json, re, sys
source, metrics = sys.argv[1], sys.argv[2]
exported = {re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line).group(0)
            for line in open(metrics) if line.strip() and not line.startswith("#")}
name = re.compile(r"\banteroom_[a-z0-9_]+")
problems = []

dash_path = f"{source}/deploy/grafana/anteroom.json"
dash = json.load(open(dash_path))  # raises on invalid JSON
variables = {v["name"]: v for v in dash["templating"]["list"]}
if variables.get("datasource", {}).get("type") != "datasource":
    problems.append("the dashboard has no datasource variable")
if "room" not in variables:
    problems.append("the dashboard has no room variable")
queries = [v["definition"] for v in variables.values() if "definition" in v]
for panel in dash["panels"]:
    if panel.get("datasource", {}).get("uid") != "${datasource}":
        problems.append(f"panel {panel['title']!r} does not use the datasource variable")
    targets = panel.get("targets", [])
    if not targets:
        problems.append(f"panel {panel['title']!r} queries nothing")
    queries += [t["expr"] for t in targets]
used = {dash_path: {n for q in queries for n in name.findall(q)}}
alerts_path = f"{source}/deploy/prometheus/alerts.yml"
used[alerts_path] = {n for line in open(alerts_path) if not line.lstrip().startswith("#")
                     for n in name.findall(line)}
for path, names in used.items():
    if not names:
        problems.append(f"{path} queries no anteroom metric")
    for n in sorted(names - exported):
        problems.append(f"{path} queries {n}, which /metrics does not export")
for p in problems:
    print("FAIL:", p, file=sys.stderr)
if problems:
    sys.exit(1)
print(f"PASS: {len(used[dash_path])} metrics in the dashboard, {len(used[alerts_path])} in the "
      f"alerts, all exported ({len(exported)} series names seen)")
PY
