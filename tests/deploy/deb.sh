#!/usr/bin/env bash
# The .deb (cmake/packaging.cmake): built with cpack, installed with dpkg into a throwaway
# root, its installed anteroom and anteroom-loadgen run, its files and Depends checked, then
# purged. Usage: deb.sh CPACK BUILD_DIR SOURCE_DIR VERSION. Exits 77 (ctest: skipped), saying
# why, when a tool is missing.
#
# The root has no base system: dpkg's database in it holds the host's records of exactly the
# packages the .deb depends on, so dpkg checks Depends (names and versions) against what is
# installed here, a Debian 12; the maintainer scripts run outside the root
# (--force-script-chrootless, with DPKG_ROOT set, which they honour by doing nothing), and
# the installed binaries run on the host's libraries.
set -euo pipefail
cpack=$1 build=$2 source=$3 version=$4

for tool in "$cpack" dpkg dpkg-deb dpkg-query; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: $tool is missing (scripts/deps.sh installs it)"
    exit 77
  fi
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

arch=$(dpkg --print-architecture)
"$cpack" -G DEB -B "$work/out" --config "$build/CPackConfig.cmake" >"$work/cpack.out" 2>&1 ||
  fail "cpack: $(cat "$work/cpack.out")"
deb=$work/out/anteroom_${version}_${arch}.deb
[[ -f $deb ]] || fail "no $(basename "$deb"); cpack made: $(ls "$work/out")"

# Depends: from dpkg-shlibdeps (or the fallback list); each a package installed here.
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for lib in libc6 libstdc++6 libssl3 libhiredis0.14 libboost-json1.81.0; do
  grep -q "\b$lib\b" <<<"$depends" || fail "Depends lacks $lib"
done
root=$work/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/triggers"
touch "$root/var/lib/dpkg/available"
for pkg in $(tr ',' '\n' <<<"$depends" | sed 's/(.*)//; s/|.*//; s/[[:space:]]//g'); do
  dpkg-query -s "$pkg" >>"$root/var/lib/dpkg/status" 2>/dev/null ||
    fail "Depends names $pkg, which is not installed here (not a Debian 12 package?)"
  echo >>"$root/var/lib/dpkg/status"
done

force=(--force-script-chrootless)
[[ $(id -u) -eq 0 ]] || force+=(--force-not-root)
dpkg --root="$root" "${force[@]}" -i "$deb" >"$work/dpkg.out" 2>&1 ||
  fail "dpkg -i: $(cat "$work/dpkg.out")"
[[ $(dpkg --root="$root" -s anteroom | sed -n 's/^Status: //p') == "install ok installed" ]] ||
  fail "anteroom is not 'install ok installed' in the root"

# The files a Debian package of anteroom holds.
expected=(/usr/bin/anteroom /usr/bin/anteroom-loadgen /usr/lib/systemd/system/anteroom.service
  /usr/share/doc/anteroom/README.md /usr/share/doc/anteroom/operating.md
  /usr/share/doc/anteroom/log-format.md /usr/share/doc/anteroom/examples/nginx/anteroom.conf
  /usr/share/doc/anteroom/examples/prometheus/alerts.yml
  /usr/share/doc/anteroom/examples/grafana/anteroom.json /etc/anteroom/anteroom.conf
  /usr/share/doc/anteroom/examples/anteroom.conf /usr/share/doc/anteroom/openapi.yaml
  /etc/logrotate.d/anteroom)
dpkg-deb --ctrl-tarfile "$deb" >"$work/control.tar"
tar -xOf "$work/control.tar" ./conffiles >"$work/conffiles" || fail "the package has no conffiles"
for conffile in /etc/anteroom/anteroom.conf /etc/logrotate.d/anteroom; do
  grep -qx "$conffile" "$work/conffiles" || fail "$conffile is not a conffile"
done
cmp -s "$source/deploy/anteroom.conf" "$root/etc/anteroom/anteroom.conf" ||
  fail "/etc/anteroom/anteroom.conf is not deploy/anteroom.conf"
cmp -s "$source/deploy/logrotate/anteroom" "$root/etc/logrotate.d/anteroom" ||
  fail "/etc/logrotate.d/anteroom is not deploy/logrotate/anteroom"
dpkg --root="$root" -L anteroom >"$work/files"
for f in "${expected[@]}"; do
  grep -qx "$f" "$work/files" || fail "the package lacks $f"
  [[ -e $root$f ]] || fail "$f is listed but not in the root"
done
unit=$root/usr/lib/systemd/system/anteroom.service
grep -q '^ExecStart=/usr/bin/anteroom --config /etc/anteroom/anteroom.conf ' "$unit" ||
  fail "the unit does not start /usr/bin/anteroom with /etc/anteroom/anteroom.conf: $(grep ExecStart "$unit")"
[[ $(stat -c %a "$root/usr/bin/anteroom") == 755 ]] || fail "/usr/bin/anteroom is not mode 755"

# The installed binaries run (the host's libraries).
"$root/usr/bin/anteroom" --help >"$work/help" 2>&1 || fail "anteroom --help: $(cat "$work/help")"
grep -q -- '--data-dir' "$work/help" || fail "anteroom --help does not list its flags"
"$root/usr/bin/anteroom-loadgen" --help >"$work/help" 2>&1 ||
  fail "anteroom-loadgen --help: $(cat "$work/help")"

# Purged, nothing of it is left.
dpkg --root="$root" "${force[@]}" --purge anteroom >"$work/dpkg.out" 2>&1 ||
  fail "dpkg --purge: $(cat "$work/dpkg.out")"
left=$(cd "$root" && find . -path ./var/lib/dpkg -prune -o -type f -print)
[[ -z $left ]] || fail "left after purge: $left"
echo "PASS: $(basename "$deb") ($(stat -c %s "$deb") bytes, $(wc -l <"$work/files") paths) installs, runs and purges"
