#!/usr/bin/env bash
# The forward-auth gate in front of a site, each figure beside its anchor in the same run
# (wrk -t2 -c100, DURATION seconds, alternating anchor and subject ROUNDS times):
#   gate decision    anteroom's /v1/gate, a valid cookie, 100 match rules over 10 rooms and
#                    20 bypass rules, asked Traefik's way (no renewal) and nginx's way (a
#                    fresh cookie on every 200)    vs nginx `return 200`
#   page             a 2 KB page through nginx with deploy/nginx/anteroom.conf (a subrequest
#                    each) and with anteroom-fast-pass.conf (a valid fast pass)
#                                                  vs nginx serving the page alone
#   asset            a stylesheet on a bypass rule without a cookie (anteroom.conf), and with
#                    a fast pass                   vs nginx serving it alone
#   Caddy            the page through deploy/caddy/Caddyfile vs Caddy serving it alone
# The shipped configs are used with one change: the origin's proxy_pass is the page's files
# (root), so both sides serve the same file. The fast pass lasts 60 s here and is taken
# afresh before each run, so that wrk's fixed cookie stays valid through the run (a browser
# gets a new one every --fast-pass-seconds from the gate; nginx's cost per request is the
# same).
# Writes results/integrations.md.   usage: bench/gate_bench.sh [ROUNDS] [DURATION]
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
DURATION=${2:-5}
BIN=build/server/anteroom
source bench/lib.sh
bench_workdir
KEY=gate-bench-admin-key-0123
SECRET=gate-bench-fast-pass-secret-0123456789
A=$(free_port); R=$(free_port); S=$(free_port); G=$(free_port); F=$(free_port)
C1=$(free_port); C2=$(free_port)
site=$work/site
mkdir -p "$site/static"
python3 -c 'print("<!doctype html><title>shop</title>" + "x" * 1990)' >"$site/index.html"
python3 -c 'print("body{color:#123}" + "/*" + "y" * 2000 + "*/")' >"$site/static/site.css"
chmod 755 "$work"; chmod -R a+rX "$site"

"$BIN" --listen "127.0.0.1:$A" --no-persistence --data-dir "$work/data" --admin-key "$KEY" \
  --token-secret gate-bench-token-secret-0123456789abcd --trusted-proxy 127.0.0.1 \
  --fast-pass-secret "$SECRET" --fast-pass-seconds 60 >"$work/anteroom.out" 2>&1 &
pids+=($!)

# nginx: the anchor, the page alone, and the two shipped configs serving the page's files.
static_origin() { sed -e "s#proxy_pass http://origin;#root $site;#" \
  -e "s#proxy_pass http://origin\$request_uri;#alias $site/;#" "$@"; }
{
  echo "server { listen 127.0.0.1:$R; location / { return 200 'ok'; } }"
  echo "server { listen 127.0.0.1:$S; root $site; }"
  static_origin -e "s/127.0.0.1:8000/127.0.0.1:$G/; s/127.0.0.1:8080/127.0.0.1:$A/" \
    deploy/nginx/anteroom.conf
  echo "set \$anteroom_fast_pass_secret \"$SECRET\";" >"$work/secret.nginx"
  static_origin -e "s/127.0.0.1:8000/127.0.0.1:$F/; s/127.0.0.1:8080/127.0.0.1:$A/" \
    -e "s#/etc/anteroom/fast-pass-secret.nginx#$work/secret.nginx#" \
    -e "s/upstream anteroom /upstream anteroom_f /; s#http://anteroom#http://anteroom_f#g" \
    -e "s/upstream origin /upstream origin_f /" deploy/nginx/anteroom-fast-pass.conf
} >"$work/site.conf"
cat >"$work/nginx.conf" <<NGINX
worker_processes auto;
worker_rlimit_nofile 20000;
pid $work/nginx.pid;
error_log $work/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_requests 1000000;
    client_body_temp_path $work/body; proxy_temp_path $work/proxy; fastcgi_temp_path $work/f;
    uwsgi_temp_path $work/u; scgi_temp_path $work/s;
    include $work/site.conf;
}
NGINX
nginx -t -p "$work" -c "$work/nginx.conf" 2>"$work/nginx-t.out" || { cat "$work/nginx-t.out"; exit 1; }
nginx -p "$work" -c "$work/nginx.conf" -g 'daemon off;' &
pids+=($!)
{
  sed -e "s/^:8000 {/:$C2 {\n\tbind 127.0.0.1/; s/127.0.0.1:8080/127.0.0.1:$A/g" \
    -e "s#reverse_proxy 127.0.0.1:9000#root * $site\n\t\tfile_server#" deploy/caddy/Caddyfile
  printf ':%s {\n\tbind 127.0.0.1\n\troot * %s\n\tfile_server\n}\n' "$C1" "$site"
} >"$work/Caddyfile"
XDG_CONFIG_HOME=$work XDG_DATA_HOME=$work caddy run --config "$work/Caddyfile" \
  --adapter caddyfile >"$work/caddy.log" 2>&1 &
