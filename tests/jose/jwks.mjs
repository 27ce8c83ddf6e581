// ES256 admission tokens checked by a standard library: npm `jose` fetches the server's
// /.well-known/jwks.json (createRemoteJWKSet) and verifies a real admitted visitor's token
// (jwtVerify, ES256 only). Then a key rotation: the server restarts with a new --token-key and
// the old key as --token-key-previous; the JWKS lists both, old and new tokens verify.
// usage: node tests/jose/jwks.mjs PATH/TO/anteroom
import { spawn } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { calculateJwkThumbprint, createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from "jose";

const [binary] = process.argv.slice(2);
const KEY = "jose-test-admin-key-0123456789";
const dataDir = mkdtempSync(join(tmpdir(), "anteroom-jose-"));
let passed = 0;
const pass = (what) => { passed++; console.log("PASS: " + what); };
const fail = (what) => { throw new Error(what); };
const check = (ok, what) => (ok ? pass(what) : fail(what));

// Starts anteroom with `extra` flags; resolves to { base, proc } once it listens.
async function start(extra) {
  const proc = spawn(binary, ["--listen", "127.0.0.1:0", "--data-dir", dataDir, "--no-persistence",
    "--admin-key", KEY, "--token-secret", "jose-test-token-secret-0123456789abcdef", ...extra],
    { stdio: ["ignore", "pipe", "inherit"] });
  const firstLine = await new Promise((resolve, reject) => {
    createInterface({ input: proc.stdout }).once("line", resolve);
    proc.once("exit", (code) => reject(new Error("anteroom exited with " + code)));
    setTimeout(() => reject(new Error("anteroom did not start within 10 s")), 10000);
  });
  const base = firstLine.match(/^anteroom listening on (http:\/\/[\d.]+:\d+)$/)[1];
  return { base, proc };
}
async function stop(proc) {
  if (proc.exitCode !== null) return;
  const exited = new Promise((resolve) => proc.once("exit", resolve));
  proc.kill("SIGTERM");
  await exited;
}
const json = async (res) => {
  const text = await res.text();
  if (!res.ok) fail(`${res.url}: ${res.status} ${text}`);
  return JSON.parse(text);
};

// A visitor joins a manual room, the operator admits, the status read carries the token.
async function admittedToken(base, room) {
  const admin = (method, path, body) => fetch(base + path, {
    method, headers: { Authorization: "Bearer " + KEY }, body: body && JSON.stringify(body) });
  await json(await admin("PUT", `/v1/rooms/${room}`, { capacity: 1, admission: "manual" }));
  const joined = await json(await fetch(`${base}/v1/rooms/${room}/tickets`, { method: "POST", body: "{}" }));
  if (joined.status !== "WAITING" || joined.token) fail("a manual room's join should wait, without a token");
  await json(await admin("POST", `/v1/rooms/${room}/admit`, { count: 1 }));
  const status = await json(await fetch(`${base}/v1/rooms/${room}/tickets/${joined.ticket}`));
  if (status.status !== "ALLOWED" || !status.token) fail("admitted status has no token: " + JSON.stringify(status));
  return { ticket: joined.ticket, token: status.token, admin };
}

const verifyWith = (base, token) =>
  jwtVerify(token, createRemoteJWKSet(new URL(base + "/.well-known/jwks.json")),
    { issuer: "anteroom", algorithms: ["ES256"] });

let running;
try {
  // 1. A key created in the data dir, mode 0600.
  running = await start(["--token-alg", "ES256"]);
  let { base } = running;
  check((statSync(join(dataDir, "token-key.pem")).mode & 0o777) === 0o600,
    "ES256 key created in the data dir with mode 0600");
  const jwks = await json(await fetch(base + "/.well-known/jwks.json"));
  check(jwks.keys.length === 1 && jwks.keys[0].kty === "EC" && jwks.keys[0].crv === "P-256" &&
    jwks.keys[0].alg === "ES256" && !("d" in jwks.keys[0]), "the JWKS has one public P-256 key");
  check(jwks.keys[0].kid === await calculateJwkThumbprint(jwks.keys[0], "sha256"),
    "its kid is the RFC 7638 thumbprint (as jose computes it)");

  const { ticket, token, admin } = await admittedToken(base, "jose");
  const { payload, protectedHeader } = await verifyWith(base, token);
  check(protectedHeader.alg === "ES256" && protectedHeader.kid === jwks.keys[0].kid,
    "the token's header: ES256 and the key's kid");
  check(payload.sub === ticket && payload.room === "jose" && payload.exp > Date.now() / 1000,
    "jose's jwtVerify accepts the admitted visitor's token against the JWKS URL");

  // jose must refuse a tampered token, or the checks above prove nothing.
  const [h, p, s] = token.split(".");
  const other = Buffer.from(JSON.stringify({ ...payload, sub: "SOMEONE_ELSE" })).toString("base64url");
  const tampered = await verifyWith(base, `${h}.${other}.${s}`).then(() => true, () => false);
  check(!tampered, "jose refuses the same token with other claims");

  // The token from verify (a fresh one) verifies too.
  const verified = await json(await admin("POST", "/v1/rooms/jose/verify", { token }));
  check((await verifyWith(base, verified.token)).payload.sub === ticket,
    "the fresh token from verify verifies with jose");
  await stop(running.proc);

  // 2. Rotation: a new key given, the data dir's key as the previous one.
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const newKey = join(dataDir, "new-key.pem");
  writeFileSync(newKey, privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
  running = await start(["--token-alg", "ES256", "--token-key", newKey,
    "--token-key-previous", join(dataDir, "token-key.pem")]);
  base = running.base;
  const rotated = await json(await fetch(base + "/.well-known/jwks.json"));
  check(rotated.keys.length === 2 && rotated.keys[1].kid === jwks.keys[0].kid &&
    rotated.keys[0].kid !== jwks.keys[0].kid, "while rotating the JWKS lists the new key, then the old");
  check((await verifyWith(base, token)).payload.sub === ticket,
    "a token signed with the previous key still verifies against the new JWKS");
  const second = await admittedToken(base, "jose2");
  check(decodeProtectedHeader(second.token).kid === rotated.keys[0].kid &&
    (await verifyWith(base, second.token)).payload.room === "jose2",
    "new tokens are signed with the new key and verify");
  await stop(running.proc);

  // 3. Rotation over: the old key is gone from the JWKS and its tokens no longer verify.
  running = await start(["--token-alg", "ES256", "--token-key", newKey]);
  base = running.base;
  const done = await json(await fetch(base + "/.well-known/jwks.json"));
  check(done.keys.length === 1 && done.keys[0].kid === rotated.keys[0].kid,
    "after the rotation the JWKS has only the new key");
  const stale = await verifyWith(base, token).then(() => true, () => false);
  check(!stale, "a token of the dropped key no longer verifies");
  console.log(`jose test: ${passed} checks passed`);
} catch (e) {
  console.error("FAIL: " + e.message);
  process.exitCode = 1;
} finally {
  if (running) await stop(running.proc);
  rmSync(dataDir, { recursive: true, force: true });
}
