"""WSGI middleware: AnteroomWSGI(app, **options) (README.md has the options)."""

from urllib.parse import quote

from ._core import Core, Request
from ._paths import ascii_target

_STATUS = {302: "302 Found", 429: "429 Too Many Requests"}


def _request(environ):
    raw = environ.get("RAW_URI") or environ.get("REQUEST_URI") or ""
    if raw.startswith("/"):
        target = ascii_target(raw.encode("latin-1", "replace"))
    else:  # PEP 3333: the path is decoded, as latin-1 text of its bytes
        path = (environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", "")) or "/"
        target = quote(path.encode("latin-1", "replace"), safe="/;=,!$&'()*+:@-._~")
        query = environ.get("QUERY_STRING", "")
        if query:
            target += "?" + ascii_target(query.encode("latin-1", "replace"))
    return Request(environ.get("REQUEST_METHOD", "GET"), environ.get("HTTP_ACCEPT", ""),
                   environ.get("HTTP_COOKIE", ""), target,
                   environ.get("wsgi.url_scheme") == "https")


class AnteroomWSGI:
    """Admitted: environ["anteroom"] = {ticket, user, room, expires_at}, then the app (with
    a refreshed cookie added to its headers, when verify_key refreshed one). Excluded paths
    reach the app with environ["anteroom"] = None. Not admitted: 302 or 429, the app is not
    called."""

    def __init__(self, app, **options):
        self.app = app
        self.core = Core(**options)

    def __call__(self, environ, start_response):
        d = self.core.decide(_request(environ))
        if d.kind == "refused":
            headers = list(d.headers) + [("Content-Length", str(len(d.body)))]
            start_response(_STATUS[d.status], headers)
            return [d.body]
        environ["anteroom"] = d.admission
        if not d.set_cookie:
            return self.app(environ, start_response)

        def start(status, headers, exc_info=None):
            return start_response(status, list(headers) + [("Set-Cookie", d.set_cookie)], exc_info)

        return self.app(environ, start)
