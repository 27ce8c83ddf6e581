// The decision both front ends share (express.js, fetch.js): is this request admitted by one
// of its anteroom_{room} cookies? The checks are those of anteroom's gate (server/app/gate.cc)
// minus the live ticket, which only anteroom knows (README.md, "What is checked").
import { cookieValues, percentEncode, plainPath, safeReturn, splitAdmission } from "./http.js";
import {
  Jwks, hmacKey, readClaims, sameText, sha256Hex, splitToken, verifyEs256, verifyHs256,
} from "./jwt.js";

const ROOM = /^[A-Za-z0-9_-]{1,64}$/;
const MOST_COOKIES = 8;
const VERIFY_PAUSE = 10;  // seconds without refreshes after anteroom failed to answer one
const OPTIONS = new Set(["room", "alg", "secret", "anteroom_url", "verify_key", "waiting_url",
  "cookie_secure", "exclude", "now", "fetch", "jwks_max_age", "jwks_min_interval", "timeout"]);

function bad(message) {
  return new TypeError("anteroom-connector: " + message);
}

function positive(o, name, fallback, zeroOk = false) {
  const v = o[name] ?? fallback;
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0 || (v === 0 && !zeroOk)) {
    throw bad(`${name} must be a number of seconds${zeroOk ? "" : " above 0"}`);
  }
  return v;
}

// The options checked once, at construction: a mistake throws here, not on a visitor.
export function readOptions(o) {
  if (o === null || typeof o !== "object") throw bad("options must be an object");
  for (const k of Object.keys(o)) {
    if (!OPTIONS.has(k)) throw bad(`unknown option "${k}" (known: ${[...OPTIONS].join(", ")})`);
  }
  if (typeof o.room !== "string" || !ROOM.test(o.room)) {
    throw bad("room is required: the room's name, 1-64 of A-Z a-z 0-9 _ -");
  }
  const alg = o.alg ?? "HS256";
  if (alg !== "HS256" && alg !== "ES256") throw bad(`alg must be "HS256" or "ES256", not ${alg}`);
  if (alg === "HS256" && (typeof o.secret !== "string" || new TextEncoder().encode(o.secret).length < 32)) {
    throw bad("HS256 needs secret: anteroom's --token-secret (at least 32 bytes)");
  }
  let anteroomUrl = null;
  if (o.anteroom_url !== undefined) {
    if (typeof o.anteroom_url !== "string" || !/^https?:\/\/[^/]/.test(o.anteroom_url)) {
      throw bad("anteroom_url must be an http:// or https:// URL");
    }
    anteroomUrl = o.anteroom_url.replace(/\/+$/, "");
  }
  if (alg === "ES256" && !anteroomUrl) {
    throw bad("ES256 needs anteroom_url: its public keys are at {anteroom_url}/.well-known/jwks.json");
  }
  if (o.verify_key !== undefined) {
    if (typeof o.verify_key !== "string" || o.verify_key.length < 16) {
      throw bad("verify_key must be anteroom's --verify-key (at least 16 bytes)");
    }
    if (!anteroomUrl) throw bad("verify_key needs anteroom_url: refreshes go to its verify route");
  }
  const waitingUrl = o.waiting_url ?? "";
  if (typeof waitingUrl !== "string") throw bad("waiting_url must be a string (a URL or \"\")");
  if (o.cookie_secure !== undefined && typeof o.cookie_secure !== "boolean") {
    throw bad("cookie_secure must be true or false (leave it out to follow the request)");
  }
  let exclude = () => false;
  if (typeof o.exclude === "function") {
    exclude = o.exclude;
  } else if (o.exclude !== undefined) {
    const prefixes = typeof o.exclude === "string" ? [o.exclude] : o.exclude;
    if (!Array.isArray(prefixes) || !prefixes.every((p) => typeof p === "string" && p.startsWith("/"))) {
      throw bad("exclude must be a function or a list of path prefixes starting with /");
    }
    exclude = (path) => prefixes.some((p) => path.startsWith(p));
  }
  for (const f of ["now", "fetch"]) {
    if (o[f] !== undefined && typeof o[f] !== "function") throw bad(`${f} must be a function`);
  }
  return {
    room: o.room, alg, secret: o.secret, anteroomUrl, verifyKey: o.verify_key ?? null,
    waitingUrl: waitingUrl.replace(/\/+$/, ""), cookieSecure: o.cookie_secure ?? null, exclude,
    now: o.now ?? (() => Date.now() / 1000),
    fetch: o.fetch ?? ((...a) => globalThis.fetch(...a)),
    jwksMaxAge: positive(o, "jwks_max_age", 300),
    jwksMinInterval: positive(o, "jwks_min_interval", 10, true),
    timeout: positive(o, "timeout", 5),
  };
}

export class Core {
  constructor(options) {
    this.o = readOptions(options);
    this.names = [`anteroom_${this.o.room}`, `__Host-anteroom_${this.o.room}`];
    this.hmac = this.o.alg === "HS256" ? hmacKey(this.o.secret) : null;
    this.hmac?.catch(() => {});  // awaited on use
    this.jwks = this.o.alg === "ES256" ? new Jwks({
      url: this.o.anteroomUrl + "/.well-known/jwks.json", fetch: this.o.fetch, now: this.o.now,
      maxAge: this.o.jwksMaxAge, minInterval: this.o.jwksMinInterval, timeout: this.o.timeout,
    }) : null;
    this.verifyPausedUntil = -Infinity;
    this.refreshes = { ok: 0, failed: 0 };
  }

