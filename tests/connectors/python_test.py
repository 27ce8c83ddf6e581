"""The Python connector (connectors/python) against a real anteroom: HS256, then ES256 with a
key rotation, tokens from real joins, forged tokens made here; WSGI and ASGI. Run by
run_python.sh with Debian's /usr/bin/python3 (python3-cryptography for ES256).
usage: python3 tests/connectors/python_test.py PATH/TO/anteroom WORK_DIR"""

import asyncio
import base64
import hashlib
import hmac
import json
import os
import re
import select
import subprocess
import sys
import threading
import time
import urllib.request
from collections import namedtuple
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote_to_bytes

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "connectors", "python", "src"))
from anteroom_connector import AnteroomASGI, AnteroomWSGI, ConfigurationError  # noqa: E402
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec, utils  # noqa: E402

BINARY, WORK = sys.argv[1], sys.argv[2]
ADMIN = "connector-admin-key-0123456789"
SECRET = "connector-token-secret-0123456789abcdef"
VERIFY = "connector-verify-key-0123456789"
clock = [time.time()]
checks = [0]


def now():
    return clock[0]


def ok(cond, what):
    if not cond:
        raise AssertionError(what)
    checks[0] += 1
    print("PASS: " + what, flush=True)


class Server:
    """anteroom on loopback; its pid goes to WORK/pids so run_python.sh can stop it."""

    def __init__(self, args, port=0):
        self.proc = subprocess.Popen(
            [BINARY, "--listen", "127.0.0.1:%d" % port, "--no-persistence", "--admin-key", ADMIN,
             "--token-secret", SECRET, "--verify-key", VERIFY] + args, stdout=subprocess.PIPE)
        with open(os.path.join(WORK, "pids"), "a") as f:
            f.write("%d\n" % self.proc.pid)
        if not select.select([self.proc.stdout], [], [], 10)[0]:
            raise RuntimeError("anteroom did not start within 10 s")
        m = re.match(r"anteroom listening on (http://127\.0\.0\.1:(\d+))$", self.proc.stdout.readline().decode().strip())
        if not m:
            raise RuntimeError("anteroom did not start: exit %s" % self.proc.poll())
        self.base, self.port = m.group(1), int(m.group(2))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(20)


def api(base, method, path, body=None, key=None):
    req = urllib.request.Request(base + path, method=method, data=None if body is None else json.dumps(body).encode(),
                                 headers={"Authorization": "Bearer " + key} if key else {})
    with urllib.request.urlopen(req, timeout=10) as res:
        text = res.read()
    return json.loads(text) if text else None


def b64(x):
    raw = x if isinstance(x, bytes) else json.dumps(x, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def parts(token):
    h, c, s = token.split(".")
    return [json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4))) for p in (h, c)] + [s]


def hs256(header, claims, secret):
    signing = b64(header) + "." + b64(claims)
    return signing + "." + b64(hmac.new(secret, signing.encode(), hashlib.sha256).digest())


def es256(header, claims, private_key):
    signing = b64(header) + "." + b64(claims)
    r, s = utils.decode_dss_signature(private_key.sign(signing.encode(), ec.ECDSA(hashes.SHA256())))
    return signing + "." + b64(r.to_bytes(32, "big") + s.to_bytes(32, "big"))


def random_key():
    return base64.urlsafe_b64encode(os.urandom(24)).rstrip(b"=").decode()


Admitted = namedtuple("Admitted", "ticket token key claims")


def admitted(base, room, bound=True, user=None, live=False):
    """A fresh admission; its ticket left at once unless live (the token stays valid to the
    connector, which never asks about the ticket)."""
    key = random_key() if bound else None
    body = {k: v for k, v in (("key", key), ("user", user)) if v}
    j = api(base, "POST", "/v1/rooms/%s/tickets" % room, body)
    if j["status"] != "ALLOWED" or "token" not in j:
        raise AssertionError("join not admitted: %r" % j)
    if not live:
        api(base, "DELETE", "/v1/rooms/%s/tickets/%s" % (room, j["ticket"]))
    return Admitted(j["ticket"], j["token"], key, parts(j["token"])[1])


