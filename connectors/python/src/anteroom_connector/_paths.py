"""Request pieces the connector reads: cookies, the path made plain for `exclude`, and the
return address of the waiting page, as anteroom itself reads them (server/app/gate.cc,
server/app/gate_paths.h, server/app/wait_page.cc)."""

import re

_HEX = "0123456789abcdefABCDEF"
_UNSAFE_RETURN = re.compile(r"[\x00-\x1f\x7f\\]")
_KEEP = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~/")


def cookie_values(header, names, most):
    """[(name, value)] of the cookies named one of names, in order, at most `most`. Pairs
    are split on ";" and also on "," (some servers join several Cookie headers so); a token
    and a key never hold either."""
    out = []
    for pair in re.split(r"[;,]", header or ""):
        if len(out) >= most:
            break
        name, eq, value = pair.partition("=")
        if eq and name.strip() in names:
            out.append((name.strip(), value.strip()))
    return out


def plain_path(target):
    """A request target's path as the gate's rules see it (server/app/gate_paths.h):
    percent-decoded, backslashes read as slashes, ";params" cut from each segment, empty
    segments dropped and dot segments removed ("/static/../checkout" is "/checkout"). None
    if it decodes to a NUL or to bytes that are not UTF-8."""
    raw = re.split(r"[?#]", target, maxsplit=1)[0].encode("utf-8", "surrogateescape")
    out = bytearray()
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == 0x25 and i + 2 < len(raw) and chr(raw[i + 1]) in _HEX and chr(raw[i + 2]) in _HEX:
            out.append(int(raw[i + 1:i + 3], 16))
            i += 3
        else:
            out.append(c)
            i += 1
    try:
        decoded = out.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if "\0" in decoded:
        return None
    kept = []
    last = ""
    for segment in decoded.replace("\\", "/").split("/"):
        seg = segment.split(";", 1)[0]
        last = seg
        if seg == "..":
            if kept:
                kept.pop()
        elif seg not in ("", "."):
            kept.append(seg)
    path = "".join("/" + s for s in kept)
    if not path or last in ("", ".", ".."):
        path += "/"
    return path


def safe_return(target):
    """The return address the waiting page accepts: a path on this site, else "/"
    (safe_return_url in server/app/wait_page.cc)."""
    if not target.startswith("/") or target.startswith("//") or target.startswith("/\\") or \
            _UNSAFE_RETURN.search(target):
        return "/"
    return target


def percent_encode(text):
    """Every byte but A-Z a-z 0-9 - _ . ~ / as %XX (percent_encode in
    server/app/forward_auth.cc)."""
    return "".join(chr(b) if b in _KEEP else "%%%02X" % b
                   for b in text.encode("utf-8", "surrogateescape"))


def ascii_target(raw):
    """Request target bytes as text, every byte outside printable ASCII as %XX (as a
    browser sends it), so the text means the same bytes whatever decoded it."""
    return "".join(chr(b) if 0x20 < b < 0x7F else "%%%02X" % b for b in raw)
