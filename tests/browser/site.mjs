// A real browser on a protected site through a real proxy (tests/nginx/run.sh and
// tests/caddy/run.sh start the proxy, the origin and anteroom, then run this): while the
// room has room a visitor reaches the origin at once, never seeing the waiting page; once
// it is full the next one gets the page, and is let in the moment there is room; a fetch()
// from the page gets JSON, not the page; a pass link takes staff through the full room;
// the bypassed stylesheet every page loads never makes a ticket.
// usage: node tests/browser/site.mjs SITE_URL ANTEROOM_URL ADMIN_KEY [SCREENSHOT_PREFIX]
import { launchChromium } from "./lib.mjs";

const [site, anteroom, KEY, shots] = process.argv.slice(2);
let passed = 0;
const pass = (what) => { passed++; console.log("PASS: " + what); };
const fail = (what) => { throw new Error(what); };
const admin = async (method, path, body) => {
  const r = await fetch(anteroom + path, {
    method, headers: { Authorization: "Bearer " + KEY }, body: body && JSON.stringify(body) });
  if (!r.ok) fail(method + " " + path + ": " + r.status + " " + (await r.text()));
  return r.status === 204 ? null : r.json();
};
const joined = async () => (await admin("GET", "/v1/rooms/store")).totals.joined;

const browser = await launchChromium();
try {
  await admin("PUT", "/v1/rooms/store", { capacity: 1, match: [{ path_prefix: "/store/" }],
    bypass: [{ name: "assets", path_prefix: "/static/" }] });
  const newPage = async () => (await browser.newContext({ locale: "en-US",
    viewport: { width: 1280, height: 800 } })).newPage();

  // Room to spare: the origin on the first request, the stylesheet through the bypass.
  const a = await newPage();
  const seen = [];
  a.on("response", (r) => seen.push(r.url()));
  await a.goto(site + "/store/");
  if (!(await a.textContent("body")).includes("STORE OK")) fail("the first visitor did not reach the origin");
  if (seen.some((u) => u.includes("/wait"))) fail("the first visitor saw the waiting page: " + seen.join(" "));
  const color = await a.evaluate(() => getComputedStyle(document.body).backgroundColor);
  if (color !== "rgb(1, 2, 3)") fail("the stylesheet did not load through the bypass: " + color);
  if (shots) await a.screenshot({ path: shots + "-origin.png" });
  pass("with room to spare the visitor reaches the origin at once, no waiting page");

  // Full: the next visitor gets the page.
  const b = await newPage();
  await b.goto(site + "/store/?item=7");
  await b.waitForSelector("#position", { timeout: 10000 });
  await b.waitForFunction(() => /^\d+$/.test(document.getElementById("position").textContent),
    null, { timeout: 10000 });
  if (shots) await b.screenshot({ path: shots + "-waiting.png" });
  pass("once the room is full the next visitor gets the waiting page, place " +
    (await b.textContent("#position")));

  // A script of the page asking a gated address gets JSON with the queueing status.
  const answer = await b.evaluate(async () => {
    const r = await fetch("/store/api/cart", { headers: { Accept: "application/json" } });
    return { status: r.status, type: r.headers.get("content-type"), body: await r.json() };
  });
  if (answer.status !== 429 || !answer.type.startsWith("application/json") ||
      answer.body.error.code !== "in_line" || answer.body.room !== "store") {
    fail("fetch() got " + JSON.stringify(answer));
  }
  pass("a fetch() from the page gets JSON 429 in_line, not the page");

  // Room again: the waiting visitor is let in and goes back to the address it asked for.
  await admin("PUT", "/v1/rooms/store", { capacity: 2 });
  await b.waitForURL(site + "/store/?item=7", { timeout: 15000 });
  await b.waitForFunction(() => document.body.textContent.includes("STORE OK"), null, { timeout: 10000 });
  pass("once there is room the waiting visitor is let in at the address it asked for");

  // Full again; a pass takes staff through.
  const made = await admin("POST", "/v1/rooms/store/passes", { label: "support desk",
    expires_at: new Date(Date.now() + 3600_000).toISOString(), uses: 1 });
  const staff = await newPage();
  await staff.goto(site + made.path + "&return=%2Fstore%2F");
  await staff.waitForFunction(() => document.body.textContent.includes("STORE OK"), null, { timeout: 10000 });
  const other = await newPage();
  await other.goto(site + made.path + "&return=%2Fstore%2F");  // its one use is spent
  await other.waitForSelector("#position", { timeout: 10000 });
  pass("a pass link takes staff through the full room, once");

  const tickets = await joined();
  if (tickets !== 3) fail("tickets made: " + tickets + " (two visitors and the one who waited after the pass: 3)");
  pass("the stylesheet every page loaded made no ticket (3 tickets, 3 visitors who took a place)");
  console.log(`site: ${passed} passed, 0 failed`);
} catch (e) {
  console.error("FAIL: " + e.message);
  console.log(`site: ${passed} passed, 1 failed`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
