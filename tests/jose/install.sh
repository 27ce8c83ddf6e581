#!/usr/bin/env bash
# CTest fixture for the jose test: installs its npm package (jose) into tests/jose/node_modules
# if it is not there yet, as tests/browser/install.sh does for playwright-core. Without npm it
# does nothing, and the test then skips, saying how to enable it.
set -euo pipefail
cd "$(dirname "$0")"
if [[ -d node_modules/jose ]]; then exit 0; fi
if ! command -v npm >/dev/null 2>&1; then
  echo "npm is not installed: the jose test will be skipped (scripts/deps.sh installs it)"
  exit 0
fi
npm ci --no-audit --no-fund --loglevel=error