def cookie_of(a, name="anteroom_shop"):
    return "%s=%s%s" % (name, a.token, "~" + a.key if a.key else "")


Res = namedtuple("Res", "status headers body anteroom")


def inner_wsgi(environ, start_response):
    start_response("200 OK", [("Content-Type", "application/json")])
    return [json.dumps(environ.get("anteroom")).encode()]


async def inner_asgi(scope, receive, send):
    body = json.dumps(scope.get("anteroom")).encode() if scope["type"] == "http" else b"passed"
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": body})


def client(kind, **options):
    """hit(cookie, accept, method, target) on a WSGI or ASGI connector; .core is its Core."""
    options.setdefault("now", now)
    mw = AnteroomWSGI(inner_wsgi, **options) if kind == "wsgi" else AnteroomASGI(inner_asgi, **options)

    def hit(cookie=None, accept="application/json", method="GET", target="/checkout", scheme="http"):
        path, _, query = target.partition("?")
        if kind == "wsgi":
            environ = {"REQUEST_METHOD": method, "SCRIPT_NAME": "", "QUERY_STRING": query,
                       "PATH_INFO": unquote_to_bytes(path).decode("latin-1"), "HTTP_ACCEPT": accept,
                       "wsgi.url_scheme": scheme, "SERVER_NAME": "shop.test", "SERVER_PORT": "80"}
            if cookie is not None:
                environ["HTTP_COOKIE"] = cookie
            got = {}

            def start_response(status, headers, exc_info=None):
                got["status"], got["headers"] = int(status.split()[0]), headers

            body = b"".join(mw(environ, start_response))
            return Res(got["status"], got["headers"], body, environ.get("anteroom"))
        headers = [(b"accept", accept.encode())] + ([(b"cookie", cookie.encode())] if cookie is not None else [])
        scope = {"type": "http", "method": method, "scheme": scheme, "path": unquote_to_bytes(path).decode(),
                 "raw_path": path.encode(), "query_string": query.encode(), "headers": headers}
        sent = []

        async def receive():
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message):
            sent.append(message)

        asyncio.run(mw(scope, receive, send))
        start, body = sent[0], b"".join(m.get("body", b"") for m in sent[1:])
        hs = [(k.decode(), v.decode()) for k, v in start["headers"]]
        return Res(start["status"], hs, body, json.loads(body) if start["status"] == 200 else None)

    hit.core = mw.core
    return hit


def header(res, name):
    return [v for k, v in res.headers if k.lower() == name.lower()]


def admits(hit, cookie):
    return hit(cookie).status == 200


