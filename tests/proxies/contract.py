#!/usr/bin/env python3
"""Traefik's forwardAuth and Envoy's ext_authz as their code says they call an auth service,
against a real anteroom: each asks the gate with the headers that proxy sends and copies the
answer out by that proxy's rules (what reaches the origin, what reaches the visitor), as
deploy/traefik/dynamic.yml and deploy/envoy/envoy.yaml configure them. Neither proxy is
packaged in Debian; the rules followed here are those in the proxies' sources
(traefik pkg/middlewares/auth/forward.go; envoy ext_authz_http_impl.cc), summed up in
docs/integrations.md.

usage: tests/proxies/contract.py PATH/TO/anteroom
"""
import http.client
import json
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te",
       "trailer", "transfer-encoding", "upgrade"}
SITE = "shop.example"
KEY = "contract-test-admin-key"
BROWSER = {"Accept": "text/html,application/xhtml+xml", "User-Agent": "Mozilla/5.0"}
SCRIPT = {"Accept": "application/json", "User-Agent": "fetch"}


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Answer:
    def __init__(self, r):
        self.status = r.status
        self.headers = r.getheaders()  # every line, repeated ones too
        self.body = r.read()

    def header(self, name):
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None

    def all(self, name):
        return [v for k, v in self.headers if k.lower() == name.lower()]


def ask(port, method, path, headers):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    c.request(method, path, headers=headers)
    a = Answer(c.getresponse())
    c.close()
    return a


class Outcome:
    """What the visitor and the origin see once the proxy is done with the gate's answer."""

    def __init__(self, allowed, status=200, headers=(), body=b"", to_origin=None):
        self.allowed = allowed
        self.status = status
        self.headers = list(headers)  # to the visitor
        self.body = body
        self.to_origin = to_origin or {}

    def header(self, name):
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None


def traefik(gate, method, uri, headers, v3=True):
    """forward.go: GET to the address; the visitor's headers minus hop-by-hop ones; with
    trustForwardHeader false every X-Forwarded-* is deleted, then Method, Proto, Host, Uri
    and For set from the real request; Host is the address's. The anteroom-strip headers
    middleware before it removes the visitor's X-Original-URL and X-Original-URI."""
    sent = {k: v for k, v in headers.items()
            if k.lower() not in HOP and not k.lower().startswith("x-forwarded-")
            and k.lower() not in ("x-original-url", "x-original-uri")}
    sent.update({"X-Forwarded-Method": method, "X-Forwarded-Proto": "https",
                 "X-Forwarded-Host": SITE, "X-Forwarded-Uri": uri,
                 "X-Forwarded-For": "203.0.113.9", "Host": f"127.0.0.1:{gate}"})
    a = ask(gate, "GET", "/v1/gate", sent)
    if 200 <= a.status < 300:
        # authResponseHeaders onto the origin's request; on v3 the listed cookies
        # (addAuthCookiesToResponse) onto the visitor's response.
        out = [("Set-Cookie", c) for c in a.all("Set-Cookie")
               if v3 and c.split("=", 1)[0] in TRAEFIK_COOKIES]
        return Outcome(True, 200, out, b"ORIGIN OK",
                       {"X-Anteroom-Visitor": a.header("X-Anteroom-Visitor")})
    resolved = [(k, urllib.parse.urljoin(f"http://127.0.0.1:{gate}/v1/gate", v))
                if k.lower() == "location" else (k, v)
                for k, v in a.headers if k.lower() not in HOP]
    return Outcome(False, a.status, resolved, a.body)


TRAEFIK_COOKIES = ["anteroom_shop", "__Host-anteroom_shop"]
# What goes to anteroom rather than through the gate to the site (the routers' rule, Envoy's
# route): its paths, and never a site path that only starts like one.
ANTEROOM_PATHS = ["/wait", "/wait/shop", "/v1/rooms/shop/tickets", "/v1/enter"]
SITE_PATHS = ["/waitlist", "/wait-times", "/v1/enterprise", "/v1/roomsearch", "/shop/"]


def anteroom_path(path):
    """The routers' rule: Path(/wait) || PathPrefix(/wait/) || PathPrefix(/v1/rooms/) ||
    Path(/v1/enter)."""
    return path in ("/wait", "/v1/enter") or path.startswith(("/wait/", "/v1/rooms/"))

ENVOY_ALLOWED = {"cookie", "accept", "user-agent", "x-forwarded-for", "x-forwarded-proto"}
ENVOY_CLIENT = {"set-cookie", "content-type", "cache-control", "retry-after"}


