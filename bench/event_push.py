#!/usr/bin/env python3
"""The start of a drop, end to end (results/events.md): a pre-queue of --prequeue tickets,
--streams of them watching over SSE; at start_at the server draws and every stream must be
told its new position. Prints JSON: how long after start_at each stream got a position.

  bench/event_push.py --port PORT --admin-key KEY [--prequeue 1000000] [--streams 10000]

The bulk of the pre-queue joins through wrk (bench/event_join.lua), the watchers through
asyncio here. Everything on 127.0.0.1; the script stops by itself.
"""
import argparse
import asyncio
import datetime
import json
import subprocess
import sys
import time
import urllib.request


def call(port, method, path, key=None, body=None):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method,
                                 data=None if body is None else json.dumps(body).encode())
    if key:
        req.add_header("Authorization", f"Bearer {key}")
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read() or b"{}")


def rfc3339(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


async def watcher(port, room, start_at, results, ready):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"POST /v1/rooms/{room}/tickets HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n".encode())
    head = await reader.readuntil(b"\r\n\r\n")
    length = int([l for l in head.split(b"\r\n") if l.lower().startswith(b"content-length")][0].split(b":")[1])
    ticket = json.loads(await reader.readexactly(length))
    assert ticket["position"] is None and "opens_at" in ticket, ticket
    tid = ticket["ticket"]
    writer.write(f"GET /v1/rooms/{room}/tickets/{tid}/events HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    await reader.readuntil(b"\r\n\r\n")
    ready.append(1)
    try:
        while True:
            line = await reader.readline()
            if not line:
                return
            if line.startswith(b"data:"):
                s = json.loads(line[5:])
                if s.get("position") is not None or s.get("status") != "WAITING":
                    results.append(time.time() - start_at)
                    return
    finally:
        writer.close()


async def watch_all(args, start_at, results, ready):
    tasks = [asyncio.create_task(watcher(args.port, args.room, start_at, results, ready))
             for _ in range(args.streams)]
    done, pending = await asyncio.wait(tasks, timeout=start_at - time.time() + args.wait_s)
    for t in pending:
        t.cancel()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--admin-key", required=True)
    p.add_argument("--room", default="drop")
    p.add_argument("--prequeue", type=int, default=1_000_000)
    p.add_argument("--streams", type=int, default=10_000)
    p.add_argument("--lead-s", type=float, default=60, help="seconds from now to start_at")
    p.add_argument("--wait-s", type=float, default=20, help="seconds after start_at to wait")
    a = p.parse_args()
    call(a.port, "PUT", f"/v1/rooms/{a.room}", a.admin_key,
         {"capacity": 0, "admission": "manual", "heartbeat_timeout_seconds": 86400, "max_waiting": 0})
    start_at = time.time() + a.lead_s
    call(a.port, "PUT", f"/v1/rooms/{a.room}/event", a.admin_key,
         {"prequeue_at": rfc3339(time.time() - 1), "start_at": rfc3339(start_at), "shuffle": True})
    # The bulk: wrk posts joins until the pre-queue holds enough (checked, then stopped).
    lua = __file__.replace("event_push.py", "event_join.lua")
    wrk = subprocess.Popen(["wrk", "-t2", "-c64", f"-d{int(a.lead_s)}s", "-s", lua,
                            f"http://127.0.0.1:{a.port}/v1/rooms/{a.room}/tickets"],
                           stdout=subprocess.DEVNULL)
    bulk = a.prequeue - a.streams
    while call(a.port, "GET", f"/v1/rooms/{a.room}", a.admin_key)["waiting"] < bulk:
        if time.time() > start_at - 15 or wrk.poll() is not None:
            break
        time.sleep(0.2)
    wrk.terminate()
    wrk.wait()
    results, ready = [], []
    asyncio.run(watch_all(a, start_at, results, ready))
    room = call(a.port, "GET", f"/v1/rooms/{a.room}", a.admin_key)
    draw = call(a.port, "GET", f"/v1/rooms/{a.room}/event/draw")
    results.sort()
    pick = lambda q: round(results[min(len(results) - 1, int(q * len(results)))], 3) if results else None
    out = {"prequeue": room["waiting"], "drawn": len(draw["order"]), "streams": a.streams,
           "streams_open_at_start": len(ready), "told": len(results),
           "told_after_s": {"p50": pick(0.5), "p99": pick(0.99), "max": round(results[-1], 3) if results else None}}
    print(json.dumps(out))
    return 0 if len(results) == a.streams and results[-1] <= 2.0 else 1


if __name__ == "__main__":
    sys.exit(main())
