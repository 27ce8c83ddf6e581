#!/usr/bin/env bash
# deploy/prometheus/alerts.yml: `promtool check rules`, then `promtool test rules` with
# tests/deploy/alerts_test.yml (the queue-growing and storage alerts on made-up series).
# Exits 77 (ctest: skipped), saying why, when promtool is missing. Usage: alerts.sh SOURCE_DIR.
set -euo pipefail
source=$1
if ! command -v promtool >/dev/null; then
  echo "SKIP: promtool is missing (Debian's prometheus package; scripts/deps.sh installs it)"
  exit 77
fi
promtool check rules "$source/deploy/prometheus/alerts.yml"
cd "$source/tests/deploy" && promtool test rules alerts_test.yml
