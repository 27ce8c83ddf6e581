// The Node connector (connectors/node) against a real anteroom: HS256, then ES256 with a key
// rotation, tokens from real joins, forged tokens made here. Run by run_node.sh.
// usage: node tests/connectors/node_test.mjs PATH/TO/anteroom WORK_DIR
import { execFileSync, spawn } from "node:child_process";
import { createHmac, createPublicKey, generateKeyPairSync, sign as ecSign } from "node:crypto";
import { appendFileSync } from "node:fs";
import http from "node:http";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { anteroom, check, withAnteroom } from "../../connectors/node/src/index.js";

const [binary, work] = process.argv.slice(2);
const ADMIN = "connector-admin-key-0123456789";
const SECRET = "connector-token-secret-0123456789abcdef";
const VERIFY = "connector-verify-key-0123456789";
const clock = { t: Date.now() / 1000 };
const now = () => clock.t;
let checks = 0;
function ok(cond, what) {
  if (!cond) throw new Error(what);
  checks++;
  console.log("PASS: " + what);
}

// anteroom, started on loopback; its pid goes to WORK/pids so run_node.sh can stop it.
async function start(args, port = 0) {
  const proc = spawn(binary, ["--listen", `127.0.0.1:${port}`, "--no-persistence",
    "--admin-key", ADMIN, "--token-secret", SECRET, "--verify-key", VERIFY, ...args],
  { stdio: ["ignore", "pipe", "inherit"] });
  appendFileSync(join(work, "pids"), proc.pid + "\n");
  const line = await new Promise((resolve, reject) => {
    createInterface({ input: proc.stdout }).once("line", resolve);
    proc.once("exit", (c) => reject(new Error("anteroom exited with " + c)));
    setTimeout(() => reject(new Error("anteroom did not start within 10 s")), 10000);
  });
  const base = line.match(/^anteroom listening on (http:\/\/127\.0\.0\.1:(\d+))$/);
  return { proc, base: base[1], port: Number(base[2]) };
}
async function stop({ proc }) {
  if (proc.exitCode !== null) return;
  const gone = new Promise((r) => proc.once("exit", r));
  proc.kill("SIGTERM");
  await gone;
}

const b64 = (x) => Buffer.from(typeof x === "string" ? x : JSON.stringify(x)).toString("base64url");
const parts = (t) => t.split(".").map((p, i) => (i < 2 ? JSON.parse(Buffer.from(p, "base64url")) : p));
const hs256 = (header, claims, secret) => {
  const input = b64(header) + "." + b64(claims);
  return input + "." + createHmac("sha256", secret).update(input).digest("base64url");
};
const es256 = (header, claims, privateKey) => {
  const input = b64(header) + "." + b64(claims);
  return input + "." + ecSign("sha256", Buffer.from(input), { key: privateKey, dsaEncoding: "ieee-p1363" })
    .toString("base64url");
};
const randomKey = () => Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString("base64url");

// The protected service: one loopback server running whichever middleware is current.
let current = null;
const app = http.createServer((req, res) => current(req, res, (err) => {
  res.statusCode = err ? 500 : 200;
  res.end(err ? String(err) : JSON.stringify({ anteroom: req.anteroom ?? null }));
}));
await new Promise((r) => app.listen(0, "127.0.0.1", r));
function hit(mw, { cookie, accept = "application/json", method = "GET", path = "/checkout" } = {}) {
  current = mw;
  const headers = { accept, ...(cookie === undefined ? {} : { cookie }) };
  return new Promise((resolve, reject) => {
    const r = http.request({ host: "127.0.0.1", port: app.address().port, method, path, headers }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (d) => { body += d; });
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body }));
    });
    r.on("error", reject).end();
  });
}
const admits = async (mw, cookie) => (await hit(mw, { cookie })).status === 200;

async function api(base, method, path, body, key) {
  const res = await fetch(base + path, { method, body: body && JSON.stringify(body),
    headers: key ? { authorization: "Bearer " + key } : {} });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}
