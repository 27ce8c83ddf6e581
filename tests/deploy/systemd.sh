#!/usr/bin/env bash
# deploy/systemd/anteroom.service: installed with `cmake --install` into a throwaway prefix
# (which rewrites ExecStart to PREFIX/bin/anteroom, a binary that exists, as verify demands),
# then `systemd-analyze verify` must pass without a word, and `systemd-analyze security`
# must rate the sandbox at most 2.0 ("OK"); the unit's command line must start the installed
# anteroom with the installed configuration. Usage: systemd.sh CMAKE BUILD_DIR. Exits 77
# (ctest: skipped), saying why, when systemd-analyze is missing.
set -euo pipefail
cmake=$1 build=$2
if ! command -v systemd-analyze >/dev/null; then
  echo "SKIP: systemd-analyze is missing (Debian's systemd package; scripts/deps.sh installs it)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$cmake" --install "$build" --prefix "$work/prefix" >"$work/install.out" 2>&1 ||
  fail "cmake --install: $(cat "$work/install.out")"
unit=$work/prefix/lib/systemd/system/anteroom.service
[[ -f $unit ]] || fail "cmake --install put no unit in lib/systemd/system"
grep -qx "ExecStart=$work/prefix/bin/anteroom --config $work/prefix/etc/anteroom/anteroom.conf --data-dir /var/lib/anteroom" "$unit" ||
  fail "ExecStart not rewritten to the prefix: $(grep ExecStart "$unit")"

# verify reports bad settings on stderr but still exits 0, so its output must be empty too.
# It loads the unit with the host's units (network-online.target, multi-user.target).
(cd "$work" && systemd-analyze verify "$unit") >"$work/verify.out" 2>&1 ||
  fail "systemd-analyze verify: $(cat "$work/verify.out")"
[[ ! -s $work/verify.out ]] || fail "systemd-analyze verify: $(cat "$work/verify.out")"

# These settings must be there as the issue asks (verify accepts a unit without them).
for want in DynamicUser=yes StateDirectory=anteroom ProtectSystem=strict ProtectHome=yes \
  PrivateTmp=yes NoNewPrivileges=yes CapabilityBoundingSet= LimitNOFILE=1048576 \
  Restart=on-failure SystemCallFilter=@system-service 'ExecReload=/bin/kill -HUP $MAINPID'; do
  grep -qx "$want" "$unit" || fail "the unit lacks $want"
done
grep -q '^RestrictAddressFamilies=' "$unit" || fail "the unit lacks RestrictAddressFamilies"

# The unit's command line starts with the installed configuration (deploy/anteroom.conf):
# the same words, but the data directory and the two listeners made the test's (flags win
# over the file), until it answers /readyz.
read -r -a command <<<"$(sed -n 's/^ExecStart=//p' "$unit")"
for i in "${!command[@]}"; do
  [[ ${command[$i]} == --data-dir ]] && command[$((i + 1))]=$work/data
done
"${command[@]}" --listen 127.0.0.1:0 --admin-listen 127.0.0.2:0 >"$work/server.out" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
port=
for _ in $(seq 1 200); do
  port=$(sed -n 's|^anteroom listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$work/server.out" \
    2>/dev/null || true)
  [[ -n $port ]] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.05
done
[[ -n $port ]] || fail "${command[*]} did not start: $(cat "$work/server.out")"
if command -v curl >/dev/null; then
  curl -sf --max-time 10 "127.0.0.1:$port/readyz" >/dev/null || fail "/readyz: not ready"
fi
kill -TERM "$pid"
wait "$pid" || fail "the server did not exit 0 on SIGTERM: $(cat "$work/server.out")"
echo "the unit's command line starts with the installed configuration"

systemd-analyze security --help >"$work/security-help" 2>&1 || true
if grep -q -- '--offline' "$work/security-help"; then
  systemd-analyze security --offline=true "$unit" >"$work/security.out" 2>&1 || true
  level=$(sed -n 's/.*Overall exposure level for anteroom.service: \([0-9.]*\).*/\1/p' "$work/security.out")
  [[ -n $level ]] || fail "systemd-analyze security said: $(tail -3 "$work/security.out")"
  awk -v l="$level" 'BEGIN { exit !(l <= 2.0) }' || fail "exposure level $level (above 2.0)"
  echo "exposure level $level"
else
  echo "systemd-analyze has no --offline security check; exposure not rated"
fi
echo "PASS: the installed unit verifies"
