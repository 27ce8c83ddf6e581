// Request pieces the connector reads: cookies, the path made plain for `exclude`, and the
// return address of the waiting page, as anteroom itself reads them (server/app/gate.cc,
// server/app/gate_paths.h, server/app/wait_page.cc).

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

// The values of the cookies named one of `names`, in order, at most `most`. Pairs are split
// on ";" and also on "," (some runtimes join several Cookie headers with ", "); a token and
// a key never hold either.
export function cookieValues(header, names, most) {
  const out = [];
  if (typeof header !== "string") return out;
  for (const pair of header.split(/[;,]/)) {
    if (out.length >= most) break;
    const eq = pair.indexOf("=");
    if (eq < 0) continue;
    const name = pair.slice(0, eq).trim();
    if (names.includes(name)) out.push({ name, value: pair.slice(eq + 1).trim() });
  }
  return out;
}

// TOKEN~KEY, or TOKEN alone (a JWT holds no "~").
export function splitAdmission(value) {
  const i = value.indexOf("~");
  return i < 0 ? { token: value, key: "" } : { token: value.slice(0, i), key: value.slice(i + 1) };
}

// A request target's path as the gate's rules see it (server/app/gate_paths.h): percent-decoded,
// backslashes read as slashes, ";params" cut from each segment, empty segments dropped and
// dot segments removed ("/static/../checkout" is "/checkout"). null if it decodes to a NUL
// or to bytes that are not UTF-8.
export function plainPath(target) {
  const src = new TextEncoder().encode(target.split(/[?#]/)[0]);
  const hex = (b) => "0123456789abcdef".indexOf(String.fromCharCode(b).toLowerCase());
  const bytes = new Uint8Array(src.length);
  let n = 0;
  for (let i = 0; i < src.length; i++) {
    if (src[i] === 0x25 && i + 2 < src.length && hex(src[i + 1]) >= 0 && hex(src[i + 2]) >= 0) {
      bytes[n++] = hex(src[i + 1]) * 16 + hex(src[i + 2]);
      i += 2;
    } else {
      bytes[n++] = src[i];
    }
  }
  let decoded;
  try {
    decoded = strictUtf8.decode(bytes.subarray(0, n));
  } catch {
    return null;
  }
  if (decoded.includes("\0")) return null;
  const kept = [];
  const segments = decoded.replace(/\\/g, "/").split("/");
  let last = "";
  for (const s of segments) {
    const seg = s.split(";")[0];
    last = seg;
    if (seg === "..") kept.pop();
    else if (seg !== "" && seg !== ".") kept.push(seg);
  }
  let path = kept.map((s) => "/" + s).join("");
  if (path === "" || last === "" || last === "." || last === "..") path += "/";
  return path;
}

// The return address the waiting page accepts: a path on this site, else "/"
// (safe_return_url in server/app/wait_page.cc).
export function safeReturn(target) {
  if (typeof target !== "string" || !target.startsWith("/") || target.startsWith("//") ||
      target.startsWith("/\\") || /[\x00-\x1f\x7f\\]/.test(target)) {
    return "/";
  }
  return target;
}

// Every byte but A-Z a-z 0-9 - _ . ~ / as %XX (percent_encode in server/app/forward_auth.cc).
export function percentEncode(text) {
  let out = "";
  for (const b of new TextEncoder().encode(text)) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9\-_.~/]/.test(c) ? c : "%" + b.toString(16).toUpperCase().padStart(2, "0");
  }
  return out;
}