// A fresh admission: { ticket, token, key, claims }; its ticket left at once unless `live`
// (the token stays valid to the connector, which never asks about the ticket).
async function admitted(base, room, { bound = true, user, live = false } = {}) {
  const key = bound ? randomKey() : undefined;
  const j = await api(base, "POST", `/v1/rooms/${room}/tickets`, { key, user });
  if (j.status !== "ALLOWED" || !j.token) throw new Error("join not admitted: " + JSON.stringify(j));
  if (!live) await api(base, "DELETE", `/v1/rooms/${room}/tickets/${j.ticket}`);
  return { ticket: j.ticket, token: j.token, key, claims: parts(j.token)[1] };
}
const cookieOf = (a, name = "anteroom_shop") => `${name}=${a.token}${a.key ? "~" + a.key : ""}`;

// Everything that holds for either algorithm. `opts` configures the connector.
async function common(alg, base, opts) {
  for (const room of ["shop", "other"]) await api(base, "PUT", `/v1/rooms/${room}`, { capacity: 5 }, ADMIN);
  const mw = anteroom({ ...opts, now });
  const a = await admitted(base, "shop", { user: "alice" });
  let res = await hit(mw, { cookie: cookieOf(a) });
  ok(res.status === 200 && JSON.stringify(JSON.parse(res.body).anteroom) === JSON.stringify(
    { ticket: a.ticket, user: "alice", room: "shop", expires_at: a.claims.exp }),
  `${alg}: admitted with TOKEN~KEY, req.anteroom = {ticket, user, room, expires_at}`);
  ok(await admits(mw, cookieOf(a, "__Host-anteroom_shop")), `${alg}: the __Host- cookie name admits too`);
  res = await hit(mw, { accept: "text/html,application/xhtml+xml", path: "/checkout/a%20b?item=1&x=y" });
  ok(res.status === 302 && res.headers.location === "/wait/shop?return=/checkout/a%2520b%3Fitem%3D1%26x%3Dy",
    `${alg}: no cookie, a browser: 302 to /wait/shop?return=<path and query>`);
  res = await hit(mw, { method: "HEAD", accept: "text/html" });
  ok(res.status === 302, `${alg}: no cookie, a browser's HEAD: 302`);
  res = await hit(mw, {});
  ok(res.status === 429 && res.headers["retry-after"] === "5" &&
    res.headers["content-type"] === "application/json" && res.body === JSON.stringify({
    error: { code: "in_line", message: "this address is behind a waiting room: join its line" },
    room: "shop", status: null, join: "/v1/rooms/shop/tickets" }),
  `${alg}: no cookie, an API client: 429 in_line JSON with Retry-After: 5`);
  ok((await hit(mw, { method: "POST", accept: "text/html" })).status === 429,
    `${alg}: a POST is no browser navigation: 429`);
  const far = anteroom({ ...opts, now, waiting_url: "https://queue.example.com/" });
  res = await hit(far, { accept: "text/html", path: "/" });
  ok(res.headers.location === "https://queue.example.com/wait/shop?return=/", `${alg}: waiting_url is honoured`);

  ok(!(await admits(mw, `anteroom_shop=${a.token}`)), `${alg}: a bound token without its key is refused`);
  ok(!(await admits(mw, `anteroom_shop=${a.token}~${randomKey()}`)), `${alg}: with another key, refused`);
  const loose = await admitted(base, "shop", { bound: false });
  ok(await admits(mw, cookieOf(loose)), `${alg}: an unbound token admits alone`);
  const other = await admitted(base, "other");
  ok(!(await admits(mw, cookieOf(other))), `${alg}: a token of another room is refused`);
  ok(await admits(anteroom({ ...opts, room: "other", now }), cookieOf(other, "anteroom_other")),
    `${alg}: (that token admits to its own room)`);
  clock.t = a.claims.exp;
  ok(!(await admits(mw, cookieOf(a))), `${alg}: an expired token (now = exp) is refused`);
  clock.t = a.claims.exp - 1;
  ok(await admits(mw, cookieOf(a)), `${alg}: (one second before exp it admits)`);
  clock.t = Date.now() / 1000;
  const [h, c, s] = a.token.split(".");
  ok(!(await admits(mw, `anteroom_shop=${h}.${b64({ ...a.claims, sub: "X".repeat(27) })}.${s}~${a.key}`)),
    `${alg}: a token with changed claims is refused`);
  ok(!(await admits(mw, `anteroom_shop=${b64({ alg: "none", typ: "JWT" })}.${c}.~${a.key}`)),
    `${alg}: alg "none" is refused`);
  const junk = Array.from({ length: 8 }, (_, i) => `anteroom_shop=junk${i}`).join("; ");
  ok(await admits(mw, `anteroom_shop=junk; theme=dark; ${cookieOf(a)}`),
    `${alg}: junk cookies of the name are passed over`);
  ok(!(await admits(mw, `${junk}; ${cookieOf(a)}`)), `${alg}: at most 8 cookies of the name are read`);
  const ex = anteroom({ ...opts, now, exclude: ["/static/"] });
  res = await hit(ex, { path: "/static/app.js" });
  ok(res.status === 200 && JSON.parse(res.body).anteroom === null, `${alg}: an excluded prefix passes`);
  ok((await hit(ex, { path: "/static/%2e%2e/checkout" })).status === 429,
    `${alg}: /static/%2e%2e/checkout is not excluded`);

  // The fetch-style handler, same core.
  const fo = { ...opts, now };
  const req = (cookie, accept = "*/*") => new Request("http://shop.test/checkout?q=1",
    { headers: { accept, ...(cookie ? { cookie } : {}) } });
  ok(await check(req(cookieOf(a)), fo) === null, `${alg}: check(): admitted is null`);
  res = await check(req(undefined, "text/html"), fo);
  ok(res.status === 302 && res.headers.get("location") === "/wait/shop?return=/checkout%3Fq%3D1",
    `${alg}: check(): a browser gets a 302 Response`);
  res = await check(req(`anteroom_shop=${a.token}`), fo);
  ok(res.status === 429 && (await res.json()).error.code === "in_line", `${alg}: check(): an API client gets 429`);
  return a;
}

