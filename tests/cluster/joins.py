# Joins for tests/cluster/redis_cluster.sh: 4 clients, alternating between two nodes, join the
# given rooms in turn for SECONDS and write each acknowledged join as "CLIENT ROOM TICKET SEQ"
# to OUT. A refused or failed join is retried after 50 ms (on a new connection if it failed).
# usage: python3 joins.py PORT1 PORT2 OUT SECONDS ROOM[,ROOM...]
import http.client, json, sys, threading, time

ports, out = [int(sys.argv[1]), int(sys.argv[2])], sys.argv[3]
end = time.time() + float(sys.argv[4])
rooms = sys.argv[5].split(",")
acked, lock = [], threading.Lock()


def client(k):
    port = ports[k % 2]
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    i = 0
    while time.time() < end:
        room = rooms[(k + i) % len(rooms)]
        i += 1
        try:
            c.request("POST", f"/v1/rooms/{room}/tickets", body="{}")
            r = c.getresponse()
            body = r.read()
            if r.status == 201:
                t = json.loads(body)
                with lock:
                    acked.append((k, room, t["ticket"], t["seq"]))
            else:
                time.sleep(0.05)
        except Exception:
            time.sleep(0.05)
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)


threads = [threading.Thread(target=client, args=(k,)) for k in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
with open(out, "w") as f:
    for k, room, tid, seq in acked:
        f.write(f"{k} {room} {tid} {seq}\n")
