# Sourced by the nginx tests: a visitor's own X-Forwarded-For must not choose its address.
# With ip_joins_per_minute 2 on the room, joins through nginx that each forge another
# address are refused 429 by the third at the latest (the joins already made from the real
# peer count too), and a further forged address is refused as well. Without the example's
# X-Forwarded-For line, anteroom would believe the forged header (nginx is a trusted proxy)
# and let every one in. The visitor connects from 127.0.0.2: nginx itself (127.0.0.1) is
# the trusted proxy, and a visitor on a trusted address would be passed over as one.
# usage: forged_forwarded_for_is_ignored NGINX_PORT ANTEROOM_PORT ADMIN_KEY ROOM
forged_forwarded_for_is_ignored() {
  local nginx=$1 anteroom=$2 key=$3 room=$4 code i refused=0
  curl -sf -X PUT -H "Authorization: Bearer $key" "http://127.0.0.1:$anteroom/v1/rooms/$room" \
    -d '{"ip_joins_per_minute":2}' >/dev/null || fail "cannot set ip_joins_per_minute"
  for i in 1 2 3 4 5 6; do
    code=$(curl -s --interface 127.0.0.2 -o /dev/null -w '%{http_code}' -X POST -H "X-Forwarded-For: 203.0.113.$i" \
      "http://127.0.0.1:$nginx/v1/rooms/$room/tickets" -d '{}')
    if [[ $code == 429 ]]; then
      refused=$i
      break
    fi
    [[ $code == 200 || $code == 201 ]] || fail "join $i with a forged X-Forwarded-For: HTTP $code"
  done
  ((refused != 0 && refused <= 3)) ||
    fail "a forged X-Forwarded-For escaped ip_joins_per_minute (6 joins, none refused by the 3rd)"
  code=$(curl -s --interface 127.0.0.2 -o /dev/null -w '%{http_code}' -X POST -H "X-Forwarded-For: 198.51.100.7" \
    "http://127.0.0.1:$nginx/v1/rooms/$room/tickets" -d '{}')
  [[ $code == 429 ]] || fail "another forged address got HTTP $code, not 429"
  curl -sf -X PUT -H "Authorization: Bearer $key" "http://127.0.0.1:$anteroom/v1/rooms/$room" \
    -d '{"ip_joins_per_minute":0}' >/dev/null || fail "cannot lift ip_joins_per_minute"
  pass "a forged X-Forwarded-For does not escape ip_joins_per_minute (refused at join $refused)"
}