def envoy(gate, method, uri, headers):
    """ext_authz HTTP: the visitor's method, path_prefix + path + query, Host (:authority),
    Content-Length and Authorization, and the allowed_headers; exactly 200 allows; a 5xx is
    403 without body; any other status is denied with its body, Location and the
    allowed_client_headers."""
    sent = {k: v for k, v in headers.items() if k.lower() in ENVOY_ALLOWED}
    # The connection manager sets these on the request before the filter sees it (the site is
    # https; use_remote_address appends the peer).
    sent["X-Forwarded-For"] = "203.0.113.9"
    sent["X-Forwarded-Proto"] = "https"
    sent["Host"] = SITE
    sent["Content-Length"] = "0"
    a = ask(gate, method, "/v1/authz" + uri, sent)
    if a.status == 200:
        out = [("Set-Cookie", c) for c in a.all("Set-Cookie")]  # on_success: set-cookie
        return Outcome(True, 200, out, b"ORIGIN OK",
                       {"x-anteroom-visitor": a.header("X-Anteroom-Visitor")})
    if a.status >= 500:
        return Outcome(False, 403)
    out = [(k, v) for k, v in a.headers if k.lower() in ENVOY_CLIENT or k.lower() == "location"]
    return Outcome(False, a.status, out, a.body)


class Browser:
    """A browser on https://shop.example behind a proxy function: follows redirects on the
    site, keeps the site's cookies, and sends /wait, /v1/rooms/ and /v1/enter to anteroom
    itself (the routes the proxy's config leaves ungated)."""

    def __init__(self, proxy, gate):
        self.proxy, self.gate, self.jar, self.seen = proxy, gate, {}, []

    def cookies(self):
        return "; ".join(f"{k}={v}" for k, v in self.jar.items())

    def keep(self, headers):
        for k, v in headers:
            if k.lower() == "set-cookie":
                name, _, rest = v.partition("=")
                self.jar[name] = rest.split(";")[0]

    def get(self, uri, headers=BROWSER, hops=5):
        for _ in range(hops):
            self.seen.append(uri)
            h = dict(headers)
            if self.jar:
                h["Cookie"] = self.cookies()
            if anteroom_path(uri.split("?", 1)[0]):
                a = ask(self.gate, "GET", uri, dict(h, Host=SITE, **{"X-Forwarded-Host": SITE}))
                out = Outcome(False, a.status, a.headers, a.body)
            else:
                out = self.proxy(self.gate, "GET", uri, h)
            self.keep(out.headers)
            loc = out.header("Location")
            if out.status not in (301, 302, 303, 307) or not loc:
                return out
            parsed = urllib.parse.urlsplit(loc)
            if parsed.netloc not in ("", SITE):
                raise AssertionError(f"sent off the site: {loc}")
            uri = parsed.path + ("?" + parsed.query if parsed.query else "")
        raise AssertionError(f"redirected too often: {self.seen}")


passed = 0


def check(cond, what):
    global passed
    if not cond:
        print(f"FAIL: {what}", file=sys.stderr)
        sys.exit(1)
    passed += 1
    print(f"PASS: {what}")