pids+=($!)
for p in $A $R $S $G $F $C1 $C2; do wait_port "$p"; done

# 100 match rules (the shop's host, and 99 over 9 other rooms) and 20 bypass rules.
bypass=$(python3 -c 'import json; print(json.dumps([{"name":"a%d"%i,"path_prefix":"/assets%d/"%i} for i in range(19)]+[{"name":"static","path_prefix":"/static/"}]))')
put() { curl -sf -X PUT -H "Authorization: Bearer $KEY" "http://127.0.0.1:$A/v1/rooms/$1" -d "$2" >/dev/null; }
put shop "{\"capacity\":100000,\"match\":[{\"host\":\"shop.example\"}],\"bypass\":$bypass}"
for i in $(seq 1 9); do
  put "other$i" "$(python3 -c 'import json,sys; i=int(sys.argv[1]); print(json.dumps({"capacity":10,"match":[{"host":"other%d.example"%i,"path_prefix":"/p%d/"%j} for j in range(11)]}))' "$i")"
done
# A visitor's cookies: the admission cookie and the fast pass, from nginx's way of asking;
# the fast pass taken again before each run that uses it (it lasts 60 s).
cookies() {
  local first
  first=$(curl -s -i -H "Host: shop.example" -H "Cookie: ${cookie:-}" "http://127.0.0.1:$F/index.html")
  cookie=$(sed -n 's/^Set-Cookie: \(anteroom_shop=[^;]*\);.*/\1/p' <<<"$first" | tr -d '\r')
  fast=$(sed -n 's/^Set-Cookie: \(anteroom_fast=[^;]*\);.*/\1/p' <<<"$first" | tr -d '\r')
  [[ -n $cookie && -n $fast ]] || { echo "no cookies: $first" >&2; exit 1; }
}
cookies

run() {  # NAME URL [wrk args...]: appends "NAME rps errors" to $work/rows
  local name=$1 url=$2 out
  shift 2
  out=$(wrk -t2 -c100 -d"${DURATION}s" --latency "$@" "$url")
  read -r rps _ _ errs <<<"$(wrk_summary "$out")"
  echo "$name $rps $errs" >>"$work/rows"
}
traefik=(-H "X-Forwarded-Uri: /index.html" -H "X-Forwarded-Host: shop.example"
  -H "X-Forwarded-Method: GET" -H "X-Forwarded-Proto: http" -H "Cookie: $cookie")
nginx_way=(-H "X-Original-URI: /index.html" -H "X-Forwarded-Host: shop.example" -H "Cookie: $cookie")
shop=(-H "Host: shop.example")
run warmup "http://127.0.0.1:$R/" >/dev/null; : >"$work/rows"
for _ in $(seq 1 "$ROUNDS"); do
  run anchor_gate "http://127.0.0.1:$R/"
  run gate_traefik "http://127.0.0.1:$A/v1/gate" "${traefik[@]}"
  run anchor_gate "http://127.0.0.1:$R/"
  run gate_nginx "http://127.0.0.1:$A/v1/gate" "${nginx_way[@]}"
  # Each anchor gets the request its subject gets (the same Host and cookies), so the
  # difference is what the gate or the fast pass costs.
  run anchor_page "http://127.0.0.1:$S/index.html" "${shop[@]}" -H "Cookie: $cookie"
  run page_gate "http://127.0.0.1:$G/index.html" "${shop[@]}" -H "Cookie: $cookie"
  cookies
  run anchor_page "http://127.0.0.1:$S/index.html" "${shop[@]}" -H "Cookie: $fast; $cookie"
  run page_fast "http://127.0.0.1:$F/index.html" "${shop[@]}" -H "Cookie: $fast; $cookie"
  run anchor_asset "http://127.0.0.1:$S/static/site.css" "${shop[@]}"
  run asset_bypass "http://127.0.0.1:$G/static/site.css" "${shop[@]}"
  cookies
  run anchor_asset "http://127.0.0.1:$S/static/site.css" "${shop[@]}" -H "Cookie: $fast; $cookie"
  run asset_fast "http://127.0.0.1:$F/static/site.css" "${shop[@]}" -H "Cookie: $fast; $cookie"
  run anchor_caddy "http://127.0.0.1:$C1/index.html" "${shop[@]}" -H "Cookie: $cookie"
  run caddy_gate "http://127.0.0.1:$C2/index.html" "${shop[@]}" -H "Cookie: $cookie"
done
python3 bench/gate_report.py "$work/rows" "$ROUNDS" "$DURATION" "$(machine_line)" \
  "$(nginx -v 2>&1 | cut -d/ -f2)" "$(caddy version | cut -d' ' -f1)" >results/integrations.md
cat results/integrations.md
