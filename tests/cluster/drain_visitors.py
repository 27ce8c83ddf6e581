"""The visitors of tests/cluster/drain.sh: holders keep their Server-Sent Events streams open
through nginx and, as a browser's EventSource does, reopen a stream that ends after its
`retry:`; a joiner joins through nginx all along. Once every holder has its stream, the file
TOLD is written (the script then sends node a SIGTERM); once the script writes how long node
a took into EXITED, the joins stop and the checks run.

usage: drain_visitors.py NGINX_PORT A_PORT B_PORT ADMIN_KEY HOLDERS TOLD EXITED
"""
import http.client
import json
import os
import re
import sys
import threading
import time

nginx, port_a, port_b, key = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
holders, told_file, exited_file = int(sys.argv[5]), sys.argv[6], sys.argv[7]
stop = threading.Event()
failed = []


def check(cond, what):
    print(("PASS: " if cond else "FAIL: ") + what, flush=True)
    if not cond:
        failed.append(what)


def call(port, method, path, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request(method, path, body="{}" if method == "POST" else None, headers=headers or {})
    r = c.getresponse()
    return r.status, r.read()


def join():
    status, body = call(nginx, "POST", "/v1/rooms/demo/tickets")
    return json.loads(body)["ticket"] if status == 201 else None


class Holder(threading.Thread):
    """One visitor's stream: every connection's positions, and when each ended."""

    def __init__(self, ticket):
        super().__init__(daemon=True)
        self.ticket = ticket
        self.connections = []  # [{"positions": [...], "ended": time or None, "opened": time}]
        self.ready = threading.Event()

    def run(self):
        while not stop.is_set():
            conn = {"positions": [], "ended": None, "opened": time.monotonic()}
            self.connections.append(conn)
            retry_ms = 1000
            try:
                c = http.client.HTTPConnection("127.0.0.1", nginx, timeout=30)
                c.request("GET", "/v1/rooms/demo/tickets/%s/events" % self.ticket)
                r = c.getresponse()
                while not stop.is_set():
                    line = r.readline()
                    if not line:
                        break
                    text = line.decode().strip()
                    if text.startswith("retry:"):
                        retry_ms = int(text[6:])
                    elif text.startswith("data:") and '"position"' in text:
                        conn["positions"].append(json.loads(text[5:])["position"])
                        self.ready.set()
            except OSError:
                pass
            conn["ended"] = time.monotonic()
            time.sleep(retry_ms / 1000.0)  # EventSource waits `retry` before it reconnects


def open_sse_on(port):
    _, body = call(port, "GET", "/metrics", {"Authorization": "Bearer " + key})
    m = re.search(rb'anteroom_open_connections\{kind="sse"\} (\d+)', body)
    return int(m.group(1)) if m else -1


tickets = [join() for _ in range(holders)]
check(all(tickets), "%d visitors joined through nginx" % holders)
hs = [Holder(t) for t in tickets]
for h in hs:
    h.start()
for h in hs:
    h.ready.wait(10)
check(all(h.ready.is_set() for h in hs), "every holder has its stream through nginx")
on_a = open_sse_on(port_a)
check(on_a > 0, "node a holds %d of the %d streams" % (on_a, holders))

acknowledged, refused = [], []


def joiner():
    while not stop.is_set():
        try:
            status, body = call(nginx, "POST", "/v1/rooms/demo/tickets")
        except OSError as e:
            refused.append(str(e))
            continue
        if status == 201:
            acknowledged.append(json.loads(body)["ticket"])
        else:
            refused.append(status)
        time.sleep(0.005)


j = threading.Thread(target=joiner, daemon=True)
j.start()
time.sleep(0.3)  # joins before the signal too
open(told_file, "w").close()
deadline = time.monotonic() + 30
while not os.path.exists(exited_file) and time.monotonic() < deadline:
    time.sleep(0.05)
check(os.path.exists(exited_file), "node a exited")
time.sleep(0.5)  # joins after node a went too
# The streams that ended reopen after the retry and hear their place: wait until as many
# have as node a held (10 s at most), and a little more for any beyond.
def reopened():
    return sum(1 for h in hs if len(h.connections) > 1 and h.connections[-1]["positions"])


deadline = time.monotonic() + 10
while reopened() < on_a and time.monotonic() < deadline:
    time.sleep(0.05)
time.sleep(0.3)
stop.set()
j.join(15)

moved = [h for h in hs if len(h.connections) > 1]
check(len(moved) == on_a, "the %d streams node a held were told to reconnect (%d were)" % (on_a, len(moved)))
same = [h for h in moved if h.connections[1]["positions"][:1] == h.connections[0]["positions"][-1:]]
check(len(same) == len(moved), "each reconnected with the same place (%d of %d)" % (len(same), len(moved)))
gaps = [h.connections[1]["opened"] - h.connections[0]["ended"] for h in moved]
ends = [h.connections[0]["ended"] for h in moved]
print("figures: streams moved %d; their ends within %.0f ms of each other; reconnected after "
      "%.0f-%.0f ms (the retry is 1000 ms)" % (len(moved), 1000 * (max(ends) - min(ends)) if ends else 0,
                                              1000 * min(gaps) if gaps else 0, 1000 * max(gaps) if gaps else 0))

everyone = tickets + acknowledged
positions = []
lost = []
for t in everyone:
    status, body = call(port_b, "GET", "/v1/rooms/demo/tickets/" + t)
    if status != 200:
        lost.append(t)
        continue
    positions.append(json.loads(body)["position"])
check(not lost, "node b knows every acknowledged ticket (%d joined during the run, %d lost)" %
      (len(acknowledged), len(lost)))
check(len(set(positions)) == len(positions), "every ticket has a place of its own")
print("figures: joins acknowledged %d, not acknowledged %d (%s)" %
      (len(acknowledged), len(refused), ", ".join(str(r) for r in refused[:5])))
sys.exit(1 if failed else 0)
