// A real browser on the waiting page: headless Debian chromium (driven by playwright-core,
// never a downloaded browser) joins, shows its position, keeps it across a reload, and is
// sent on with its admission cookie the moment the operator admits it.
// usage: node tests/browser/wait_page.mjs PATH/TO/anteroom [SCREENSHOT.png]
import { rmSync } from "node:fs";
import { launchChromium, startServer } from "./lib.mjs";

const [binary, screenshot] = process.argv.slice(2);
const KEY = "browser-test-admin-key";
let passed = 0;
const pass = (what) => { passed++; console.log("PASS: " + what); };
const fail = (what) => { throw new Error(what); };

const { server, base, dataDir } = await startServer(binary, KEY, ["--push-interval", "100"]);
const admin = (method, path, body) => fetch(base + path, {
  method, headers: { Authorization: "Bearer " + KEY }, body: body && JSON.stringify(body) });

let browser;
try {
  await admin("PUT", "/v1/rooms/show", { capacity: 5, admission: "manual" });
  for (const user of ["early-1", "early-2"]) {
    await fetch(base + "/v1/rooms/show/tickets", { method: "POST", body: JSON.stringify({ user }) });
  }
  browser = await launchChromium();
  const context = await browser.newContext({ locale: "en-US", viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  await page.goto(base + "/wait/show?return=%2Fhealthz");
  await page.waitForFunction(() => document.getElementById("position").textContent === "3", null, { timeout: 10000 });
  if ((await page.textContent("#ahead")) !== "2") fail("people ahead is not 2");
  if (!(await page.textContent("body")).includes("Your place in line")) fail("no English text");
  pass("the page shows position 3 with 2 people ahead");
  if (screenshot) await page.screenshot({ path: screenshot });

  await page.reload();
  await page.waitForFunction(() => document.getElementById("position").textContent === "3", null, { timeout: 10000 });
  const rooms = await (await admin("GET", "/v1/rooms/show")).json();
  if (rooms.totals.joined !== 3) fail("a reload made a new ticket: joined = " + rooms.totals.joined);
  pass("a reload keeps the place");

  await admin("POST", "/v1/rooms/show/admit", { count: 1 });
  await page.waitForFunction(() => document.getElementById("position").textContent === "2", null, { timeout: 10000 });
  pass("the position moves when someone ahead is admitted");

  await admin("POST", "/v1/rooms/show/admit", { count: 2 });
  await page.waitForURL(base + "/healthz", { timeout: 10000 });
  const cookie = (await context.cookies()).find((c) => c.name === "anteroom_show");
  if (!cookie || !cookie.value.includes("~")) fail("no admission cookie with its key: " + (cookie && cookie.value));
  // The page binds its ticket to a key of its own: the token counts only with it.
  const alone = await fetch(base + "/v1/gate/show", {
    headers: { Cookie: "anteroom_show=" + cookie.value.split("~")[0] } });
  if (alone.status !== 401) fail("the gate let the token in without its key: " + alone.status);
  const gate = await fetch(base + "/v1/gate/show", { headers: { Cookie: "anteroom_show=" + cookie.value } });
  if (gate.status !== 204) fail("the gate refuses the cookie: " + gate.status);
  if (!cookie.httpOnly) fail("the admission cookie is readable by scripts");
  pass("admitted: the server set the cookie (HttpOnly) and the page went to the return address");

  // The review's finding: a stale HttpOnly cookie (the room was reset) could not be replaced
  // by the page's script, so the visitor bounced. Now the server sets the new one.
  await admin("DELETE", "/v1/rooms/show");
  await admin("PUT", "/v1/rooms/show", { capacity: 5 });
  await page.goto(base + "/wait/show?return=%2Fhealthz");
  await page.waitForURL(base + "/healthz", { timeout: 10000 });
  const renewed = (await context.cookies()).find((c) => c.name === "anteroom_show");
  if (!renewed || renewed.value === cookie.value) fail("the stale cookie was not replaced");
  const gate2 = await fetch(base + "/v1/gate/show", { headers: { Cookie: "anteroom_show=" + renewed.value } });
  if (gate2.status !== 204) fail("the gate refuses the renewed cookie: " + gate2.status);
  pass("after a room reset the new admission replaces the old cookie");

  // A service that keeps sending the visitor back (here /service, which refuses whatever it
  // gets and redirects to the waiting page) must not make the page loop: after three tries
  // it says what happened.
  await admin("PUT", "/v1/rooms/bounce", { capacity: 5 });
  const refusing = await browser.newContext({ locale: "en-US" });
  await refusing.route(base + "/service", (route) => route.fulfill({
    status: 302, headers: { Location: base + "/wait/bounce?return=%2Fservice" } }));
  const bouncing = await refusing.newPage();
  let loads = 0;
  bouncing.on("load", () => { loads++; });
  await bouncing.goto(base + "/wait/bounce?return=%2Fservice");
  await bouncing.waitForFunction(() => (document.getElementById("message")?.textContent || "").includes("sent you back"),
    null, { timeout: 15000 });
  const settled = loads;
  await bouncing.waitForTimeout(1500);
  if (loads !== settled || loads > 5) fail("the page kept reloading: " + loads + " loads");
  if (await bouncing.isHidden("#retry")) fail("no way to try again");
  const kept = await bouncing.evaluate(() => [localStorage.getItem("anteroom:bounce:key"),
    localStorage.getItem("anteroom:bounce:ticket"), localStorage.getItem("anteroom:bounce:user")]);
  if (!/^[0-9a-f]{64}$/.test(kept[0] || "")) fail("the key is not 32 random bytes: " + kept[0]);
  if (!/^[A-Za-z0-9_-]{27}$/.test(kept[1] || "")) fail("the page keeps no ticket: " + kept[1]);
  if (kept[2] !== null) fail("the page named a user: " + kept[2]);
  pass("a service that sends the visitor back stops the page after three tries, saying so");

  // A room that admits nobody by itself: in "show" (auto, room to spare) the page could be
  // admitted and gone before its waiting text was looked for.
  await admin("PUT", "/v1/rooms/hangul", { capacity: 5, admission: "manual" });
  const ko = await (await browser.newContext({ locale: "ko-KR" })).newPage();
  await ko.goto(base + "/wait/hangul");
  await ko.waitForFunction(() => document.body.textContent.includes("나의 대기 순번"), null, { timeout: 10000 });
  pass("a Korean browser gets the Korean page");

  // No room of that name: the page says so (heading and tab title alike), shows no place
  // and offers no notification, rather than "You are in line" over a retry message.
  const none = await (await browser.newContext({ locale: "en-US" })).newPage();
  await none.goto(base + "/wait/nosuchroom");
  await none.waitForFunction(() => (document.getElementById("message")?.textContent || "").includes("no waiting room"),
    null, { timeout: 10000 });
  const said = await none.evaluate(() => [document.getElementById("title").textContent, document.title,
    document.getElementById("position").textContent, document.getElementById("notify").hidden]);
  if (said[0] !== "Closed" || said[1] !== "Closed") fail("heading and tab title: " + said.slice(0, 2));
  if (said[2] !== "-" || said[3] !== true) fail("a place or the notify button shows: " + said.slice(2));
  pass("a room that does not exist is said so, in the heading and the tab title");
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
