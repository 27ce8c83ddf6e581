#!/usr/bin/env bash
# Runs one browser test script (node), or skips it (exit 77, which CTest reports as skipped)
# with a message when what it needs is missing: node, the npm packages, or Debian's chromium.
# usage: tests/browser/run.sh SCRIPT.mjs ARGS...
set -euo pipefail
here="$(dirname "$0")"
skip() {
  echo "SKIPPED: $1. Install it with scripts/deps.sh (Debian packages) and" \
    "npm ci --prefix tests/browser, then run this test again."
  exit 77
}
command -v node >/dev/null 2>&1 || skip "node is not installed"
[[ -x /usr/bin/chromium ]] || skip "Debian's chromium (/usr/bin/chromium) is not installed"
[[ -d "$here/node_modules/playwright-core" ]] || skip "the npm package playwright-core is not installed"
exec node "$@"
