"""The decision both middlewares share (wsgi.py, asgi.py): is this request admitted by one of
its anteroom_{room} cookies? The checks are those of anteroom's gate (server/app/gate.cc)
minus the live ticket, which only anteroom knows (README.md, "What is checked")."""

import json
import math
import re
import time
from collections import namedtuple

from . import _tokens as tk
from ._paths import cookie_values, percent_encode, plain_path, safe_return

_ROOM = re.compile(r"[A-Za-z0-9_-]{1,64}\Z")
_MOST_COOKIES = 8
_VERIFY_PAUSE = 10  # seconds without refreshes after anteroom failed to answer one
_OPTIONS = ("room", "alg", "secret", "anteroom_url", "verify_key", "waiting_url",
            "cookie_secure", "exclude", "now", "jwks_max_age", "jwks_min_interval", "timeout")
_IN_LINE = "this address is behind a waiting room: join its line"

# What the middlewares read of a request. target: the path and query as sent.
Request = namedtuple("Request", "method accept cookie target secure")

# kind: "excluded", "admitted", "refused" or "io" (NeedsIO: run again in a thread).
Decision = namedtuple("Decision", "kind admission set_cookie status headers body")


class ConfigurationError(ValueError):
    """Bad options, raised when the middleware is made (never on a visitor's request)."""


def _seconds(options, name, default, zero_ok=False):
    v = options.get(name, default)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or \
            v < 0 or (v == 0 and not zero_ok):
        raise ConfigurationError("%s must be a number of seconds%s" % (name, "" if zero_ok else " above 0"))
    return v


