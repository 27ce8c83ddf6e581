"""ASGI middleware: AnteroomASGI(app, **options) (README.md has the options)."""

import asyncio
from urllib.parse import quote

from ._core import Core, Request
from ._paths import ascii_target


def _request(scope):
    def header(name):
        return [v.decode("latin-1") for k, v in scope.get("headers", ()) if k.lower() == name]

    raw = scope.get("raw_path")
    if raw:
        target = ascii_target(raw)
    else:
        target = quote(scope.get("path") or "/", safe="/;=,!$&'()*+:@-._~")
    if scope.get("query_string"):
        target += "?" + ascii_target(scope["query_string"])
    return Request(scope.get("method", "GET"), ",".join(header(b"accept")),
                   "; ".join(header(b"cookie")), target, scope.get("scheme") in ("https", "wss"))


class AnteroomASGI:
    """HTTP requests only (websocket and lifespan scopes pass through unchecked). Admitted:
    scope["anteroom"] = {ticket, user, room, expires_at}, then the app (with a refreshed
    cookie added to its http.response.start, when verify_key refreshed one). Excluded paths
    reach the app with scope["anteroom"] = None. Not admitted: 302 or 429, the app is not
    called. Network calls (the JWKS, verify) run in a thread, never on the event loop."""

    def __init__(self, app, **options):
        self.app = app
        self.core = Core(**options)

    async def __call__(self, scope, receive, send):
        if scope.get("type") != "http":
            return await self.app(scope, receive, send)
        req = _request(scope)
        d = self.core.decide(req, io=False)
        if d.kind == "io":
            d = await asyncio.get_running_loop().run_in_executor(None, self.core.decide, req)
        if d.kind == "refused":
            headers = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in d.headers]
            headers.append((b"content-length", str(len(d.body)).encode("ascii")))
            await send({"type": "http.response.start", "status": d.status, "headers": headers})
            await send({"type": "http.response.body", "body": d.body})
            return None
        scope = dict(scope, anteroom=d.admission)
        if not d.set_cookie:
            return await self.app(scope, receive, send)
        cookie = (b"set-cookie", d.set_cookie.encode("latin-1"))

        async def send_with_cookie(message):
            if message.get("type") == "http.response.start":
                message = dict(message, headers=list(message.get("headers", ())) + [cookie])
            await send(message)

        return await self.app(scope, receive, send_with_cookie)