def common(alg, base, opts, kind):
    """Everything that holds for either algorithm and either middleware."""
    t = "%s %s" % (alg, kind)
    for room in ("shop", "other"):
        api(base, "PUT", "/v1/rooms/" + room, {"capacity": 5}, ADMIN)
    hit = client(kind, **opts)
    a = admitted(base, "shop", user="alice")
    res = hit(cookie_of(a))
    ok(res.status == 200 and res.anteroom == {"ticket": a.ticket, "user": "alice", "room": "shop",
                                              "expires_at": a.claims["exp"]},
       t + ": admitted with TOKEN~KEY, anteroom = {ticket, user, room, expires_at}")
    ok(admits(hit, cookie_of(a, "__Host-anteroom_shop")), t + ": the __Host- cookie name admits too")
    res = hit(accept="text/html,application/xhtml+xml", target="/checkout/a%20b?item=1&x=y")
    ok(res.status == 302 and header(res, "Location") == ["/wait/shop?return=/checkout/a%2520b%3Fitem%3D1%26x%3Dy"],
       t + ": no cookie, a browser: 302 to /wait/shop?return=<path and query>")
    ok(hit(method="HEAD", accept="text/html").status == 302, t + ": no cookie, a browser's HEAD: 302")
    res = hit()
    ok(res.status == 429 and header(res, "Retry-After") == ["5"] and
       header(res, "Content-Type") == ["application/json"] and json.loads(res.body) == {
           "error": {"code": "in_line", "message": "this address is behind a waiting room: join its line"},
           "room": "shop", "status": None, "join": "/v1/rooms/shop/tickets"},
       t + ": no cookie, an API client: 429 in_line JSON with Retry-After: 5")
    ok(hit(method="POST", accept="text/html").status == 429, t + ": a POST is no browser navigation: 429")
    far = client(kind, waiting_url="https://queue.example.com/", **opts)
    ok(header(far(accept="text/html", target="/"), "Location") == ["https://queue.example.com/wait/shop?return=/"],
       t + ": waiting_url is honoured")
    ok(not admits(hit, "anteroom_shop=" + a.token), t + ": a bound token without its key is refused")
    ok(not admits(hit, "anteroom_shop=%s~%s" % (a.token, random_key())), t + ": with another key, refused")
    loose = admitted(base, "shop", bound=False)
    ok(admits(hit, cookie_of(loose)), t + ": an unbound token admits alone")
    other = admitted(base, "other")
    ok(not admits(hit, cookie_of(other)), t + ": a token of another room is refused")
    ok(admits(client(kind, **dict(opts, room="other")), cookie_of(other, "anteroom_other")),
       t + ": (that token admits to its own room)")
    clock[0] = a.claims["exp"]
    ok(not admits(hit, cookie_of(a)), t + ": an expired token (now = exp) is refused")
    clock[0] = a.claims["exp"] - 1
    ok(admits(hit, cookie_of(a)), t + ": (one second before exp it admits)")
    clock[0] = time.time()
    h, c, s = a.token.split(".")
    ok(not admits(hit, "anteroom_shop=%s.%s.%s~%s" % (h, b64(dict(a.claims, sub="X" * 27)), s, a.key)),
       t + ": a token with changed claims is refused")
    ok(not admits(hit, "anteroom_shop=%s.%s.~%s" % (b64({"alg": "none", "typ": "JWT"}), c, a.key)),
       t + ': alg "none" is refused')
    junk = "; ".join("anteroom_shop=junk%d" % i for i in range(8))
    ok(admits(hit, "anteroom_shop=junk; theme=dark; " + cookie_of(a)), t + ": junk cookies of the name are passed over")
    ok(not admits(hit, junk + "; " + cookie_of(a)), t + ": at most 8 cookies of the name are read")
    ex = client(kind, exclude=["/static/"], **opts)
    res = ex(target="/static/app.js")
    ok(res.status == 200 and res.anteroom is None, t + ": an excluded prefix passes")
    ok(ex(target="/static/%2e%2e/checkout").status == 429, t + ": /static/%2e%2e/checkout is not excluded")
    return a


def refresh(alg, base, opts, kind):
    """The verify refresh; live tickets, as anteroom refreshes only those."""
    t = "%s %s" % (alg, kind)
    hit = client(kind, verify_key=VERIFY, **opts)
    a = admitted(base, "shop", live=True)
    clock[0] = a.claims["iat"] + 10
    res = hit(cookie_of(a))
    ok(res.status == 200 and not header(res, "Set-Cookie"), t + ": more than half the life left: no refresh")
    clock[0] = a.claims["exp"] - 10
    ok(not header(client(kind, **opts)(cookie_of(a)), "Set-Cookie"), t + ": without verify_key, no refresh")
    res = hit(cookie_of(a))
    m = re.match(r"anteroom_shop=([^~;]+)~([^;]+); Path=/; Max-Age=(\d+); SameSite=Lax; HttpOnly\Z",
                 (header(res, "Set-Cookie") or [""])[0])
    fresh = parts(m.group(1))[1] if m else {}
    until = res.anteroom["expires_at"] if res.status == 200 else 0
    ok(m and m.group(2) == a.key and fresh["sub"] == a.ticket and fresh["exp"] > a.claims["exp"] and
       int(m.group(3)) == until - int(clock[0]) and fresh["exp"] - 1 <= until <= fresh["exp"],
       t + ": less than half left: verify called, fresh Set-Cookie (token~key, Max-Age to its exp)")
    res = hit("anteroom_shop=%s~%s" % (m.group(1), m.group(2)))
    ok(res.status == 200 and not header(res, "Set-Cookie"), t + ": the fresh token admits (and needs no refresh)")
    b = admitted(base, "shop", live=True)
    clock[0] = b.claims["exp"] - 10
    res = client(kind, verify_key=VERIFY, cookie_secure=True, **opts)(cookie_of(b, "__Host-anteroom_shop"))
    ok(re.match(r"__Host-anteroom_shop=.*; HttpOnly; Secure\Z", (header(res, "Set-Cookie") or [""])[0]),
       t + ": refreshed under the cookie's own name, Secure")
    c = admitted(base, "shop", live=True)
    api(base, "DELETE", "/v1/rooms/shop/tickets/" + c.ticket)
    failed = hit.core.refreshes["failed"]
    res = hit(cookie_of(c))
    ok(res.status == 200 and not header(res, "Set-Cookie") and hit.core.refreshes["failed"] == failed + 1,
       t + ": verify refused (ticket left): this request still passes, no cookie set")
    clock[0] = time.time()
    for x in (a, b):
        api(base, "DELETE", "/v1/rooms/shop/tickets/" + x.ticket)


