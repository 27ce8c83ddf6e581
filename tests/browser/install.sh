#!/usr/bin/env bash
# CTest fixture for the browser tests: installs their npm packages (playwright-core, never a
# browser download) into tests/browser/node_modules if they are not there yet. Without npm
# it does nothing, and the browser tests then skip, saying how to enable them.
set -euo pipefail
cd "$(dirname "$0")"
if [[ -d node_modules/playwright-core ]]; then exit 0; fi
if ! command -v npm >/dev/null 2>&1; then
  echo "npm is not installed: the browser tests will be skipped (scripts/deps.sh installs it)"
  exit 0
fi
npm ci --no-audit --no-fund --loglevel=error
