#!/usr/bin/env bash
# scripts/verify-draw.py against a real server's draw: with the seed's commitment (seen
# before the start) and the set's (seen at the start) it says "draw verified" and the
# visitor's place; it refuses to call a draw verified without --commitment, and catches a
# ref added to the order, another seed, and a set other than the one committed to.
# Loopback only; the start is 3 s after the event is set (a bounded wait for it).
# usage: tests/scripts/verify_draw.sh PATH/TO/anteroom
set -euo pipefail
BIN=$1
HERE=$(cd "$(dirname "$0")" && pwd)
CHECK="$HERE/../../scripts/verify-draw.py"
source "$HERE/../cluster/lib.sh"
KEY=verify-draw-admin-key-0123
P=$(free_port)
"$BIN" --listen "127.0.0.1:$P" --no-persistence --admin-key "$KEY" \
  --token-secret verify-draw-token-secret-0123456789 >"$work/anteroom.log" 2>&1 &
pids+=($!)
wait_port "$P"
base="http://127.0.0.1:$P"
curl -sf -X PUT -H "Authorization: Bearer $KEY" "$base/v1/rooms/r" -d '{"capacity":1}' >/dev/null
times=$(python3 -c 'import datetime as d; n=d.datetime.now(d.timezone.utc)
print((n-d.timedelta(seconds=1)).isoformat(), (n+d.timedelta(seconds=3)).isoformat())')
read -r pre start <<<"$times"
commitment=$(curl -sf -X PUT -H "Authorization: Bearer $KEY" "$base/v1/rooms/r/event" \
  -d "{\"prequeue_at\":\"$pre\",\"start_at\":\"$start\",\"shuffle\":true}" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["seed_sha256"])')
# Five joins; those answered before the start (position null) are the pre-queue, drawn.
mapfile -t refs < <(python3 - "$P" <<'PY'
import http.client, json, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=5)
for _ in range(5):
    c.request("POST", "/v1/rooms/r/tickets", body="{}")
    t = json.loads(c.getresponse().read())
    if t["position"] is None:
        print(t["ref"])
PY
)
((${#refs[@]} > 0)) || fail "no join came before the start"
set_commitment=""
for _ in $(seq 1 100); do  # the start is 3 s away: look until the event shows its set
  set_commitment=$(curl -sf "$base/v1/rooms/r/event" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("refs_sha256",""))')
  [[ -n $set_commitment ]] && break
  sleep 0.1
done
[[ -n $set_commitment ]] || fail "the event never showed refs_sha256"
curl -sf "$base/v1/rooms/r/event/draw?commitment=$commitment" >"$work/draw.json" || fail "no draw"

out=$(python3 "$CHECK" "$work/draw.json" --commitment "$commitment" --refs-commitment "$set_commitment" --ref "${refs[0]}") ||
  fail "a true draw was not verified: $out"
grep -q "draw verified" <<<"$out" && grep -q "your place in the draw: [0-9]* of ${#refs[@]}$" <<<"$out" ||
  fail "unexpected: $out"
pass "a true draw verifies against both commitments, with the visitor's place"

expect_refused() {  # what file [args]: the checker must say NOT verified
  local what=$1 file=$2; shift 2
  if out=$(python3 "$CHECK" "$file" "$@"); then fail "$what: verified anyway: $out"; fi
  grep -q "draw NOT verified" <<<"$out" || fail "$what: $out"
}
expect_refused "without --commitment" "$work/draw.json" --refs-commitment "$set_commitment"
python3 - "$work/draw.json" "$work/added.json" <<'PY'
import hashlib, hmac, json, sys
d = json.load(open(sys.argv[1]))
seed = bytes.fromhex(d["seed"])
d["order"] = sorted(d["order"] + ["0123456789abcdef"],
                    key=lambda r: hmac.new(seed, r.encode(), hashlib.sha256).hexdigest())
d["refs_sha256"] = hashlib.sha256("".join(r + "\n" for r in sorted(d["order"])).encode()).hexdigest()
json.dump(d, open(sys.argv[2], "w"))
PY
expect_refused "a ref added after the start" "$work/added.json" --commitment "$commitment" \
  --refs-commitment "$set_commitment"
expect_refused "another seed" "$work/draw.json" --commitment "$(printf '0%.0s' {1..64})" \
  --refs-commitment "$set_commitment"
# Without the set's commitment the order may be right, but the draw is not verified: the
# added ref above passes every other check.
if out=$(python3 "$CHECK" "$work/added.json" --commitment "$commitment"); then
  fail "without --refs-commitment: verified anyway: $out"
fi
grep -q "order verified, set NOT verified" <<<"$out" || fail "without --refs-commitment: $out"
pass "refused: no commitment, a ref added after the start (order and hash redone), another seed, no set commitment"
