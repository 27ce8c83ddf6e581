#!/usr/bin/env python3
# How long a join answered by one node takes to reach another node's copy: join through
# node A, then read node B's room totals in a tight loop until they count the join.
# usage: bench/cluster_propagation.py PORT_A PORT_B ADMIN_KEY ROOM [SAMPLES]
import http.client, json, sys, time

pa, pb, admin, room = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
samples = int(sys.argv[5]) if len(sys.argv) > 5 else 1000
a = http.client.HTTPConnection("127.0.0.1", pa, timeout=5)
b = http.client.HTTPConnection("127.0.0.1", pb, timeout=5)
auth = {"Authorization": "Bearer " + admin}

def joined_on_b():
    b.request("GET", f"/v1/rooms/{room}", headers=auth)
    return json.loads(b.getresponse().read())["totals"]["joined"]

delays = []
for _ in range(samples):
    a.request("POST", f"/v1/rooms/{room}/tickets", body="{}")
    r = a.getresponse()
    seq = json.loads(r.read())["seq"]
    t0 = time.perf_counter()
    while joined_on_b() < seq + 1:
        if time.perf_counter() - t0 > 5:
            sys.exit(f"join {seq} did not reach node B within 5 s")
    delays.append((time.perf_counter() - t0) * 1000)
    time.sleep(0.002)  # joins spread out, not one burst
delays.sort()
pick = lambda q: delays[min(len(delays) - 1, int(q * len(delays)))]
print(f"propagation ms p50 {pick(0.5):.2f} p99 {pick(0.99):.2f} max {delays[-1]:.2f} ({samples} joins)")
