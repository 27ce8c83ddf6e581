#!/usr/bin/env bash
# Runs the jose test (node), or skips it (exit 77, which CTest reports as skipped) with a
# message when node or the npm package jose is missing.
# usage: tests/jose/run.sh PATH/TO/anteroom
set -euo pipefail
here="$(dirname "$0")"
skip() {
  echo "SKIPPED: $1. Install it with scripts/deps.sh (Debian packages) and" \
    "npm ci --prefix tests/jose, then run this test again."
  exit 77
}
command -v node >/dev/null 2>&1 || skip "node is not installed"
[[ -d "$here/node_modules/jose" ]] || skip "the npm package jose is not installed"
exec node "$here/jwks.mjs" "$@"