def admin(port, method, path, body=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    c.request(method, path, body=json.dumps(body) if body is not None else None,
              headers={"Authorization": f"Bearer {KEY}"})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, (json.loads(data) if data else None)


def scenario(name, proxy, port, pass_cookies):
    room = {"capacity": 2, "match": [{"host": SITE}],
            "bypass": [{"name": "assets", "path_prefix": "/static/"}],
            "gate_cookies": "pass" if pass_cookies else "redirect",
            "gate_ip_admits_per_minute": 0}  # every visitor here has one address
    admin(port, "DELETE", "/v1/rooms/shop")
    status, _ = admin(port, "PUT", "/v1/rooms/shop", room)
    check(status == 201, f"{name}: the room is made")
    a = Browser(proxy, port)
    got = a.get("/shop/item?id=7")
    check(got.allowed and got.body == b"ORIGIN OK" and not any(u.startswith("/wait") for u in a.seen),
          f"{name}: with room to spare the first visit reaches the origin, no waiting page "
          f"({len(a.seen) - 1} redirect(s))")
    check(("anteroom_shop" in a.jar), f"{name}: the visitor holds the gate's cookie")
    again = a.get("/shop/cart")
    check(again.allowed and len(again.to_origin.get("X-Anteroom-Visitor",
                                                    again.to_origin.get("x-anteroom-visitor", ""))) == 27,
          f"{name}: the cookie lets the next request through, the origin told the ticket")
    joined = admin(port, "GET", "/v1/rooms/shop")[1]["totals"]["joined"]
    asset = proxy(port, "GET", "/static/site.css", dict(BROWSER))
    check(asset.allowed and admin(port, "GET", "/v1/rooms/shop")[1]["totals"]["joined"] == joined,
          f"{name}: a bypassed asset passes and makes no ticket")
    Browser(proxy, port).get("/shop/")  # the second slot
    admin(port, "POST", "/v1/rooms/shop/tickets", {})  # a line forms
    page = proxy(port, "GET", "/shop/item?id=8", dict(BROWSER))
    check(not page.allowed and page.status == 302 and
          page.header("Location") == f"https://{SITE}/wait/shop?return=/shop/item%3Fid%3D8",
          f"{name}: once a line forms a browser is sent to the page, absolute ({page.header('Location')})")
    forged = proxy(port, "GET", "/shop/item", dict(BROWSER, **{"X-Original-URI": "/static/x",
                                                           "X-Original-URL": "http://no.example/"}))
    check(not forged.allowed, f"{name}: a visitor's own X-Original-* headers do not choose the request")
    xhr = proxy(port, "POST", "/shop/api/cart", dict(SCRIPT))
    body = json.loads(xhr.body or b"{}")
    check(xhr.status == 429 and xhr.header("Retry-After") == "5" and
          body.get("error", {}).get("code") == "in_line" and body.get("join") == "/v1/rooms/shop/tickets",
          f"{name}: a script gets JSON 429 with Retry-After, as the proxy passes it on")


def configs_say_what_is_followed():
    """The shipped configs set what these functions follow: if one changes, so must this."""
    here = __file__.rsplit("/", 3)[0]
    traefik_yml = open(f"{here}/deploy/traefik/dynamic.yml").read()
    envoy_yml = open(f"{here}/deploy/envoy/envoy.yaml").read()
    for text in ('address: "http://127.0.0.1:8080/v1/gate"', "trustForwardHeader: false",
                 'authResponseHeaders: ["X-Anteroom-Visitor"]',
                 "middlewares: [anteroom-strip, anteroom]",
                 'X-Original-URL: ""', 'X-Original-URI: ""',
                 "addAuthCookiesToResponse: " + json.dumps(TRAEFIK_COOKIES),
                 "(Path(`/wait`) || PathPrefix(`/wait/`) || PathPrefix(`/v1/rooms/`) || "
                 "Path(`/v1/enter`))"):
        check(text in traefik_yml, f"deploy/traefik/dynamic.yml sets {text}")
    check("PathPrefix(`/wait`)" not in traefik_yml, "Traefik's rule takes no /wait prefix")
    check(all(map(anteroom_path, ANTEROOM_PATHS)) and not any(map(anteroom_path, SITE_PATHS)),
          "the routers' rule as followed here sends only anteroom's paths to anteroom")
    check("path_prefix: /v1/authz" in envoy_yml, "deploy/envoy/envoy.yaml asks under /v1/authz")
    # Envoy matches safe_regex (RE2) against the whole path without its query; this one is
    # also Python's.
    route = re.search(r'safe_regex: \{regex: "([^"]+)"\}', envoy_yml)
    check(route is not None, "deploy/envoy/envoy.yaml routes anteroom's paths by a regex")
    check(all(re.fullmatch(route.group(1), p) for p in ANTEROOM_PATHS) and
          not any(re.fullmatch(route.group(1), p) for p in SITE_PATHS),
          f"Envoy's route sends {ANTEROOM_PATHS} to anteroom and {SITE_PATHS} to the site")
    for name in sorted(ENVOY_ALLOWED | ENVOY_CLIENT):
        check(f"{{exact: {name}}}" in envoy_yml, f"deploy/envoy/envoy.yaml lists {name}")


def main():
    binary = sys.argv[1]
    configs_say_what_is_followed()
    port = free_port()
    with tempfile.TemporaryDirectory() as data:
        server = subprocess.Popen(
            [binary, "--listen", f"127.0.0.1:{port}", "--data-dir", data, "--no-persistence",
             "--admin-key", KEY, "--trusted-proxy", "127.0.0.1",
             "--token-secret", "contract-test-token-secret-0123456789"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(200):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.05)
            scenario("Traefik v2", lambda g, m, u, h: traefik(g, m, u, h, v3=False), port, False)
            scenario("Traefik v3 (addAuthCookiesToResponse)", traefik, port, True)
            scenario("Envoy ext_authz", envoy, port, True)
            scenario("Envoy ext_authz, cookie by redirect", envoy, port, False)
        finally:
            server.terminate()
            server.wait(timeout=10)
    print(f"proxy contracts: {passed} passed, 0 failed")


if __name__ == "__main__":
    main()