  // req: { method, accept, cookie, target (path and query as sent), secure, raw }; refresh:
  // whether a refreshed cookie can reach the visitor. Resolves to one of
  //   { excluded: true }
  //   { admission: {ticket, user, room, expires_at}, setCookie: string | null }
  //   { refusal: { status, headers: [[name, value]], body } }
  async decide(req, { refresh = true } = {}) {
    const path = plainPath(req.target);
    if (path !== null && (await this.o.exclude(path, req.raw))) return { excluded: true };
    const now = this.o.now();
    for (const { name, value } of cookieValues(req.cookie, this.names, MOST_COOKIES)) {
      const { token, key } = splitAdmission(value);
      const claims = await this.check(token, key, now);
      if (!claims) continue;
      const admission = {
        ticket: claims.ticket, user: claims.user, room: claims.room, expires_at: claims.exp,
      };
      let setCookie = null;
      if (refresh && this.wantsRefresh(claims, now)) {
        const fresh = await this.refresh(token, claims.keyHash ? key : "");
        if (fresh) {
          admission.expires_at = fresh.expires_at;
          const v = fresh.token + (claims.keyHash ? "~" + key : "");
          setCookie = this.setCookie(name, v, fresh.expires_at - Math.floor(now), req.secure);
        }
      }
      return { admission, setCookie };
    }
    return { refusal: this.refusal(req) };
  }

  // The claims if `token` (with `key`, for a bound one) admits to the room at `now`, else
  // null. What the token states is checked first; the signature last.
  async check(token, key, now) {
    const jws = splitToken(token);
    if (!jws || jws.header.alg !== this.o.alg) return null;  // pinned: never "none" or the other
    if (jws.header.typ !== undefined && jws.header.typ !== "JWT") return null;
    const claims = readClaims(jws.payload);
    if (!claims || claims.exp <= now || claims.room !== this.o.room) return null;
    if (claims.keyHash !== null && (!key || !sameText(await sha256Hex(key), claims.keyHash))) {
      return null;
    }
    const kid = jws.header.kid;
    if (this.o.alg === "HS256") {
      const { key: hmac, kid: ours } = await this.hmac;
      if (kid !== undefined && kid !== ours) return null;  // a kid-less token may pass
      return (await verifyHs256(hmac, jws)) ? claims : null;
    }
    if (typeof kid !== "string") return null;
    const pub = await this.jwks.key(kid);
    return pub && (await verifyEs256(pub, jws)) ? claims : null;
  }

  // Less than half of the token's life left, and a verify_key to refresh it with.
  wantsRefresh(claims, now) {
    return this.o.verifyKey !== null && now >= this.verifyPausedUntil &&
      claims.exp - now < (claims.exp - claims.iat) / 2;
  }

  // anteroom's verify route: { token, expires_at } of a fresh token, or null. Failures are
  // not the visitor's problem: the token they hold is valid, so the request goes on.
  async refresh(token, key) {
    const body = key ? { token, key } : { token };
    try {
      const res = await this.o.fetch(`${this.o.anteroomUrl}/v1/rooms/${this.o.room}/verify`, {
        method: "POST",
        headers: { authorization: "Bearer " + this.o.verifyKey, "content-type": "application/json" },
        body: JSON.stringify(body),
        redirect: "error",
        signal: AbortSignal.timeout(this.o.timeout * 1000),
      });
      const answer = await res.json().catch(() => null);
      if (res.status === 200 && typeof answer?.token === "string" &&
          Number.isSafeInteger(answer.expires_at) && !/[;,\s]/.test(answer.token)) {
        this.refreshes.ok++;
        return { token: answer.token, expires_at: answer.expires_at };
      }
      if (res.status >= 500) this.verifyPausedUntil = this.o.now() + VERIFY_PAUSE;
    } catch {
      this.verifyPausedUntil = this.o.now() + VERIFY_PAUSE;  // unreachable or too slow
    }
    this.refreshes.failed++;
    return null;
  }

  // As anteroom sets it (server/app/gate.cc admission_set_cookie).
  setCookie(name, value, maxAge, requestSecure) {
    const secure = name.startsWith("__Host-") || (this.o.cookieSecure ?? Boolean(requestSecure));
    return `${name}=${value}; Path=/; Max-Age=${Math.max(1, maxAge)}; SameSite=Lax; HttpOnly` +
      (secure ? "; Secure" : "");
  }

  // Not admitted, as anteroom's gate answers (server/app/gate_answers.cc gate_deny): a
  // browser's GET or HEAD goes to the waiting page, any other client gets 429 in_line.
  refusal(req) {
    const room = this.o.room;
    const browser = (req.method === "GET" || req.method === "HEAD") &&
      String(req.accept ?? "").includes("text/html");
    if (browser) {
      const where = `${this.o.waitingUrl}/wait/${room}?return=${percentEncode(safeReturn(req.target))}`;
      return { status: 302, headers: [["Location", where], ["Cache-Control", "no-store"]], body: "" };
    }
    const body = JSON.stringify({
      error: { code: "in_line", message: "this address is behind a waiting room: join its line" },
      room,
      status: null,
      join: `${this.o.waitingUrl}/v1/rooms/${room}/tickets`,
    });
    return {
      status: 429,
      headers: [["Content-Type", "application/json"], ["Retry-After", "5"],
        ["Cache-Control", "no-store"]],
      body: req.method === "HEAD" ? "" : body,
    };
  }
}
