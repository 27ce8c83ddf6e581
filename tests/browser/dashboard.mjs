// The operator's dashboard (GET /admin) in a real browser (headless Debian chromium driven by
// playwright-core): a wrong key is refused, the right one logs in; the counts of a room move
// while the loadgen feeds it; admitting 5 with a click admits exactly five tickets; pause and
// resume switch the room's mode; the capacity is edited; the editor makes a room; the charts
// draw; the page switches to Korean; screenshots at desktop and phone size.
// usage: node tests/browser/dashboard.mjs PATH/TO/anteroom PATH/TO/anteroom-loadgen [SCREENSHOT_DIR]
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launchChromium, startServer } from "./lib.mjs";

const [binary, loadgen, shotArg] = process.argv.slice(2);
const KEY = "browser-dashboard-admin-key";
const shotDir = shotArg || mkdtempSync(join(tmpdir(), "anteroom-shots-"));
mkdirSync(shotDir, { recursive: true });
let passed = 0;
const pass = (what) => { passed++; console.log("PASS: " + what); };
const fail = (what) => { throw new Error(what); };
const shot = async (page, name) => {
  const path = join(shotDir, name + ".png");
  await page.screenshot({ path, fullPage: true });
  console.log("screenshot: " + path);
};

const { server, base, dataDir } = await startServer(binary, KEY);
const admin = async (method, path, body) => {
  const r = await fetch(base + path, {
    method, headers: { Authorization: "Bearer " + KEY }, body: body && JSON.stringify(body) });
  if (!r.ok) fail(`${method} ${path}: ${r.status} ${await r.text()}`);
  return r.json();
};
const rowCell = (page, room, cls) => page.textContent(`#rooms tr[data-room="${room}"] td.${cls}`);

