// The waiting page's policy states in a real browser (headless Debian chromium driven by
// playwright-core): a scheduled sale's pre-queue with its countdown, the draw at the start
// (the page's support code is in the published order), the system notification on admission,
// the random ("draw"), queue_all ("paused"), reject ("closed") and passthrough (straight in)
// pages, a full line ("refused", in English and Korean), and a branded room
// (docs/branding.md) in English and Korean.
// usage: node tests/browser/policies.mjs PATH/TO/anteroom [SCREENSHOT_DIR]
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launchChromium, startServer } from "./lib.mjs";

const [binary, shotArg] = process.argv.slice(2);
const KEY = "browser-policies-admin-key";
const shotDir = shotArg || mkdtempSync(join(tmpdir(), "anteroom-shots-"));
mkdirSync(shotDir, { recursive: true });
let passed = 0;
const pass = (what) => { passed++; console.log("PASS: " + what); };
const fail = (what) => { throw new Error(what); };
const shot = async (page, name) => {
  const path = join(shotDir, name + ".png");
  await page.screenshot({ path });
  console.log("screenshot: " + path);
};

const { server, base, dataDir } = await startServer(binary, KEY, ["--push-interval", "100"]);
const admin = async (method, path, body) => {
  const r = await fetch(base + path, {
    method, headers: { Authorization: "Bearer " + KEY }, body: body && JSON.stringify(body) });
  if (!r.ok) fail(`${method} ${path}: ${r.status} ${await r.text()}`);
  return r;
};
const joinRoom = async (room, user) => {
  const r = await fetch(base + `/v1/rooms/${room}/tickets`, { method: "POST", body: JSON.stringify({ user }) });
  return r.json();
};
const phaseIs = (page, phase, timeout = 10000) => page.waitForFunction(
  (p) => document.body.dataset.phase === p, phase, { timeout }).catch(async () => {
  fail(`phase did not become "${phase}" (it is "${await page.evaluate(() => document.body.dataset.phase)}",` +
    ` message "${await page.textContent("#message")}")`);
});

// Records each system notification the page makes, in sessionStorage too, so the record
// survives the page going on to the return address.
const recordNotifications = () => {
  window.__notes = JSON.parse(sessionStorage.getItem("__notes") || "[]");
  class Recorded {
    constructor(title, options) {
      window.__notes.push({ title, body: options && options.body });
      sessionStorage.setItem("__notes", JSON.stringify(window.__notes));
    }
    static get permission() { return "granted"; }
    static requestPermission() { return Promise.resolve("granted"); }
  }
  window.Notification = Recorded;
};

