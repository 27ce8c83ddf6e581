#!/usr/bin/env bash
# deploy/nginx/anteroom-fail-open.conf and anteroom-fail-closed.conf through real nginx, a
# tiny origin and anteroom. For each: with anteroom up, a visitor without admission gets the
# waiting page and an admitted one the origin. Then anteroom stops answering the gate three
# ways: stopped (SIGSTOP: the gate times out), killed (refused), and something answering
# 503 in its place (as an overloaded anteroom does). Each time fail-open lets the visitor
# through to the origin, and fail-closed answers 503 with deploy/nginx/busy.html and
# Retry-After without the origin seeing the request. Anteroom started again brings the
# waiting page back. Everything on 127.0.0.1, stops by itself.
# usage: tests/nginx/fail_modes.sh PATH/TO/anteroom
set -euo pipefail
BIN=$1
HERE=$(cd "$(dirname "$0")" && pwd)
DEPLOY=$(cd "$HERE/../../deploy/nginx" && pwd)
KILL_SIGNAL=TERM  # nginx stops its worker only when asked
source "$HERE/../cluster/lib.sh"
source "$HERE/forged_forwarded_for.sh"
# A stopped anteroom keeps a TERM pending (it handles TERM) and cleanup's wait would hang:
# wake everything first.
trap 'kill -CONT "${pids[@]}" 2>/dev/null || true; cleanup' EXIT

KEY=nginx-fail-admin-key
passed=0
ok() { pass "$*"; passed=$((passed + 1)); }

# The origin, shared by both variants. Its log names every request that reached it, and
# each request below has its own query string (probe=N), so the log tells about each one.
O=$(free_port)
mkdir -p "$work/origin/shop"
echo "ORIGIN OK" >"$work/origin/shop/index.html"
python3 -u -m http.server "$O" --bind 127.0.0.1 --directory "$work/origin" >"$work/origin.log" 2>&1 &
pids+=($!)

# Stands in for an anteroom that answers but fails: 503 to everything.
cat >"$work/sick.py" <<'PY'
import http.server, sys
class Sick(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b'{"error":"overloaded"}'
        self.send_response(503)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    do_HEAD = do_GET
    def log_message(self, *args):
        print("sick:", self.requestline, flush=True)
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Sick).serve_forever()
PY

# The busy page where nginx's worker (nobody, when started as root) can read it: the work
# directory from mktemp is 0700.
chmod 711 "$work"
mkdir -m 755 "$work/www"
install -m 644 "$DEPLOY/busy.html" "$work/www/busy.html"

start_anteroom() {  # port data-dir; sets $anteroom
  "$BIN" --listen "127.0.0.1:$1" --data-dir "$2" --no-persistence --admin-key "$KEY" \
    --trusted-proxy 127.0.0.1 --threads 1 \
    --token-secret nginx-fail-token-secret-0123456789abcd >>"$work/anteroom.log" 2>&1 &
  anteroom=$!
  pids+=("$anteroom")
  wait_port "$1"
}

# One request for /shop/ through nginx: the status in $code, headers in $work/h, the body
# in $work/b. Extra arguments go to curl.
probe=0
get() {
  probe=$((probe + 1))
  code=$(curl -s --max-time 15 -D "$work/h" -o "$work/b" -w '%{http_code}' "$@" \
    "http://127.0.0.1:$N/shop/?probe=$probe") || code="000 (curl failed)"
}
reached_origin() { grep -q "\"GET /shop/?probe=$probe HTTP" "$work/origin.log"; }

