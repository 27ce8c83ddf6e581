#!/usr/bin/env bash
# The route table against docs/openapi.yaml (routes.mjs). Skips (exit 77) where node or the
# npm packages are missing.
# usage: tests/openapi/routes.sh PRINT_ROUTE_TABLE_BINARY OUT_JSON
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
command -v node >/dev/null 2>&1 || { echo "SKIPPED: node is not installed"; exit 77; }
[[ -d "$here/node_modules/yaml" ]] || { echo "SKIPPED: npm ci --prefix tests/openapi first"; exit 77; }
"$1" >"$2"
node "$here/routes.mjs" "$2"
