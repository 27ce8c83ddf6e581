#!/usr/bin/env bash
# The Python connector (connectors/python) against a real anteroom on loopback: HS256, ES256
# with a key rotation, and the verify refresh, through WSGI and ASGI (python_test.py). Uses
# Debian's /usr/bin/python3 with python3-cryptography (apt); no pip, no network.
# usage: tests/connectors/run_python.sh PATH/TO/anteroom
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh" "$1"
python=/usr/bin/python3
"$python" -c 'import cryptography' 2>/dev/null ||
  { echo "FAIL: $python has no cryptography module (apt install python3-cryptography)" >&2; exit 1; }
PYTHONDONTWRITEBYTECODE=1 timeout 120 "$python" "$here/python_test.py" "$binary" "$work"