class Core:
    def __init__(self, **options):
        unknown = sorted(set(options) - set(_OPTIONS))
        if unknown:
            raise ConfigurationError("unknown option %s (known: %s)" % (unknown[0], ", ".join(_OPTIONS)))
        room = options.get("room")
        if not isinstance(room, str) or not _ROOM.match(room):
            raise ConfigurationError("room is required: the room's name, 1-64 of A-Z a-z 0-9 _ -")
        self.room = room
        self.alg = options.get("alg", "HS256")
        if self.alg not in ("HS256", "ES256"):
            raise ConfigurationError('alg must be "HS256" or "ES256", not %r' % (self.alg,))
        secret = options.get("secret")
        if isinstance(secret, str):
            secret = secret.encode("utf-8")
        if self.alg == "HS256" and (not isinstance(secret, bytes) or len(secret) < 32):
            raise ConfigurationError("HS256 needs secret: anteroom's --token-secret (at least 32 bytes)")
        self._secret = secret
        url = options.get("anteroom_url")
        if url is not None and (not isinstance(url, str) or not re.match(r"https?://[^/]", url)):
            raise ConfigurationError("anteroom_url must be an http:// or https:// URL")
        self.anteroom_url = url.rstrip("/") if url else None
        self.now = options.get("now") or time.time
        if not callable(self.now):
            raise ConfigurationError("now must be a function returning Unix seconds")
        self.timeout = _seconds(options, "timeout", 5)
        self.jwks = None
        if self.alg == "ES256":
            if not self.anteroom_url:
                raise ConfigurationError(
                    "ES256 needs anteroom_url: its public keys are at {anteroom_url}/.well-known/jwks.json")
            try:
                ecmod = tk.load_ec()
            except ImportError:
                raise ConfigurationError(
                    "ES256 needs the cryptography package (Debian: apt install python3-cryptography; "
                    "else pip install cryptography)") from None
            self.jwks = tk.Jwks(self.anteroom_url + "/.well-known/jwks.json", ecmod, self.now,
                                _seconds(options, "jwks_max_age", 300),
                                _seconds(options, "jwks_min_interval", 10, True), self.timeout)
            self._ec = ecmod
        else:
            self._kid = tk.hs256_kid(secret)
        self.verify_key = options.get("verify_key")
        if self.verify_key is not None:
            if not isinstance(self.verify_key, str) or len(self.verify_key) < 16:
                raise ConfigurationError("verify_key must be anteroom's --verify-key (at least 16 bytes)")
            if not self.anteroom_url:
                raise ConfigurationError("verify_key needs anteroom_url: refreshes go to its verify route")
        waiting = options.get("waiting_url", "")
        if not isinstance(waiting, str):
            raise ConfigurationError('waiting_url must be a string (a URL or "")')
        self.waiting_url = waiting.rstrip("/")
        self.cookie_secure = options.get("cookie_secure")
        if self.cookie_secure is not None and not isinstance(self.cookie_secure, bool):
            raise ConfigurationError("cookie_secure must be True or False (leave it out to follow the request)")
        self._exclude = self._excluder(options.get("exclude"))
        self.names = ("anteroom_" + room, "__Host-anteroom_" + room)
        self.verify_paused_until = float("-inf")
        self.refreshes = {"ok": 0, "failed": 0}

    @staticmethod
    def _excluder(exclude):
        if exclude is None:
            return lambda path: False
        if callable(exclude):
            return exclude
        prefixes = [exclude] if isinstance(exclude, str) else exclude
        if not isinstance(prefixes, (list, tuple)) or \
                not all(isinstance(p, str) and p.startswith("/") for p in prefixes):
            raise ConfigurationError("exclude must be a function or a list of path prefixes starting with /")
        prefixes = tuple(prefixes)
        return lambda path: path.startswith(prefixes)

    def decide(self, req, io=True):
        """The Decision for a Request. io False: raise no network call, answer kind "io"
        instead where one is needed."""
        try:
            return self._decide(req, io)
        except tk.NeedsIO:
            return Decision("io", None, None, None, None, None)

    def _decide(self, req, io):
        path = plain_path(req.target)
        if path is not None and self._exclude(path):
            return Decision("excluded", None, None, None, None, None)
        now = self.now()
        for name, value in cookie_values(req.cookie, self.names, _MOST_COOKIES):
            token, _, key = value.partition("~")
            claims = self.check(token, key, now, io)
            if claims is None:
                continue
            admission = {"ticket": claims["ticket"], "user": claims["user"],
                         "room": claims["room"], "expires_at": claims["exp"]}
            set_cookie = None
            if self._wants_refresh(claims, now):
                if not io:
                    raise tk.NeedsIO()
                fresh = self._refresh(token, key if claims["key_hash"] else "")
                if fresh is not None:
                    admission["expires_at"] = fresh[1]
                    v = fresh[0] + ("~" + key if claims["key_hash"] else "")
                    set_cookie = self.set_cookie(name, v, fresh[1] - math.floor(now), req.secure)
            return Decision("admitted", admission, set_cookie, None, None, None)
        return self.refusal(req)

    def check(self, token, key, now, io=True):
        """The claims if token (with key, for a bound one) admits to the room at now, else
        None. What the token states is checked first; the signature last."""
        jws = tk.split_token(token)
        if jws is None:
            return None
        header, payload, signing_input, signature = jws
        if header.get("alg") != self.alg:  # pinned: never "none" or the other algorithm
            return None
        if header.get("typ", "JWT") != "JWT":
            return None
        claims = tk.read_claims(payload)
        if claims is None or claims["exp"] <= now or claims["room"] != self.room:
            return None
        if claims["key_hash"] is not None and not (key and tk.key_matches(key, claims["key_hash"])):
            return None
        kid = header.get("kid")
        if self.alg == "HS256":
            if "kid" in header and kid != self._kid:  # a kid-less token may pass
                return None
            return claims if tk.verify_hs256(self._secret, signing_input, signature) else None
        if not isinstance(kid, str):
            return None
        pub = self.jwks.key(kid, io)
        if pub is None or not tk.verify_es256(self._ec, pub, signing_input, signature):
            return None
        return claims

    def _wants_refresh(self, claims, now):
        return self.verify_key is not None and now >= self.verify_paused_until and \
            claims["exp"] - now < (claims["exp"] - claims["iat"]) / 2

    def _refresh(self, token, key):
        """anteroom's verify route: (fresh token, expires_at), or None. Failures are not the
        visitor's problem: the token they hold is valid, so the request goes on."""
        body = {"token": token, "key": key} if key else {"token": token}
        try:
            status, raw = tk.http_call(
                "POST", "%s/v1/rooms/%s/verify" % (self.anteroom_url, self.room), self.timeout,
                json.dumps(body).encode("utf-8"),
                {"Authorization": "Bearer " + self.verify_key, "Content-Type": "application/json"})
        except Exception:  # noqa: BLE001 - unreachable or too slow
            status, raw = None, b""
        answer = None
        if status == 200:
            try:
                answer = json.loads(raw.decode("utf-8"))
            except ValueError:
                pass
        if isinstance(answer, dict) and isinstance(answer.get("token"), str) and \
                type(answer.get("expires_at")) is int and not re.search(r"[;,\s]", answer["token"]):
            self.refreshes["ok"] += 1
            return answer["token"], answer["expires_at"]
        if status is None or status >= 500:
            self.verify_paused_until = self.now() + _VERIFY_PAUSE
        self.refreshes["failed"] += 1
        return None

    def set_cookie(self, name, value, max_age, request_secure):
        """As anteroom sets it (server/app/gate.cc admission_set_cookie)."""
        secure = name.startswith("__Host-") or (
            self.cookie_secure if self.cookie_secure is not None else bool(request_secure))
        return "%s=%s; Path=/; Max-Age=%d; SameSite=Lax; HttpOnly%s" % (
            name, value, max(1, max_age), "; Secure" if secure else "")

    def refusal(self, req):
        """Not admitted, as anteroom's gate answers (server/app/gate_answers.cc gate_deny): a
        browser's GET or HEAD goes to the waiting page, any other client gets 429 in_line."""
        if req.method in ("GET", "HEAD") and "text/html" in (req.accept or ""):
            where = "%s/wait/%s?return=%s" % (self.waiting_url, self.room,
                                              percent_encode(safe_return(req.target)))
            return Decision("refused", None, None, 302,
                            [("Location", where), ("Cache-Control", "no-store")], b"")
        body = json.dumps({"error": {"code": "in_line", "message": _IN_LINE}, "room": self.room,
                           "status": None, "join": "%s/v1/rooms/%s/tickets" % (self.waiting_url, self.room)},
                          separators=(",", ":"))
        return Decision("refused", None, None, 429,
                        [("Content-Type", "application/json"), ("Retry-After", "5"),
                         ("Cache-Control", "no-store")],
                        b"" if req.method == "HEAD" else body.encode("utf-8"))
