"""Anteroom's admission tokens read and checked (docs/api.md section 8, server/app/token.h).

HS256 needs only the standard library. ES256 needs the `cryptography` package, imported when
an ES256 connector is made, never at import time. The strict base64url follows
server/app/jws.cc.
"""

import base64
import hashlib
import hmac
import json
import re
import threading
import urllib.error
import urllib.request

_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
_VALUE = {c: i for i, c in enumerate(_ALPHABET)}
_KEY_HASH = re.compile(r"[0-9a-f]{64}\Z")


class NeedsIO(Exception):
    """Raised where the network would be needed but the caller asked for none (ASGI's event
    loop): it then runs the decision again in a thread."""


def b64url_decode(text):
    """base64url without padding, canonical only; None if not."""
    if len(text) % 4 == 1:
        return None
    out = bytearray()
    acc = bits = 0
    for c in text:
        v = _VALUE.get(c)
        if v is None:
            return None
        acc = ((acc << 6) | v) & 0xFFFFFF
        bits += 6
        if bits >= 8:
            bits -= 8
            out.append((acc >> bits) & 0xFF)
    if acc & ((1 << bits) - 1):
        return None
    return bytes(out)


def b64url_encode(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _json_object(data):
    try:
        v = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return v if isinstance(v, dict) else None


def split_token(token):
    """(header, payload, signing input, signature) of a compact JWS, or None. Nothing is
    verified here."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    raw = [b64url_decode(p) for p in parts]
    if any(r is None for r in raw):
        return None
    header, payload = _json_object(raw[0]), _json_object(raw[1])
    if header is None or payload is None:
        return None
    return header, payload, (parts[0] + "." + parts[1]).encode("ascii"), raw[2]


def _int(v):
    return type(v) is int


def read_claims(p):
    """The claims anteroom writes, checked for shape, as a dict; else None."""
    if p.get("iss") != "anteroom" or not isinstance(p.get("sub"), str) or not p["sub"]:
        return None
    if not isinstance(p.get("room"), str) or not _int(p.get("iat")) or not _int(p.get("exp")):
        return None
    if "usr" in p and not isinstance(p["usr"], str):
        return None
    key_hash = None
    if "cnf" in p:
        cnf = p["cnf"]
        if not isinstance(cnf, dict) or not isinstance(cnf.get("kh"), str):
            return None
        if not _KEY_HASH.match(cnf["kh"]):
            return None
        key_hash = cnf["kh"]
    return {"ticket": p["sub"], "room": p["room"], "user": p.get("usr"),
            "key_hash": key_hash, "iat": p["iat"], "exp": p["exp"]}


def key_matches(key, key_hash):
    """The key's SHA-256 hex is key_hash, compared in constant time."""
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()
    return hmac.compare_digest(digest, key_hash)


def hs256_kid(secret):
    """The kid anteroom gives HS256 tokens (server/app/token.cc): base64url of the first 12
    bytes of HMAC-SHA256(secret, "anteroom token kid")."""
    return b64url_encode(hmac.new(secret, b"anteroom token kid", hashlib.sha256).digest()[:12])


def verify_hs256(secret, signing_input, signature):
    mac = hmac.new(secret, signing_input, hashlib.sha256).digest()
    return hmac.compare_digest(mac, signature)


def load_ec():
    """The pieces of `cryptography` ES256 needs, or ImportError."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, utils

    return {"InvalidSignature": InvalidSignature, "hashes": hashes, "ec": ec, "utils": utils}


def public_key(ecmod, jwk):
    """A JWK of the JWKS as a P-256 public key, or None if it is not an ES256 signing key."""
    if not isinstance(jwk, dict) or jwk.get("kty") != "EC" or jwk.get("crv") != "P-256":
        return None
    if not isinstance(jwk.get("kid"), str) or jwk.get("alg", "ES256") != "ES256":
        return None
    if jwk.get("use", "sig") != "sig":
        return None
    x = b64url_decode(jwk.get("x")) if isinstance(jwk.get("x"), str) else None
    y = b64url_decode(jwk.get("y")) if isinstance(jwk.get("y"), str) else None
    if x is None or y is None or len(x) != 32 or len(y) != 32:
        return None
    ec = ecmod["ec"]
    try:
        numbers = ec.EllipticCurvePublicNumbers(
            int.from_bytes(x, "big"), int.from_bytes(y, "big"), ec.SECP256R1())
        return numbers.public_key()
    except ValueError:  # not a point on the curve
        return None


def verify_es256(ecmod, key, signing_input, signature):
    """The signature is R || S, 64 bytes (RFC 7518); cryptography wants DER."""
    if len(signature) != 64:
        return False
    der = ecmod["utils"].encode_dss_signature(
        int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
    try:
        key.verify(der, signing_input, ecmod["ec"].ECDSA(ecmod["hashes"].SHA256()))
        return True
    except ecmod["InvalidSignature"]:
        return False


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # a redirect is answered as the error it is


_opener = urllib.request.build_opener(_NoRedirect)


def http_call(method, url, timeout, body=None, headers=None):
    """(status, body bytes) of one request; OSError (URLError, timeouts) if none came."""
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with _opener.open(req, timeout=timeout) as res:
            return res.status, res.read(1 << 20)
    except urllib.error.HTTPError as e:
        with e:
            return e.code, e.read(1 << 20)


class Jwks:
    """The public keys of {anteroom_url}/.well-known/jwks.json by kid. Fetched on first use,
    again once older than max_age seconds, and again when a token names a kid not in it (a
    rotation), but never twice within min_interval seconds, so tokens with made-up kids cannot
    turn into a flood of fetches. A failed fetch keeps the keys already known. Thread-safe."""

    def __init__(self, url, ecmod, now, max_age, min_interval, timeout):
        self.url, self._ec, self._now = url, ecmod, now
        self.max_age, self.min_interval, self.timeout = max_age, min_interval, timeout
        self._keys = {}
        self.fetched_at = self.attempted_at = float("-inf")
        self.fetches = 0  # attempts, for tests and monitoring
        self.last_error = None
        self._lock = threading.Lock()

    def _wanted(self, kid):
        t = self._now()
        stale = kid not in self._keys or t - self.fetched_at >= self.max_age
        return stale and t - self.attempted_at >= self.min_interval

    def key(self, kid, io=True):
        if self._wanted(kid):
            if not io:
                raise NeedsIO()
            with self._lock:
                if self._wanted(kid):  # another thread may have fetched meanwhile
                    self._load()
        return self._keys.get(kid)

    def _load(self):
        self.attempted_at = self._now()
        self.fetches += 1
        try:
            status, body = http_call("GET", self.url, self.timeout,
                                     headers={"Accept": "application/json"})
            if status != 200:
                raise ValueError("%s answered %d" % (self.url, status))
            doc = json.loads(body.decode("utf-8"))
            if not isinstance(doc, dict) or not isinstance(doc.get("keys"), list):
                raise ValueError('%s holds no "keys" array' % self.url)
            keys = {}
            for jwk in doc["keys"]:
                k = public_key(self._ec, jwk)
                if k is not None and jwk["kid"] not in keys:
                    keys[jwk["kid"]] = k
            self._keys = keys
            self.fetched_at = self._now()
            self.last_error = None
        except Exception as e:  # noqa: BLE001 - a failed fetch must not fail the request
            self.last_error = e
