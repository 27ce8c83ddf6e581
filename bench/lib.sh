# Shared by the benchmark scripts (source it): ports, and nginx answering a fixed 200, the
# anchor the server and the loadgen are compared with.

# bench_workdir: $work, a fresh temporary directory, and $pids, background processes the
# script starts; on exit both are cleaned up (the processes killed, the directory removed).
bench_workdir() {
  work=$(mktemp -d)
  pids=()
  trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"' EXIT
}

# wrk_summary WRK_OUTPUT: "rps p50 p99 errors" from `wrk --latency` output (errors: socket
# errors plus non-2xx answers).
wrk_summary() {
  local out=$1 rps p50 p99 errs non2xx
  rps=$(awk '/^Requests\/sec/ {print $2}' <<<"$out")
  p50=$(awk '$1=="50%" {print $2}' <<<"$out")
  p99=$(awk '$1=="99%" {print $2}' <<<"$out")
  errs=$(awk '/Socket errors/ {gsub(",",""); print $4+$6+$8+$10}' <<<"$out")
  non2xx=$(awk '/Non-2xx/ {print $5}' <<<"$out")
  echo "${rps:-0} ${p50:-?} ${p99:-?} $(( ${errs:-0} + ${non2xx:-0} ))"
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 1 200); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.05; done; exit 1; }

# nginx_fixed_200 WORKDIR PORT [WORKERS] [CONNECTIONS_PER_WORKER] [LISTEN_OPTIONS]
# Starts nginx in the background (its pid is appended to the caller's `pids` array) answering
# every request with a fixed 200, and waits until it accepts.
nginx_fixed_200() {
  local work=$1 port=$2 workers=${3:-auto} conns=${4:-4096} listen_opts=${5:-}
  cat >"$work/nginx.conf" <<NGINX
worker_processes $workers;
worker_rlimit_nofile 20000;
pid $work/nginx.pid;
error_log $work/error.log crit;
events { worker_connections $conns; }
http {
    access_log off;
    keepalive_requests 1000000;
    keepalive_timeout 120s;
    client_body_temp_path $work/body; proxy_temp_path $work/proxy; fastcgi_temp_path $work/f;
    uwsgi_temp_path $work/u; scgi_temp_path $work/s;
    server {
        listen 127.0.0.1:$port $listen_opts;
        location / { default_type application/json; return 200 '{"status":"WAITING","position":1}'; }
    }
}
NGINX
  nginx -p "$work" -c "$work/nginx.conf" -g 'daemon off;' &
  pids+=($!)
  wait_port "$port"
}

machine_line() {
  echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //') ($(nproc) cores), $(uname -sr)"
}

# pair_joins SECONDS PORT PORT: anonymous joins/s into the room `bench` through both servers
# at once, `wrk -t1 -c100` on each (the cluster benches: two nodes of one cluster).
pair_joins() {
  local secs=$1 o1 o2 w1 lua
  lua=$(mktemp); o1=$(mktemp); o2=$(mktemp)
  printf 'wrk.method = "POST"\nwrk.body = "{}"\nwrk.headers["Content-Type"] = "application/json"\n' >"$lua"
  wrk -t1 -c100 -d"${secs}s" -s "$lua" "http://127.0.0.1:$2/v1/rooms/bench/tickets" >"$o1" &
  w1=$!
  wrk -t1 -c100 -d"${secs}s" -s "$lua" "http://127.0.0.1:$3/v1/rooms/bench/tickets" >"$o2"
  wait "$w1"
  python3 -c "print(round($(awk '/^Requests\/sec/ {print $2}' "$o1") + $(awk '/^Requests\/sec/ {print $2}' "$o2")))"
  rm -f "$lua" "$o1" "$o2"
}