expect_waiting_page() {  # what [curl args]
  local what=$1; shift
  get -H "Accept: text/html" "$@"
  [[ $code == 200 ]] || fail "$what: expected the waiting page (200), got $code"
  grep -q 'id="position"' "$work/b" || fail "$what: the answer is not the waiting page: $(head -c 200 "$work/b")"
  if reached_origin || grep -q "ORIGIN OK" "$work/b"; then fail "$what: the origin was reached without admission"; fi
}
expect_origin() {  # what [curl args]
  local what=$1; shift
  get "$@"
  [[ $code == 200 ]] || fail "$what: expected the origin (200), got $code"
  [[ $(<"$work/b") == "ORIGIN OK" ]] || fail "$what: the answer is not the origin's page: $(head -c 200 "$work/b")"
  reached_origin || fail "$what: the origin's log has no request probe=$probe"
}
expect_busy() {  # what [curl args]
  local what=$1; shift
  get "$@"
  [[ $code == 503 ]] || fail "$what: expected the busy page (503), got $code"
  cmp -s "$work/b" "$DEPLOY/busy.html" || fail "$what: the body is not busy.html: $(head -c 200 "$work/b")"
  grep -qi '^Retry-After: 30' "$work/h" || fail "$what: no Retry-After: $(tr -d '\r' <"$work/h")"
  grep -qi '^Content-Type: text/html; charset=utf-8' "$work/h" || fail "$what: not served as UTF-8 HTML"
  if reached_origin; then fail "$what: the origin was reached"; fi
}
expect_fallback() {  # mode what: what the variant does when anteroom does not answer
  if [[ $1 == open ]]; then expect_origin "$2"; else expect_busy "$2"; fi
  expect_fallback_post "$1" "$2"
}
expect_fallback_post() {  # mode what: a POST (a form) gets the same treatment
  get -X POST -d 'item=1'
  if [[ $1 == open ]]; then
    # http.server answers 501 to a POST: what matters is that nginx passed it on.
    [[ $code == 501 ]] && grep -q "\"POST /shop/?probe=$probe HTTP" "$work/origin.log" ||
      fail "$2: a POST did not reach the origin (got $code)"
  else
    [[ $code == 503 ]] && cmp -s "$work/b" "$DEPLOY/busy.html" || fail "$2: a POST did not get the busy page (got $code)"
    if grep -q "\"POST /shop/?probe=$probe HTTP" "$work/origin.log"; then fail "$2: a POST reached the origin"; fi
  fi
}