// The verify refresh; `live` tickets, as anteroom refreshes only those.
async function refresh(alg, base, opts) {
  const mw = anteroom({ ...opts, now, verify_key: VERIFY });
  const a = await admitted(base, "shop", { live: true });
  clock.t = a.claims.iat + 10;
  let res = await hit(mw, { cookie: cookieOf(a) });
  ok(res.status === 200 && !res.headers["set-cookie"], `${alg}: more than half the life left: no refresh`);
  clock.t = a.claims.exp - 10;
  ok((await hit(anteroom({ ...opts, now }), { cookie: cookieOf(a) })).headers["set-cookie"] === undefined,
    `${alg}: without verify_key, no refresh`);
  res = await hit(mw, { cookie: cookieOf(a) });
  const set = res.headers["set-cookie"]?.[0] ?? "";
  const m = set.match(/^anteroom_shop=([^~;]+)~([^;]+); Path=\/; Max-Age=(\d+); SameSite=Lax; HttpOnly$/);
  const fresh = m && parts(m[1])[1];
  const until = res.status === 200 && JSON.parse(res.body).anteroom.expires_at;
  ok(m && m[2] === a.key && fresh.sub === a.ticket && fresh.exp > a.claims.exp &&
    Number(m[3]) === until - Math.floor(clock.t) && until >= fresh.exp - 1 && until <= fresh.exp,
  `${alg}: less than half left: verify called, fresh Set-Cookie (token~key, Max-Age to its exp)`);
  res = await hit(mw, { cookie: `anteroom_shop=${m[1]}~${m[2]}` });
  ok(res.status === 200 && !res.headers["set-cookie"], `${alg}: the fresh token admits (and needs no refresh)`);
  const sec = anteroom({ ...opts, now, verify_key: VERIFY, cookie_secure: true });
  res = await hit(sec, { cookie: `__Host-anteroom_shop=${m[1]}~${m[2]}` });
  ok(res.headers["set-cookie"] === undefined, `${alg}: (a fresh __Host- cookie is not refreshed)`);
  const b = await admitted(base, "shop", { live: true });
  clock.t = b.claims.exp - 10;
  res = await hit(sec, { cookie: cookieOf(b, "__Host-anteroom_shop") });
  ok(/^__Host-anteroom_shop=.*; HttpOnly; Secure$/.test(res.headers["set-cookie"]?.[0]),
    `${alg}: refreshed under the cookie's own name, Secure`);
  const c = await admitted(base, "shop", { live: true });
  await api(base, "DELETE", `/v1/rooms/shop/tickets/${c.ticket}`);
  const failed = mw.core.refreshes.failed;
  res = await hit(mw, { cookie: cookieOf(c) });
  ok(res.status === 200 && !res.headers["set-cookie"] && mw.core.refreshes.failed === failed + 1,
    `${alg}: verify refused (ticket left): this request still passes, no cookie set`);
  const d = await admitted(base, "shop", { live: true });
  clock.t = d.claims.exp - 10;
  const wrapped = withAnteroom(() => new Response("ok"), { ...opts, now, verify_key: VERIFY });
  const r = await wrapped(new Request("http://shop.test/", { headers: { cookie: cookieOf(d) } }));
  ok(r.status === 200 && /^anteroom_shop=.+~/.test(r.headers.get("set-cookie") ?? ""),
    `${alg}: withAnteroom() adds the refreshed cookie to the handler's Response`);
  clock.t = Date.now() / 1000;
  for (const t of [a, b, d]) await api(base, "DELETE", `/v1/rooms/shop/tickets/${t.ticket}`);
}

