#!/usr/bin/env bash
# Join throughput over HTTP with persistence off, `no`, `everysec` and `always`, each as a
# ratio to persistence off measured in the same run (before and after, averaged); plus
# recovery time and log size for 1,000,000 joins. Writes results/persistence.md.
# usage: bench/persistence_bench.sh [BUILD_DIR] [SECONDS]   (needs wrk)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
SECS=${2:-10}
BIN=$BUILD/server/anteroom
OUT=results/persistence.md
work=$(mktemp -d /tmp/anteroom-persist-bench.XXXXXX)
pid=""
cleanup() { [[ -n $pid ]] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
source bench/lib.sh
printf 'wrk.method = "POST"\n' >"$work/join.lua"

measure() {  # mode -> "rps p50 p99 errors"
  local mode=$1 port args
  port=$(free_port)
  rm -rf "$work/data"
  if [[ $mode == off ]]; then args=(--no-persistence); else args=(--appendfsync "$mode"); fi
  "$BIN" --listen "127.0.0.1:$port" --threads 2 --data-dir "$work/data" --admin-key persist-bench-key-01 --token-secret persist-bench-token-secret-0123456 \
    "${args[@]}" >/dev/null 2>&1 &
  pid=$!
  wait_port "$port"
  curl -sf -X PUT -H "Authorization: Bearer persist-bench-key-01" "http://127.0.0.1:$port/v1/rooms/bench" \
    -d '{"capacity":0,"admission":"manual","heartbeat_timeout_seconds":86400,"max_waiting":0}' >/dev/null
  local out
  out=$(wrk -t2 -c200 -d"${SECS}s" --latency -s "$work/join.lua" "http://127.0.0.1:$port/v1/rooms/bench/tickets")
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
  wrk_summary "$out"
}

# Each mode is paired with a persistence-off run right before it (this machine's speed
# drifts by 10-20% over a minute, so a ratio is only fair between neighbours in time).
rows=""
for mode in no everysec always; do
  read -r off off_p50 off_p99 off_err <<<"$(measure off)"
  read -r rps p50 p99 err <<<"$(measure "$mode")"
  ratio=$(python3 -c "print(f'{$rps / $off:.2f}x')")
  rows+="| \`$mode\` | $off | $rps | **$ratio** | $p50 / $off_p50 | $p99 / $off_p99 | $err / $off_err |"$'\n'
done
recovery=$("$BUILD/bench/anteroom-bench" --benchmark_filter=BM_RecoverLog 2>/dev/null | grep '^BM_RecoverLog')
rec_ms=$(awk '{print $2}' <<<"$recovery")
bytes=$(grep -o 'log_bytes_per_join=[0-9.]*' <<<"$recovery" | cut -d= -f2)
cpu=$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)

cat >"$OUT" <<MD
# Persistence benchmarks

- Command: \`bench/persistence_bench.sh $BUILD $SECS\` (writes this file)
- Machine: $cpu, $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), Linux $(uname -r); the log on $(df -h /tmp | awk 'NR==2 {print $1}')
- Date: $(date -u '+%Y-%m-%d %H:%M UTC')
- Load: \`wrk -t2 -c200 -d${SECS}s --latency\`, anonymous joins (\`POST /v1/rooms/bench/tickets\`),
  on the same 2 cores as the server (\`--threads 2\`), a fresh data directory per run.
- Anchor: the same server with \`--no-persistence\`, run right before each mode (same wrk
  command); ratio = mode / that run.

## Join throughput

| appendfsync | off joins/s | mode joins/s | ratio to off | p50 mode / off | p99 mode / off | errors mode / off |
|---|---:|---:|---:|---:|---:|---:|
${rows}
Goals: everysec >= 0.9x, always >= 0.5x. With \`always\` a join is
answered only after its record is on disk: one \`fdatasync\` per batch of joins that
arrived meanwhile (group commit), about 160 us each on this disk.

## Recovery and log size

\`build/bench/anteroom-bench --benchmark_filter=BM_RecoverLog\`: a log of 1,000,000 joins
(half with a user name; a tenth admitted, a tenth left) read back into a fresh engine.

| recovery of 1,000,000 tickets | goal | log bytes per join |
|---:|---|---:|
| ${rec_ms} ms | <= 2 s | $bytes |
MD
cat "$OUT"
