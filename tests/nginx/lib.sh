# Shared by the nginx end-to-end scripts (source it): tests/cluster/lib.sh's work directory,
# cleanup, ports and PASS/FAIL lines (processes stopped with TERM: nginx stops its worker
# only when asked), and `start_nginx SITE_CONF [LOG_LEVEL]`: real nginx in the foreground
# with SITE_CONF included in its http block, everything it writes under $work; checked
# with `nginx -t` first.
KILL_SIGNAL=${KILL_SIGNAL:-TERM}
source "$(dirname "${BASH_SOURCE[0]}")/../cluster/lib.sh"

start_nginx() {
  cat >"$work/nginx.conf" <<NGINX
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log ${2:-warn};
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $work/body;
    proxy_temp_path $work/proxy;
    fastcgi_temp_path $work/fastcgi;
    uwsgi_temp_path $work/uwsgi;
    scgi_temp_path $work/scgi;
    include $1;
}
NGINX
  nginx -t -p "$work" -c "$work/nginx.conf" >/dev/null 2>&1 ||
    fail "nginx -t rejects $1: $(nginx -t -p "$work" -c "$work/nginx.conf" 2>&1)"
  nginx -p "$work" -c "$work/nginx.conf" -g 'daemon off;' &
  pids+=($!)
}