variant() {  # open|closed
  local mode=$1 dir=$work/$1 A ticket token sick nginx_pid
  local name="fail-$mode"
  A=$(free_port); N=$(free_port)
  mkdir -p "$dir"
  sed -e "s/127.0.0.1:8000/127.0.0.1:$N/; s/127.0.0.1:8080/127.0.0.1:$A/; s/127.0.0.1:9000/127.0.0.1:$O/" \
    -e "s#/var/www/anteroom/#$work/www/#" "$DEPLOY/anteroom-fail-$mode.conf" >"$dir/anteroom.conf"
  if grep -Eq '127\.0\.0\.1:(8000|8080|9000)|/var/www/' "$dir/anteroom.conf"; then
    fail "$name: an address or path of the example was left unreplaced"
  fi
  cat >"$dir/nginx.conf" <<NGINX
worker_processes 1;
pid $dir/nginx.pid;
error_log $work/nginx-$mode.log warn;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path $dir/body;
    proxy_temp_path $dir/proxy;
    fastcgi_temp_path $dir/fastcgi;
    uwsgi_temp_path $dir/uwsgi;
    scgi_temp_path $dir/scgi;
    include $dir/anteroom.conf;
}
NGINX
  nginx -t -p "$dir" -c "$dir/nginx.conf" >/dev/null 2>&1 ||
    fail "$name: nginx -t rejects the example: $(nginx -t -p "$dir" -c "$dir/nginx.conf" 2>&1)"
  nginx -p "$dir" -c "$dir/nginx.conf" -g 'daemon off;' &
  nginx_pid=$!
  pids+=("$nginx_pid")
  start_anteroom "$A" "$dir/data"
  wait_port "$O"; wait_port "$N"

  # Anteroom up: the config behaves as anteroom.conf does.
  curl -sf -X PUT -H "Authorization: Bearer $KEY" "http://127.0.0.1:$A/v1/rooms/demo" \
    -d '{"capacity":5,"admission":"manual","match":[{"path_prefix":"/"}]}' >/dev/null ||
    fail "$name: cannot create the room"
  expect_waiting_page "$name, anteroom up"
  ticket=$(curl -sf -X POST "http://127.0.0.1:$N/v1/rooms/demo/tickets" -d '{}' |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["ticket"])') || fail "$name: join through nginx"
  curl -sf -X POST -H "Authorization: Bearer $KEY" "http://127.0.0.1:$A/v1/rooms/demo/admit" \
    -d '{"count":1}' >/dev/null || fail "$name: admit"
  token=$(curl -sf "http://127.0.0.1:$N/v1/rooms/demo/tickets/$ticket" |
    python3 -c 'import json,sys; print(json.load(sys.stdin).get("token",""))') || fail "$name: status"
  [[ -n $token ]] || fail "$name: no token after admission"
  expect_origin "$name, anteroom up, admitted" -H "Cookie: anteroom_demo=$token"
  grep -qi '^Set-Cookie: anteroom_demo=' "$work/h" || fail "$name: the gate's fresh token was not passed on"
  ok "$name, anteroom up: the waiting page without admission, the origin with it"
  forged_forwarded_for_is_ignored "$N" "$A" "$KEY" demo
  passed=$((passed + 1))

  # Stopped: connections are accepted but nothing answers, so the gate times out (3 s).
  kill -STOP "$anteroom"
  expect_fallback "$mode" "$name, anteroom stopped"
  grep -q 'upstream timed out.*subrequest: "/_anteroom_gate"' "$work/nginx-$mode.log" ||
    fail "$name: nginx did not log the gate timing out"
  ok "$name, anteroom stopped (the gate times out): $([[ $mode == open ]] && echo "through to the origin" || echo "the busy page, 503 with Retry-After, origin untouched")"

  # Killed: the connection is refused.
  kill -KILL "$anteroom"
  wait "$anteroom" 2>/dev/null || true
  expect_fallback "$mode" "$name, anteroom killed"
  grep -q 'Connection refused.*subrequest: "/_anteroom_gate"' "$work/nginx-$mode.log" ||
    fail "$name: nginx did not log the gate's connection refused"
  ok "$name, anteroom killed (refused): $([[ $mode == open ]] && echo "through to the origin" || echo "the busy page, origin untouched")"

  # Something answers 503 in anteroom's place.
  python3 -u "$work/sick.py" "$A" >"$work/sick-$mode.log" 2>&1 &
  sick=$!
  pids+=("$sick")
  wait_port "$A"
  expect_fallback "$mode" "$name, the gate answers 503"
  grep -q "sick: GET /v1/gate" "$work/sick-$mode.log" || fail "$name: the 503 stand-in was never asked"
  ok "$name, the gate answers 503: $([[ $mode == open ]] && echo "through to the origin" || echo "the busy page, origin untouched")"
  kill "$sick"
  wait "$sick" 2>/dev/null || true

  # Anteroom back (its rooms declared again, as a --config file or its log gives them): the
  # waiting page again, at once.
  start_anteroom "$A" "$dir/data-again"
  curl -sf -X PUT -H "Authorization: Bearer $KEY" "http://127.0.0.1:$A/v1/rooms/demo" \
    -d '{"capacity":5,"admission":"manual","match":[{"path_prefix":"/"}]}' >/dev/null ||
    fail "$name: cannot create the room again"
  expect_waiting_page "$name, anteroom back"
  ok "$name, anteroom back: the waiting page again"

  kill "$anteroom" "$nginx_pid"
  wait "$anteroom" "$nginx_pid" 2>/dev/null || true
}

variant open
variant closed
echo "nginx fail modes: $passed passed, 0 failed"