let server;
try {
  const bad = (o, what) => {
    let threw = false;
    try { anteroom(o); } catch (e) { threw = /anteroom-connector: /.test(e.message); }
    ok(threw, "bad configuration throws: " + what);
  };
  bad({ alg: "HS256", secret: SECRET }, "no room");
  bad({ room: "shop" }, "HS256 without secret");
  bad({ room: "shop", alg: "ES256" }, "ES256 without anteroom_url");
  bad({ room: "shop", secret: SECRET, verify_key: VERIFY }, "verify_key without anteroom_url");

  // HS256.
  server = await start(["--token-alg", "HS256"]);
  const hsOpts = { room: "shop", alg: "HS256", secret: SECRET, anteroom_url: server.base };
  const a = await common("HS256", server.base, hsOpts);
  const mw = anteroom({ ...hsOpts, now });
  const { kid, ...header } = parts(a.token)[0];
  ok(await admits(mw, `anteroom_shop=${hs256(header, a.claims, SECRET)}~${a.key}`),
    "HS256: (a kid-less token signed here with the secret admits: the signer below is right)");
  ok(!(await admits(mw, `anteroom_shop=${hs256({ ...header, kid }, a.claims, SECRET + "x")}~${a.key}`)),
    "HS256: a token signed with another secret is refused");
  const ec = generateKeyPairSync("ec", { namedCurve: "P-256" });
  ok(!(await admits(mw, `anteroom_shop=${es256({ alg: "ES256", typ: "JWT", kid }, a.claims, ec.privateKey)}~${a.key}`)),
    "HS256: an ES256 token is refused (the algorithm is pinned)");
  await refresh("HS256", server.base, hsOpts);
  await stop(server);

  // ES256, the key created in the data dir.
  const dir = join(work, "es256");
  server = await start(["--token-alg", "ES256", "--data-dir", dir]);
  const { port } = server;
  const esOpts = { room: "shop", alg: "ES256", anteroom_url: server.base, jwks_max_age: 60 };
  const old = await common("ES256", server.base, esOpts);
  const esMw = anteroom({ ...esOpts, now });
  const oldKid = parts(old.token)[0].kid;
  const jwks = await api(server.base, "GET", "/.well-known/jwks.json");
  const pem = createPublicKey({ key: jwks.keys[0], format: "jwk" }).export({ type: "spki", format: "pem" });
  ok(!(await admits(esMw, `anteroom_shop=${hs256({ alg: "HS256", typ: "JWT", kid: oldKid }, old.claims, pem)}~${old.key}`)),
    "ES256: an HS256 token keyed with the public key's PEM is refused (algorithm confusion)");
  const mine = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const forged = (kid) => `anteroom_shop=${es256({ alg: "ES256", typ: "JWT", kid }, old.claims, mine.privateKey)}~${old.key}`;
  ok(!(await admits(esMw, forged(oldKid))), "ES256: a token signed by another EC key (the server's kid) is refused");
  const fake = http.createServer((q, s) => s.end(JSON.stringify({ keys: [{
    ...mine.publicKey.export({ format: "jwk" }), kid: "mine", alg: "ES256", use: "sig" }] })));
  await new Promise((r) => fake.listen(0, "127.0.0.1", r));
  const trusting = anteroom({ ...esOpts, now, anteroom_url: `http://127.0.0.1:${fake.address().port}` });
  ok(await admits(trusting, forged("mine")), "ES256: (the forger's token admits where its key is the JWKS)");
  fake.close();

  // A flood of made-up kids costs at most one JWKS fetch per jwks_min_interval.
  const t0 = clock.t;
  const fetches = esMw.core.jwks.fetches;
  for (let i = 0; i < 5; i++) await admits(esMw, forged("made-up-" + i));
  ok(esMw.core.jwks.fetches === fetches, "ES256: made-up kids within 10 s of a fetch fetch nothing");

  // Rotation: a new key, the old one as previous; same port, so the same connector.
  await stop(server);
  const newPem = join(work, "new.pem");
  execFileSync("openssl", ["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", newPem]);
  server = await start(["--token-alg", "ES256", "--data-dir", dir, "--token-key", newPem,
    "--token-key-previous", join(dir, "token-key.pem")], port);
  await api(server.base, "PUT", "/v1/rooms/shop", { capacity: 5 }, ADMIN);
  const rotated = await admitted(server.base, "shop");
  ok(parts(rotated.token)[0].kid !== oldKid, "ES256: after the restart tokens carry the new kid");
  ok(!(await admits(esMw, cookieOf(rotated))), "ES256: (within 10 s of the last fetch the new kid is not fetched yet)");
  clock.t = t0 + 11;
  ok(await admits(esMw, cookieOf(rotated)) && esMw.core.jwks.fetches === fetches + 1,
    "ES256: a new-key token verifies: the unknown kid fetched the JWKS again, once");
  ok(await admits(esMw, cookieOf(old)), "ES256: an old-key token still verifies (previous key in the JWKS)");
  for (let i = 0; i < 5; i++) await admits(esMw, forged("made-up-again-" + i));
  clock.t = t0 + 22;
  await admits(esMw, forged("made-up-later"));
  ok(esMw.core.jwks.fetches === fetches + 2, "ES256: made-up kids: one fetch per interval at most");
  await refresh("ES256", server.base, esOpts);

  // The rotation over: once the cached JWKS is older than jwks_max_age (60 s here) it is
  // fetched again, and the old kid is gone.
  await stop(server);
  server = await start(["--token-alg", "ES256", "--data-dir", dir, "--token-key", newPem], port);
  clock.t = t0 + 22 + 61;
  ok(!(await admits(esMw, cookieOf(old))), "ES256: after the previous key left the JWKS its tokens are refused");
  ok(await admits(esMw, cookieOf(rotated)), "ES256: (the new key's tokens still verify)");
  console.log(`node connector: ${checks} checks passed`);
} catch (e) {
  console.error("FAIL: " + e.message);
  process.exitCode = 1;
} finally {
  if (server) await stop(server);
  app.close();
}
