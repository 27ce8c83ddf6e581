// Anteroom's admission tokens read and checked with WebCrypto alone (crypto.subtle), so the
// same code runs in Node 20 and in edge runtimes. The token format is docs/api.md section 8
// and server/app/token.h; the strict base64url follows server/app/jws.cc.

const subtle = globalThis.crypto.subtle;
const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const VALUE = new Map([...ALPHABET].map((c, i) => [c, i]));
const KEY_HASH = /^[0-9a-f]{64}$/;

// base64url without padding, canonical only (no stray trailing bits); null if not.
export function base64urlDecode(text) {
  if (typeof text !== "string" || text.length % 4 === 1) return null;
  const out = new Uint8Array(Math.floor((text.length * 3) / 4));
  let acc = 0;
  let bits = 0;
  let n = 0;
  for (const c of text) {
    const v = VALUE.get(c);
    if (v === undefined) return null;
    acc = ((acc << 6) | v) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[n++] = (acc >> bits) & 0xff;
    }
  }
  if ((acc & ((1 << bits) - 1)) !== 0) return null;
  return out.subarray(0, n);
}

export function base64urlEncode(bytes) {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function jsonObject(bytes) {
  try {
    const v = JSON.parse(strictUtf8.decode(bytes));
    return v !== null && typeof v === "object" && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}

// A compact JWS split and decoded: { header, payload, input, signature }, or null. Nothing
// is verified here.
export function splitToken(token) {
  const parts = token.split(".");
  if (parts.length !== 3) return null;
  const [h, p, s] = parts.map(base64urlDecode);
  if (!h || !p || !s) return null;
  const header = jsonObject(h);
  const payload = jsonObject(p);
  if (!header || !payload) return null;
  return { header, payload, input: utf8.encode(parts[0] + "." + parts[1]), signature: s };
}

// The claims anteroom writes, checked for shape: iss "anteroom", string sub and room,
// integer iat and exp, optional string usr, optional cnf.kh (64 lowercase hex). Else null.
export function readClaims(p) {
  const int = (v) => Number.isSafeInteger(v);
  if (p.iss !== "anteroom" || typeof p.sub !== "string" || p.sub === "") return null;
  if (typeof p.room !== "string" || !int(p.iat) || !int(p.exp)) return null;
  if (p.usr !== undefined && typeof p.usr !== "string") return null;
  let keyHash = null;
  if (p.cnf !== undefined) {
    if (p.cnf === null || typeof p.cnf !== "object" || typeof p.cnf.kh !== "string") return null;
    if (!KEY_HASH.test(p.cnf.kh)) return null;
    keyHash = p.cnf.kh;
  }
  return { ticket: p.sub, room: p.room, user: p.usr ?? null, keyHash, iat: p.iat, exp: p.exp };
}

// Hex SHA-256 of a string's UTF-8 bytes (the cookie's key, as cnf.kh states it).
export async function sha256Hex(text) {
  const d = new Uint8Array(await subtle.digest("SHA-256", utf8.encode(text)));
  return Array.from(d, (b) => b.toString(16).padStart(2, "0")).join("");
}

// Equal strings, compared in time that depends on the length only.
export function sameText(a, b) {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

// HS256: the shared secret as an HMAC key, and the kid anteroom derives from it
// (base64url of the first 12 bytes of HMAC-SHA256(secret, "anteroom token kid"),
// server/app/token.cc), which names the secret without revealing it.
export async function hmacKey(secret) {
  const key = await subtle.importKey("raw", utf8.encode(secret), { name: "HMAC", hash: "SHA-256" },
    false, ["sign", "verify"]);
  const mac = new Uint8Array(await subtle.sign("HMAC", key, utf8.encode("anteroom token kid")));
  return { key, kid: base64urlEncode(mac.subarray(0, 12)) };
}

export async function verifyHs256(key, jws) {
  if (jws.signature.length !== 32) return false;
  return subtle.verify("HMAC", key, jws.signature, jws.input);  // constant time
}

// ES256: the signature is R || S, 64 bytes (RFC 7518), which is WebCrypto's own format.
export async function verifyEs256(key, jws) {
  if (jws.signature.length !== 64) return false;
  return subtle.verify({ name: "ECDSA", hash: "SHA-256" }, key, jws.signature, jws.input);
}

// A JWK of the JWKS as a verification key, or null if it is not a P-256 signing key.
export async function importJwk(jwk) {
  if (jwk === null || typeof jwk !== "object") return null;
  if (jwk.kty !== "EC" || jwk.crv !== "P-256" || typeof jwk.kid !== "string") return null;
  if (typeof jwk.x !== "string" || typeof jwk.y !== "string") return null;
  if ((jwk.alg !== undefined && jwk.alg !== "ES256") || (jwk.use !== undefined && jwk.use !== "sig")) {
    return null;
  }
  try {
    return await subtle.importKey("jwk", { kty: "EC", crv: "P-256", x: jwk.x, y: jwk.y },
      { name: "ECDSA", namedCurve: "P-256" }, false, ["verify"]);
  } catch {
    return null;
  }
}

// The public keys of {anteroom_url}/.well-known/jwks.json by kid. Fetched on first use, again
// once older than maxAge seconds, and again when a token names a kid not in it (a rotation),
// but never twice within minInterval seconds, so tokens with made-up kids cannot turn into a
// flood of fetches. A failed fetch keeps the keys already known.
export class Jwks {
  constructor({ url, fetch, now, maxAge, minInterval, timeout }) {
    Object.assign(this, { url, fetch, now, maxAge, minInterval, timeout });
    this.keys = new Map();
    this.fetchedAt = -Infinity;
    this.attemptedAt = -Infinity;
    this.fetches = 0;  // attempts, for tests and monitoring
    this.lastError = null;
    this.pending = null;
  }

  async key(kid) {
    if (this.pending) await this.pending;
    const t = this.now();
    const wanted = !this.keys.has(kid) || t - this.fetchedAt >= this.maxAge;
    if (wanted && t - this.attemptedAt >= this.minInterval) {
      this.pending ??= this.load().finally(() => { this.pending = null; });
      await this.pending;
    }
    return this.keys.get(kid) ?? null;
  }

  async load() {
    this.attemptedAt = this.now();
    this.fetches++;
    try {
      const res = await this.fetch(this.url, {
        headers: { accept: "application/json" },
        redirect: "error",
        signal: AbortSignal.timeout(this.timeout * 1000),
      });
      if (res.status !== 200) throw new Error(`${this.url} answered ${res.status}`);
      const body = await res.json();
      if (!body || !Array.isArray(body.keys)) throw new Error(`${this.url} holds no "keys" array`);
      const keys = new Map();
      for (const jwk of body.keys) {
        const k = await importJwk(jwk);
        if (k && !keys.has(jwk.kid)) keys.set(jwk.kid, k);
      }
      this.keys = keys;
      this.fetchedAt = this.now();
      this.lastError = null;
    } catch (e) {
      this.lastError = e;
    }
  }
}