def jwks_server(public_key):
    """A JWKS of the forger's own key, on loopback: the control for the forged tokens."""
    n = public_key.public_numbers()
    doc = json.dumps({"keys": [{"kty": "EC", "crv": "P-256", "kid": "mine", "alg": "ES256", "use": "sig",
                                "x": b64(n.x.to_bytes(32, "big")), "y": b64(n.y.to_bytes(32, "big"))}]}).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", str(len(doc)))
            self.end_headers()
            self.wfile.write(doc)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def main():
    for what, o in (("no room", {"secret": SECRET}), ("HS256 without secret", {"room": "shop"}),
                    ("ES256 without anteroom_url", {"room": "shop", "alg": "ES256"}),
                    ("verify_key without anteroom_url", {"room": "shop", "secret": SECRET, "verify_key": VERIFY}),
                    ("an unknown option", {"room": "shop", "secret": SECRET, "anteroomUrl": "http://x"})):
        for cls in (AnteroomWSGI, AnteroomASGI):
            try:
                cls(inner_wsgi, **o)
                raised = False
            except ConfigurationError:
                raised = True
            ok(raised, "bad configuration raises (%s): %s" % (cls.__name__, what))
    sent = []
    asyncio.run(AnteroomASGI(inner_asgi, room="shop", secret=SECRET)(
        {"type": "websocket", "path": "/"}, None, lambda m: asyncio.sleep(0, sent.append(m))))
    ok(sent[-1].get("body") == b"passed", "ASGI: a websocket scope passes through")

    server = Server(["--token-alg", "HS256"])
    try:
        opts = {"room": "shop", "alg": "HS256", "secret": SECRET, "anteroom_url": server.base}
        for kind in ("wsgi", "asgi"):
            a = common("HS256", server.base, opts, kind)
        hit = client("wsgi", **opts)
        header_ = {k: v for k, v in parts(a.token)[0].items() if k != "kid"}
        kid = parts(a.token)[0]["kid"]
        ok(admits(hit, "anteroom_shop=%s~%s" % (hs256(header_, a.claims, SECRET.encode()), a.key)),
           "HS256: (a kid-less token signed here with the secret admits: the signer below is right)")
        ok(not admits(hit, "anteroom_shop=%s~%s" % (hs256(dict(header_, kid=kid), a.claims, SECRET.encode() + b"x"), a.key)),
           "HS256: a token signed with another secret is refused")
        forged = es256({"alg": "ES256", "typ": "JWT", "kid": kid}, a.claims, ec.generate_private_key(ec.SECP256R1()))
        ok(not admits(hit, "anteroom_shop=%s~%s" % (forged, a.key)), "HS256: an ES256 token is refused (the algorithm is pinned)")
        for kind in ("wsgi", "asgi"):
            refresh("HS256", server.base, opts, kind)
        server.stop()

        data = os.path.join(WORK, "es256")
        server = Server(["--token-alg", "ES256", "--data-dir", data])
        port = server.port
        opts = {"room": "shop", "alg": "ES256", "anteroom_url": server.base, "jwks_max_age": 60}
        for kind in ("asgi", "wsgi"):
            old = common("ES256", server.base, opts, kind)
        hit = client("wsgi", **opts)
        old_kid = parts(old.token)[0]["kid"]
        with open(os.path.join(data, "token-key.pem"), "rb") as f:
            pem = serialization.load_pem_private_key(f.read(), None).public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        ok(not admits(hit, "anteroom_shop=%s~%s" % (hs256({"alg": "HS256", "typ": "JWT", "kid": old_kid}, old.claims, pem), old.key)),
           "ES256: an HS256 token keyed with the public key's PEM is refused (algorithm confusion)")
        mine = ec.generate_private_key(ec.SECP256R1())

        def forged(kid):
            return "anteroom_shop=%s~%s" % (es256({"alg": "ES256", "typ": "JWT", "kid": kid}, old.claims, mine), old.key)

        ok(not admits(hit, forged(old_kid)), "ES256: a token signed by another EC key (the server's kid) is refused")
        fake = jwks_server(mine.public_key())
        ok(admits(client("wsgi", **dict(opts, anteroom_url="http://127.0.0.1:%d" % fake.server_address[1])), forged("mine")),
           "ES256: (the forger's token admits where its key is the JWKS)")
        fake.shutdown()
        t0, fetches = clock[0], hit.core.jwks.fetches
        for i in range(5):
            admits(hit, forged("made-up-%d" % i))
        ok(hit.core.jwks.fetches == fetches, "ES256: made-up kids within 10 s of a fetch fetch nothing")

        # Rotation: a new key, the old one as previous; same port, so the same connector.
        server.stop()
        new_pem = os.path.join(WORK, "new.pem")
        subprocess.run(["openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", new_pem], check=True)
        server = Server(["--token-alg", "ES256", "--data-dir", data, "--token-key", new_pem,
                         "--token-key-previous", os.path.join(data, "token-key.pem")], port)
        api(server.base, "PUT", "/v1/rooms/shop", {"capacity": 5}, ADMIN)
        rotated = admitted(server.base, "shop")
        ok(parts(rotated.token)[0]["kid"] != old_kid, "ES256: after the restart tokens carry the new kid")
        ok(not admits(hit, cookie_of(rotated)), "ES256: (within 10 s of the last fetch the new kid is not fetched yet)")
        clock[0] = t0 + 11
        ok(admits(hit, cookie_of(rotated)) and hit.core.jwks.fetches == fetches + 1,
           "ES256: a new-key token verifies: the unknown kid fetched the JWKS again, once")
        ok(admits(hit, cookie_of(old)), "ES256: an old-key token still verifies (previous key in the JWKS)")
        for i in range(5):
            admits(hit, forged("made-up-again-%d" % i))
        clock[0] = t0 + 22
        admits(hit, forged("made-up-later"))
        ok(hit.core.jwks.fetches == fetches + 2, "ES256: made-up kids: one fetch per interval at most")
        for kind in ("wsgi", "asgi"):
            refresh("ES256", server.base, opts, kind)

        # The rotation over: once the cached JWKS is older than jwks_max_age (60 s here) it
        # is fetched again, and the old kid is gone.
        server.stop()
        server = Server(["--token-alg", "ES256", "--data-dir", data, "--token-key", new_pem], port)
        clock[0] = t0 + 22 + 61
        ok(not admits(hit, cookie_of(old)), "ES256: after the previous key left the JWKS its tokens are refused")
        ok(admits(hit, cookie_of(rotated)), "ES256: (the new key's tokens still verify)")
        print("python connector: %d checks passed" % checks[0])
    finally:
        server.stop()


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # noqa: BLE001
        print("FAIL: %s: %s" % (type(e).__name__, e), flush=True)
        sys.exit(1)
