#!/usr/bin/env bash
# The loadgen's site scenario through a real proxy: nginx with deploy/nginx/anteroom.conf
# (the gate asked the nginx way, the page in place) or Caddy with deploy/caddy/Caddyfile
# (redirects to the page and through the one-time /v1/enter link). A few visitors at a pace
# the room admits at once (straight to the origin), then a surge that queues; every visitor
# reaches the origin's page and XHR, and the bypassed stylesheet makes no ticket (the
# loadgen's own checks; its exit status is this test's); without the bypass rule the
# loadgen must say FAIL. The origin is a second server of the same proxy with static files.
# Everything on 127.0.0.1, bounded, stops by itself.
# usage: tests/loadgen/site.sh PATH/TO/anteroom PATH/TO/anteroom-loadgen [nginx|caddy]
set -euo pipefail
BIN=$1
LOADGEN=$2
PROXY=${3:-nginx}
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../nginx/lib.sh"

A=$(free_port); O=$(free_port); N=$(free_port)
KEY=site-load-admin-key
"$BIN" --listen "127.0.0.1:$A" --data-dir "$work/data" --no-persistence --admin-key "$KEY" \
  --trusted-proxy 127.0.0.1 --threads 1 \
  --token-secret site-load-token-secret-0123456789abc >"$work/anteroom.log" 2>&1 &
pids+=($!)
mkdir -p "$work/origin/store/api" "$work/origin/static"
echo '<!doctype html><link rel="stylesheet" href="/static/site.css"><body>STORE</body>' \
  >"$work/origin/store/index.html"
echo '{"items":[]}' >"$work/origin/store/api/cart"
echo 'body{color:#123}' >"$work/origin/static/site.css"
chmod 755 "$work"; chmod -R a+rX "$work/origin"  # nginx's workers may run as nobody
if [[ $PROXY == caddy ]]; then
  command -v caddy >/dev/null || fail "caddy is not installed (scripts/deps.sh installs it)"
  {
    sed -e "s/^:8000 {/:$N {\n\tbind 127.0.0.1/; s/127.0.0.1:8080/127.0.0.1:$A/g; s/127.0.0.1:9000/127.0.0.1:$O/" \
      "$HERE/../../deploy/caddy/Caddyfile"
    printf ':%s {\n\tbind 127.0.0.1\n\troot * %s\n\tfile_server\n}\n' "$O" "$work/origin"
  } >"$work/Caddyfile"
  XDG_CONFIG_HOME=$work XDG_DATA_HOME=$work caddy run --config "$work/Caddyfile" \
    --adapter caddyfile >"$work/caddy.log" 2>&1 &
  pids+=($!)
else
  {
    sed -e "s/127.0.0.1:8000/127.0.0.1:$N/; s/127.0.0.1:8080/127.0.0.1:$A/; s/127.0.0.1:9000/127.0.0.1:$O/" \
      "$HERE/../../deploy/nginx/anteroom.conf"
    echo "server { listen 127.0.0.1:$O; root $work/origin; }"
  } >"$work/site.conf"
  start_nginx "$work/site.conf"
fi
wait_port "$A"; wait_port "$O"; wait_port "$N"

# 20 before the surge at 10 a second (the room admits 20 a second), then 100 at once.
"$LOADGEN" site --target "127.0.0.1:$N" --admin-key "$KEY" --users 100 --before-users 20 \
  --admit-per-second 20 --arrival-rate 0 --threads 1 --timeout 20 --out "$work/site" \
  >"$work/loadgen.log" 2>&1 || fail "the site run failed: $(cat "$work/loadgen.log")"
grep -E "never saw|time to the origin|one ticket per visitor|reached the origin" "$work/loadgen.log"
pass "the site scenario through $PROXY: every visitor in, one ticket each"

# The same room without its bypass rule: the cookieless assets make tickets nobody uses
# (nginx: the gate admits them itself) or are refused (Caddy: a script is not sent through
# the one-time link; and once a line forms): the loadgen must say FAIL.
if "$LOADGEN" site --target "127.0.0.1:$N" --admin-key "$KEY" --users 20 --before-users 5 \
  --admit-per-second 20 --arrival-rate 0 --threads 1 --timeout 20 --no-bypass \
  --out "$work/no-bypass" >"$work/no-bypass.log" 2>&1; then
  fail "the loadgen passed a room whose assets were not bypassed: $(cat "$work/no-bypass.log")"
fi
grep -qE "(one ticket per visitor|reached the origin).*FAIL" "$work/no-bypass.log" ||
  fail "without the bypass neither check failed: $(grep -E 'ticket per|reached' "$work/no-bypass.log")"
pass "without the bypass rule the loadgen says FAIL: $(grep -oE '(one ticket per visitor|[a-z]+: every visitor reached)[^|]*\| \*\*FAIL' "$work/no-bypass.log" | head -1)"
