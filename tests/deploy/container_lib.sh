# Shared by the container tests (source it after tests/cluster/lib.sh): podman with runc and
# a containers.conf of the test's own ($CONTAINERS_CONF), and `debian_base`, which makes the
# Debian 12 image the Containerfiles start from when podman has none (no registry is
# reachable here): as Debian's slim images are made, minbase without documentation, manuals
# or locales, from Debian's packages by mmdebstrap, imported under the tag they name.
export CONTAINERS_CONF=$work/containers.conf
cat >"$CONTAINERS_CONF" <<'CONF'
[containers]
default_ulimits = []
[engine]
runtime = "runc"
CONF
DEBIAN_BASE=docker.io/library/debian:bookworm-slim

debian_base() {
  podman image exists "$DEBIAN_BASE" && return 0
  mmdebstrap --variant=minbase --include=ca-certificates \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
    bookworm "$work/base.tar" >"$work/mmdebstrap.log" 2>&1 ||
    fail "mmdebstrap: $(tail -3 "$work/mmdebstrap.log")"
  podman import "$work/base.tar" "$DEBIAN_BASE" >/dev/null
  rm -f "$work/base.tar"
}
