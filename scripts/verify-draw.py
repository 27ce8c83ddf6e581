#!/usr/bin/env python3
"""Checks an anteroom draw (docs/fairness.md) against what was published before it:

  - the seed is the one committed to when the event was set (--commitment: the seed_sha256
    GET .../event showed before the start);
  - the set of refs drawn is the one committed to at the start (--refs-commitment: the
    refs_sha256 GET .../event showed from the start; without it the set is not verified, and
    neither is the draw: a server could have added or dropped refs and hashed the result);
  - the order is the refs sorted by HMAC-SHA256(seed, ref);
  - with --ref, your own ref is in it (your place is printed).

  scripts/verify-draw.py URL-or-FILE --commitment HEX [--refs-commitment HEX] [--ref MY_REF]

URL-or-FILE is GET /v1/rooms/{room}/event/draw (or a saved copy). Exit 0 when every check
holds. Without --commitment, or without --refs-commitment, the draw is never called
verified (a seed or a set matching its own hash proves nothing: either can be picked after
the fact); without the latter alone it says "order verified, set NOT verified" and exits 2.
"""
import argparse
import hashlib
import hmac
import json
import sys
import urllib.request


def refs_sha256(order):
    text = "".join(ref + "\n" for ref in sorted(order))
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("source")
    p.add_argument("--commitment", help="seed_sha256 as GET .../event showed it before the start")
    p.add_argument("--refs-commitment",
                   help="refs_sha256 as GET .../event showed it at the start")
    p.add_argument("--ref", help="your ticket's ref: prints your place in the draw")
    a = p.parse_args()
    if a.source.startswith("http"):
        draw = json.load(urllib.request.urlopen(a.source))
    else:
        draw = json.load(open(a.source))
    seed = bytes.fromhex(draw["seed"])
    order = draw["order"]
    ok = True

    def fail(why):
        nonlocal ok
        print("FAIL: " + why)
        ok = False

    if hashlib.sha256(seed).hexdigest() != draw["seed_sha256"]:
        fail("sha256(seed) is not the draw's seed_sha256")
    if not a.commitment:
        fail("no --commitment: give the seed_sha256 you saw before the start "
             "(the seed's hash checked against itself proves nothing)")
    elif a.commitment.lower() != hashlib.sha256(seed).hexdigest():
        fail("the seed is not the one committed to before the start")
    if len(set(order)) != len(order):
        fail("a ref appears twice in the order")
    actual_refs = refs_sha256(order)
    if draw.get("refs_sha256") != actual_refs:
        fail("the draw's refs_sha256 is not the SHA-256 of its refs")
    if a.refs_commitment:
        if a.refs_commitment.lower() != actual_refs:
            fail("the refs drawn are not the set committed to at the start")
    mac = lambda ref: hmac.new(seed, ref.encode("ascii"), hashlib.sha256).hexdigest()
    if sorted(order, key=mac) != order:
        fail("the order is not by HMAC-SHA256(seed, ref)")
    if a.ref:
        if a.ref in order:
            print(f"your place in the draw: {order.index(a.ref) + 1} of {len(order)}")
        else:
            fail("your ref is not in this draw")
    if not ok:
        print("draw NOT verified")
        return 1
    if not a.refs_commitment:
        print("order verified, set NOT verified: give --refs-commitment, the refs_sha256 you "
              "saw at the start (the draw's own refs_sha256 proves nothing)")
        return 2
    print("draw verified")
    return 0


if __name__ == "__main__":
    sys.exit(main())