let browser;
try {
  browser = await launchChromium();

  // 1. A scheduled sale: one admitted visitor holds the only slot before the event is set.
  await admin("PUT", "/v1/rooms/drop", { capacity: 1 });
  const holder = await joinRoom("drop", "holder-1");
  if (holder.status !== "ALLOWED") fail("the holder was not admitted: " + JSON.stringify(holder));
  const now = Date.now();
  await admin("PUT", "/v1/rooms/drop/event", {
    prequeue_at: new Date(now - 1000).toISOString(), start_at: new Date(now + 4000).toISOString(),
    end_at: null, shuffle: true });
  // The server moves the event along on its own tick (every 100 ms to 1 s): wait, bounded,
  // until the pre-queue is open, so the page's join is a pre-queue join.
  for (let waited = 0; ; waited += 50) {
    const ev = await (await admin("GET", "/v1/rooms/drop/event")).json();
    if (ev.phase === "prequeue") break;
    if (waited > 3000) fail("the event did not reach its pre-queue: " + JSON.stringify(ev));
    await new Promise((r) => setTimeout(r, 50));
  }

  const context = await browser.newContext({ locale: "en-US", viewport: { width: 390, height: 844 } });
  await context.grantPermissions(["notifications"], { origin: base });
  await context.addInitScript(recordNotifications);
  const page = await context.newPage();
  await page.goto(base + "/wait/drop?return=%2Fdone");
  await phaseIs(page, "prequeue");
  if (await page.isHidden("#countdown")) {
    const intl = await page.evaluate(() => {
      try {
        new Date().toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short", timeZoneName: "short" });
        return "does not throw";
      } catch (e) { return "throws: " + e.message; }
    });
    fail(`no countdown in the pre-queue (message: "${await page.textContent("#message")}";` +
      ` the page's date format with dateStyle + timeZoneName ${intl})`);
  }
  const countdown = await page.textContent("#countdown");
  if (!countdown.startsWith("Opens in")) fail("countdown text: " + countdown);
  if (!(await page.textContent("#message")).includes("The sale opens at")) fail("no opening time");
  if ((await page.textContent("#position")) !== "-") fail("a position before the start");
  const refText = await page.textContent("#ref");
  const ref = (refText.match(/^Support code: ([0-9a-f]{16})$/) || [])[1];
  if (!ref) fail("support code: " + refText);
  pass(`pre-queue: "${countdown}", support code ${ref}`);
  await shot(page, "1-prequeue");

  await phaseIs(page, "line", 15000);
  await page.waitForFunction(() => /^\d+$/.test(document.getElementById("position").textContent),
    null, { timeout: 5000 }).catch(() => fail("no numeric position after the start"));
  await page.waitForSelector("#drawn", { state: "visible", timeout: 5000 })
    .catch(() => fail("the draw link is not shown after the start"));
  // The event's own link (its commitment in it: a URL a cache may keep for good).
  await page.waitForFunction(() => (document.getElementById("draw-link").getAttribute("href") || "")
    .includes("?commitment="), null, { timeout: 5000 })
    .catch(async () => fail("draw link: " + await page.getAttribute("#draw-link", "href")));
  const href = await page.getAttribute("#draw-link", "href");
  if (!/^\/v1\/rooms\/drop\/event\/draw\?commitment=[0-9a-f]{64}$/.test(href)) fail("draw link: " + href);
  const draw = await (await fetch(base + href)).json();
  if (!Array.isArray(draw.order) || !draw.order.includes(ref)) fail("the page's ref is not in the draw: " + JSON.stringify(draw));
  if (!/^[0-9a-f]{64}$/.test(draw.seed_sha256 || "")) fail("no seed commitment in the draw");
  pass(`after the start: position ${await page.textContent("#position")}, ref in the draw of ${draw.order.length}`);
  await shot(page, "2-line-after-draw");

  const left = await fetch(base + `/v1/rooms/drop/tickets/${holder.ticket}`, { method: "DELETE" });
  if (!left.ok) fail("the holder could not leave: " + left.status);
  const cookieCall = page.waitForRequest((r) => r.method() === "POST" && r.url().endsWith("/cookie"), { timeout: 15000 })
    .catch(() => fail("the page never asked for its admission cookie"));
  await cookieCall;
  await page.waitForURL(base + "/done", { timeout: 10000 }).catch(() => fail("the page did not go to /done"));
  const notes = await page.evaluate(() => JSON.parse(sessionStorage.getItem("__notes") || "[]"));
  if (!notes.some((n) => n.title === "It is your turn!")) fail("no notification: " + JSON.stringify(notes));
  if (!(await context.cookies()).some((c) => c.name === "anteroom_drop")) fail("no admission cookie");
  pass("admitted: notification \"It is your turn!\", cookie set, sent to the return address");

  // 2. The mode pages.
  await admin("PUT", "/v1/rooms/m_random", { capacity: 1, mode: "random" });
  const rHolder = await joinRoom("m_random", "holder-r");
  if (rHolder.status !== "ALLOWED") fail("the random room's holder was not admitted");
  await admin("PUT", "/v1/rooms/m_paused", { capacity: 1, mode: "queue_all" });
  await admin("PUT", "/v1/rooms/m_closed", { capacity: 1, mode: "reject" });
  // A full line (max_waiting): no place, said as such, not "You are in line".
  await admin("PUT", "/v1/rooms/m_full", { capacity: 1, max_waiting: 1 });
  await joinRoom("m_full", "holder-f");
  if ((await joinRoom("m_full", "waiter-f")).status !== "WAITING") fail("m_full: no one waits");
  const modes = [
    ["m_random", "draw", "You are in the draw", "?", "3-draw"],
    ["m_paused", "paused", "The line is paused", null, "4-paused"],
    ["m_closed", "closed", "This room is closed or sold out.", "-", "5-closed"],
    ["m_full", "refused", "The line is full right now.", "-", "5-full"],
  ];
  const other = await browser.newContext({ locale: "en-US", viewport: { width: 390, height: 844 } });
  for (const [room, phase, text, position, name] of modes) {
    const p = await other.newPage();
    await p.goto(base + `/wait/${room}?return=%2Fdone`);
    await phaseIs(p, phase);
    const message = await p.textContent("#message");
    if (!message.includes(text)) fail(`${room}: message "${message}"`);
    if (!(await p.isVisible("#message"))) fail(`${room}: the message is not visible`);
    if (position !== null && (await p.textContent("#position")) !== position) fail(`${room}: position ${await p.textContent("#position")}`);
    if (p.url() !== base + `/wait/${room}?return=%2Fdone`) fail(`${room}: the page left`);
    if (phase === "refused" && (await p.textContent("#title")) !== "You are not in line yet") {
      fail(`${room}: title "${await p.textContent("#title")}"`);
    }
    pass(`${room}: phase ${phase}, "${message}"`);
    await shot(p, name);
    await p.close();
  }
  {  // ... and in Korean, the page's own words, not the server's English
    const ko = await browser.newContext({ locale: "ko-KR", viewport: { width: 390, height: 844 } });
    const p = await ko.newPage();
    await p.goto(base + "/wait/m_full?return=%2Fdone");
    await phaseIs(p, "refused");
    const message = await p.textContent("#message");
    if (!message.includes("대기열이 가득")) fail(`m_full ko: message "${message}"`);
    pass(`m_full in Korean: "${message}"`);
    await shot(p, "5-full-ko");
    await ko.close();
  }
  // The fourth mode: passthrough lets the visitor straight in, past a full room.
  await admin("PUT", "/v1/rooms/m_pass", { capacity: 1 });
  await joinRoom("m_pass", "holder-p");
  await admin("PUT", "/v1/rooms/m_pass", { mode: "passthrough" });
  {
    const p = await other.newPage();
    const cookie = p.waitForRequest((r) => r.url().includes("/v1/rooms/m_pass/tickets/") &&
      r.url().endsWith("/cookie"), { timeout: 10000 }).catch(() => fail("m_pass: never admitted"));
    await p.goto(base + "/wait/m_pass?return=%2Fdone");
    await cookie;
    await p.waitForURL(base + "/done", { timeout: 10000 }).catch(() => fail("m_pass: not sent on"));
    pass("m_pass: admitted at once past a full room, sent to the return address");
    await p.close();
  }

  // 3. A branded room: the operator's title, message, colors and Korean texts.
  await admin("PUT", "/v1/rooms/brand", { capacity: 1 });
  await joinRoom("brand", "holder-b");
  await admin("PUT", "/v1/rooms/brand/page", {
    title: "Concert <2026>", message: "Doors open at 19:00",
    colors: { background: "#0b1020", accent: "#ff0066" },
    texts: { ko: { title: "콘서트 대기실", keep: "이 창을 닫지 마세요." } } });
  for (const [locale, title, name] of [["en-US", "Concert <2026>", "6-branded"],
                                       ["ko-KR", "콘서트 대기실", "7-branded-ko"]]) {
    const ctx = await browser.newContext({ locale, viewport: { width: 390, height: 844 } });
    const p = await ctx.newPage();
    await p.goto(base + "/wait/brand?return=%2Fdone");
    await phaseIs(p, "line");
    if ((await p.textContent("#title")) !== title) fail(`brand ${locale}: title "${await p.textContent("#title")}"`);
    if ((await p.title()) !== title) fail(`brand ${locale}: document title "${await p.title()}"`);
    if ((await p.textContent("#brand-message")) !== "Doors open at 19:00") fail(`brand ${locale}: no message`);
    const bg = await p.evaluate(() => getComputedStyle(document.body).backgroundColor);
    if (bg !== "rgb(11, 16, 32)") fail(`brand ${locale}: background ${bg}`);
    if (locale === "ko-KR" && (await p.textContent("#message")) !== "이 창을 닫지 마세요.") {
      fail(`brand ko: message "${await p.textContent("#message")}"`);
    }
    pass(`branded room in ${locale}: title, message, colors` + (locale === "ko-KR" ? ", Korean text" : ""));
    await shot(p, name);
    await ctx.close();
  }
  console.log(`browser: ${passed} passed, 0 failed`);
} catch (e) {
  console.error("FAIL: " + e.message);
  console.log(`browser: ${passed} passed, 1 failed`);
  process.exitCode = 1;
} finally {
  if (browser) await browser.close();
  server.kill("SIGTERM");
  rmSync(dataDir, { recursive: true, force: true });
}
