#!/usr/bin/env bash
# The API reference against the server: validates docs/openapi.yaml as OpenAPI 3.1, runs the
# server tests (tests/server/, one process) with ANTEROOM_ANSWER_LOG set so that every answer
# they receive is recorded, then checks each recorded answer against the document
# (check.mjs). Fails if the document is invalid, if a server test fails, if any answer's
# route, status, Content-Type, headers or JSON body is not what the document says, or if the
# check lets a document changed on purpose pass (drift.mjs). Skips (exit 77) with a message
# where node or the npm packages are missing.
# usage: tests/openapi/run.sh SERVER_TESTS_BINARY OUT_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
binary=$1 out=$2
skip() {
  echo "SKIPPED: $1. Install it with scripts/deps.sh (Debian packages) and" \
    "npm ci --prefix tests/openapi, then run this test again."
  exit 77
}
command -v node >/dev/null 2>&1 || skip "node is not installed"
[[ -d "$here/node_modules/ajv" ]] || skip "the npm packages of tests/openapi are not installed"

node "$here/validate.mjs"

mkdir -p "$out"
log="$out/answers.jsonl"
rm -f "$log"
echo "running $binary with ANTEROOM_ANSWER_LOG=$log"
ANTEROOM_ANSWER_LOG="$log" "$binary" --gtest_brief=1 >"$out/server_tests.log" 2>&1 ||
  { tail -n 50 "$out/server_tests.log"; echo "FAIL: the server tests failed (log: $out/server_tests.log)"; exit 1; }
node "$here/check.mjs" "$log"
# And the check has teeth: the same answers against a few documents changed on purpose must fail.
node "$here/drift.mjs" "$log"
