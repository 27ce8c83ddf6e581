#!/usr/bin/env python3
"""Checks an anteroom draw (docs/fairness.md): the seed matches the commitment shown before
the start, and the order is the refs sorted by HMAC-SHA256(seed, ref).

  scripts/verify-draw.py URL-or-FILE [--commitment HEX] [--ref MY_REF]

URL-or-FILE is GET /v1/rooms/{room}/event/draw (or a saved copy). Exit 0 when the draw checks.
"""
import argparse
import hashlib
import hmac
import json
import sys
import urllib.request


def main():
    p = argparse.ArgumentParser()
    p.add_argument("source")
    p.add_argument("--commitment", help="seed_sha256 as GET .../event showed it before the start")
    p.add_argument("--ref", help="your ticket's ref: prints your place in the draw")
    a = p.parse_args()
    if a.source.startswith("http"):
        draw = json.load(urllib.request.urlopen(a.source))
    else:
        draw = json.load(open(a.source))
    seed = bytes.fromhex(draw["seed"])
    ok = True
    if hashlib.sha256(seed).hexdigest() != draw["seed_sha256"]:
        print("FAIL: sha256(seed) is not seed_sha256")
        ok = False
    if a.commitment and a.commitment != draw["seed_sha256"]:
        print("FAIL: the seed is not the one committed to before the start")
        ok = False
    mac = lambda ref: hmac.new(seed, ref.encode("ascii"), hashlib.sha256).hexdigest()
    if sorted(draw["order"], key=mac) != draw["order"]:
        print("FAIL: the order is not by HMAC-SHA256(seed, ref)")
        ok = False
    if a.ref:
        if a.ref in draw["order"]:
            print(f"your place in the draw: {draw['order'].index(a.ref) + 1} of {len(draw['order'])}")
        else:
            print("your ref is not in this draw")
            ok = False
    print("draw verified" if ok else "draw NOT verified")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
