#!/usr/bin/env bash
# The Node connector (connectors/node) against a real anteroom on loopback: HS256, ES256 with
# a key rotation, and the verify refresh (node_test.mjs). Needs node 20 and openssl; no npm.
# usage: tests/connectors/run_node.sh PATH/TO/anteroom
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh" "$1"
command -v node >/dev/null || { echo "FAIL: node is not installed" >&2; exit 1; }
timeout 120 node "$here/node_test.mjs" "$binary" "$work"