let browser, lg;
try {
  // A manual room with ten waiting: what the dashboard admits is exactly what it asked for.
  await admin("PUT", "/v1/rooms/manual", { admission: "manual", capacity: 0 });
  for (let i = 0; i < 10; ++i) {
    await fetch(base + "/v1/rooms/manual/tickets", { method: "POST", body: "{}" });
  }
  browser = await launchChromium();
  const context = await browser.newContext({ locale: "en-US", viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  // The wrong key's 401 is logged by the browser as a failed load; anything else is an error.
  page.on("console", (m) => {
    if (m.type() === "error" && !m.text().includes("status of 401")) errors.push(m.text());
  });
  page.on("dialog", (d) => d.accept());
  await page.goto(base + "/admin");

  // A wrong key: refused, nothing shown, nothing kept.
  await page.fill("#key", "not-the-admin-key-at-all");
  await page.click("#login-form button[type=submit]");
  await page.waitForFunction(() => document.getElementById("login-error").textContent.length > 0);
  if (!(await page.isHidden("#board"))) fail("the board shows after a wrong key");
  if (await page.evaluate(() => sessionStorage.getItem("anteroom_admin_key"))) fail("a wrong key was kept");
  pass("a wrong key is refused: " + (await page.textContent("#login-error")));

  await page.fill("#key", KEY);
  await page.click("#login-form button[type=submit]");
  await page.waitForSelector('#rooms tr[data-room="manual"]', { timeout: 10000 });
  if ((await page.textContent("#conn")) !== "live") fail("the stream is not live");
  pass("the right key logs in; the stream is live and lists the rooms");

  // The loadgen feeds another room; its counts move on the dashboard.
  lg = spawn(loadgen, ["surge", "--target", base.replace("http://", ""), "--admin-key", KEY,
    "--room", "load", "--keep-room", "--users", "300", "--arrival-rate", "30", "--capacity", "10",
    "--stay", "1", "--transport", "poll", "--quiet", "--out", join(dataDir, "lg")],
    { stdio: "ignore" });
  await page.waitForSelector('#rooms tr[data-room="load"]', { timeout: 15000 });
  const seen = new Set();
  const joins = [];
  for (let i = 0; i < 40 && (seen.size < 3 || !joins.some((j) => j > 0)); ++i) {
    seen.add(await rowCell(page, "load", "active") + "|" + await rowCell(page, "load", "waiting"));
    joins.push(Number(await page.textContent('#rooms tr[data-room="load"] td:nth-child(5)')));
    await page.waitForTimeout(500);
  }
  if (seen.size < 3) fail("the load room's counts did not move: " + [...seen].join(", "));
  if (!joins.some((j) => j > 0)) fail("no joins per second shown while the loadgen joined");
  pass(`the load room's counts moved (${seen.size} different readings, up to ${Math.max(...joins)} joins/s)`);

  // Admit 5 with a click.
  await page.click('#rooms tr[data-room="manual"]');
  await page.waitForSelector("#detail:not([hidden])");
  await page.fill("#admit-n", "5");
  await page.click("#f-admit button[type=submit]");
  await page.waitForFunction(() => document.getElementById("msg").textContent.includes("5"));
  let room = await admin("GET", "/v1/rooms/manual");
  if (room.totals.admitted !== 5 || room.waiting !== 5) {
    fail(`admit 5 admitted ${room.totals.admitted}, ${room.waiting} still waiting`);
  }
  await page.waitForFunction(() =>
    document.querySelector('#rooms tr[data-room="manual"] td.active').textContent.startsWith("5 "));
  pass("admit 5 by a click: the room admitted exactly five, and the table shows them");

  // Pause and resume (offered only while paused).
  if (!(await page.isDisabled("#resume"))) fail("resume is offered for a room that is not paused");
  await page.click("#pause");
  await page.waitForFunction(() => document.querySelector('#rooms tr[data-room="manual"] .mode')
    .textContent === "queue_all");
  room = await admin("GET", "/v1/rooms/manual");
  if (room.mode !== "queue_all") fail("pause left the mode " + room.mode);
  await page.waitForFunction(() => !document.getElementById("resume").disabled);
  await page.click("#resume");
  await page.waitForFunction(() => document.querySelector('#rooms tr[data-room="manual"] .mode')
    .textContent === "fifo");
  room = await admin("GET", "/v1/rooms/manual");
  if (room.mode !== "fifo") fail("resume left the mode " + room.mode);
  pass("pause set queue_all, resume set fifo back");

  // Capacity.
  await page.fill("#capacity", "7");
  await page.click("#f-capacity button[type=submit]");
  await page.waitForFunction(() =>
    document.querySelector('#rooms tr[data-room="manual"] td.active').textContent === "5 / 7");
  room = await admin("GET", "/v1/rooms/manual");
  if (room.capacity !== 7) fail("capacity is " + room.capacity);
  pass("capacity edited to 7");

  // The room editor makes a room, and the detail follows it.
  await page.fill("#ed-name", "fresh");
  await page.fill("#ed-body", '{"capacity": 3, "admission": "manual"}');
  await page.click("#f-editor button[type=submit]");
  await page.waitForFunction(() => document.getElementById("d-name").textContent === "fresh" &&
    document.getElementById("capacity").value === "3", null, { timeout: 10000 });
  room = await admin("GET", "/v1/rooms/fresh");
  if (room.capacity !== 3 || room.admission !== "manual") fail("the editor saved " + JSON.stringify(room));
  pass("the room editor made a room, and the detail shows it");

  // The load room's charts: the history from the server, then a sample a second.
  await page.click('#rooms tr[data-room="load"]');
  await page.waitForFunction(() => document.querySelectorAll("#c-line polyline").length === 2 &&
    document.querySelector("#c-line polyline").getAttribute("points").split(" ").length > 3,
    null, { timeout: 10000 });
  pass("the charts draw the room's history");
  await shot(page, "dashboard-desktop");

  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(300);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth);
  if (overflow > 392) fail("the phone layout is " + overflow + " px wide");
  await shot(page, "dashboard-phone");
  pass("phone size: no sideways scrolling");

  await page.click("#lang");
  const title = await page.textContent("header h1");
  if (!title.includes("대시보드")) fail("no Korean after the switch: " + title);
  await shot(page, "dashboard-phone-ko");
  pass("the page switches to Korean");

  if (errors.length) fail("the page logged errors: " + errors.join("; "));
  pass("no script errors, no CSP violations");
  console.log(`${passed} checks passed`);
} finally {
  if (lg) lg.kill("SIGKILL");
  if (browser) await browser.close();
  server.kill("SIGKILL");
  rmSync(dataDir, { recursive: true, force: true });
}
