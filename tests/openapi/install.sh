#!/usr/bin/env bash
# CTest fixture for the OpenAPI test: installs its npm packages (the OpenAPI 3.1 validator, ajv,
# yaml) into tests/openapi/node_modules if they are not there yet, as tests/browser/install.sh
# does for playwright-core. Without npm it does nothing, and the test then skips, saying how to
# enable it.
set -euo pipefail
cd "$(dirname "$0")"
if [[ -d node_modules/ajv && -d node_modules/@seriousme/openapi-schema-validator ]]; then exit 0; fi
if ! command -v npm >/dev/null 2>&1; then
  echo "npm is not installed: the OpenAPI test will be skipped (scripts/deps.sh installs it)"
  exit 0
fi
npm ci --no-audit --no-fund --loglevel=error
