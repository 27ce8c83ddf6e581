// Through nginx (tests/nginx/run.sh starts it, the origin and anteroom, then runs this): a
// real browser on the waiting page of a room that asks for a 16-bit proof of work solves it
// (Web Worker, WebCrypto) and joins; once admitted it reaches the origin with its two
// cookies (the token and the key it is bound to, both HttpOnly); the token copied alone into
// another browser gets the waiting page, not the origin. No CSP violation on the way.
// usage: node tests/browser/bound.mjs NGINX_URL ANTEROOM_URL ADMIN_KEY [SCREENSHOT.png]
import { chromium } from "playwright-core";

const [base, anteroom, KEY, screenshot] = process.argv.slice(2);
let passed = 0;
const pass = (what) => { passed++; console.log("PASS: " + what); };
const fail = (what) => { throw new Error(what); };
const admin = async (method, path, body) => {
  const r = await fetch(anteroom + path, {
    method, headers: { Authorization: "Bearer " + KEY }, body: body && JSON.stringify(body) });
  if (!r.ok) fail(method + " " + path + ": " + r.status + " " + (await r.text()));
  return r.status === 204 ? null : r.json();
};

const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
try {
  await admin("PUT", "/v1/rooms/demo", { capacity: 5, admission: "manual", pow_difficulty: 16 });
  const before = (await admin("GET", "/v1/rooms/demo")).totals.joined;
  const context = await browser.newContext({ locale: "en-US", viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  const violations = [];
  page.on("console", (m) => { if (/Content Security Policy|Refused to/.test(m.text())) violations.push(m.text()); });
  const challenges = [];
  page.on("request", (r) => { if (r.url().endsWith("/challenge")) challenges.push(r.url()); });
  await page.goto(base + "/shop/");
  await page.waitForFunction(() => document.getElementById("position").textContent === "1", null, { timeout: 60000 });
  const room = await admin("GET", "/v1/rooms/demo");
  if (room.totals.joined !== before + 1) fail("joined " + (room.totals.joined - before) + " times, not once");
  if (challenges.length !== 1) fail("fetched " + challenges.length + " challenges, not one");
  pass("the page solved a 16-bit proof of work and joined (position 1)");
  if (screenshot) await page.screenshot({ path: screenshot });

  await admin("POST", "/v1/rooms/demo/admit", { count: 1 });
  await page.waitForFunction(() => document.body.textContent.includes("ORIGIN OK"), null, { timeout: 20000 });
  pass("admitted, the browser reached the origin through the gate");

  const cookies = await context.cookies(base);
  const admission = cookies.find((c) => c.name === "anteroom_demo");
  if (!admission) fail("cookies: " + cookies.map((c) => c.name).join(", "));
  const [tokenOnly, key] = admission.value.split("~");
  if (!key) fail("the admission cookie does not carry the key: " + admission.value);
  if (!admission.httpOnly) fail("the admission cookie is readable by scripts");
  if (admission.sameSite !== "Lax") fail("the cookie is not SameSite=Lax");
  pass("the token and the key it is bound to travel in one HttpOnly, SameSite=Lax cookie");

  // The token copied alone to another browser: the gate refuses it, nginx shows the line.
  const thief = await browser.newContext();
  await thief.addCookies([{ name: admission.name, value: tokenOnly, url: base }]);
  const stolen = await thief.newPage();
  await stolen.goto(base + "/shop/");
  if ((await stolen.textContent("body")).includes("ORIGIN OK")) fail("a copied token reached the origin");
  if (!(await stolen.$("#position"))) fail("a copied token did not get the waiting page");
  pass("the token copied to another browser without its key gets the waiting page");

  // With the key too (the same visitor on a second device it copied both to) it works.
  const both = await browser.newContext();
  await both.addCookies([{ name: admission.name, value: admission.value, url: base }]);
  const again = await (await both.newPage()).goto(base + "/shop/");
  if (!(await again.text()).includes("ORIGIN OK")) fail("token and key together did not reach the origin");
  pass("token and key together reach the origin");

  if (violations.length) fail("CSP violations: " + violations.join(" | "));
  pass("no Content-Security-Policy violation on the page");
} finally {
  await browser.close();
}
console.log(`browser through nginx: ${passed} passed, 0 failed`);
