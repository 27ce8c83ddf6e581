// The waiting page's script (server/app/wait_page.cc serves it in a nonce'd <script>). What
// differs per answer (the room, where to go back to, the strings, the proof-of-work worker's
// source) comes in the JSON block #anteroom-config, never as text spliced into the script.
"use strict";
const CONFIG = JSON.parse(document.getElementById("anteroom-config").textContent);
const ROOM = CONFIG.room, RETURN_TO = CONFIG.returnTo, T = CONFIG.strings;
const POW_WORKER = CONFIG.powWorker;
const $ = (id) => document.getElementById(id);
const key = (k) => "anteroom:" + ROOM + ":" + k;
$("title").textContent = T.title; $("label").textContent = T.position;
$("progress").parentElement.setAttribute("aria-label", T.progress);
$("ahead-label").textContent = T.ahead; $("eta-label").textContent = T.eta;
$("retry").textContent = T.retry; $("message").textContent = T.joining;
if (T.logo) { $("logo").src = T.logo; $("logo").hidden = false; }
if (T.brandMessage) { $("brand-message").textContent = T.brandMessage; $("brand-message").hidden = false; }
// The key the visitor's ticket is bound to: random (getRandomValues works on plain HTTP
// too), kept in this browser with the ticket's id, so a reload goes back to the same ticket
// and nobody else can use its admission. The page names no user: names are the service's.
function randomHex(bytes) {
  return Array.from(crypto.getRandomValues(new Uint8Array(bytes)),
    (b) => b.toString(16).padStart(2, "0")).join("");
}
function kept(name, bytes) {
  let v = localStorage.getItem(key(name));
  if (!v) { v = randomHex(bytes); localStorage.setItem(key(name), v); }
  return v;
}
const secret = kept("key", 32);
let source = null, timer = null, reopen = null, done = false, tick = null;

// The estimate as a rounded range: never less than the server's low end.
function fmtEta(lo, hi) {
  if (lo === null || lo === undefined) return T.unknown;
  if (hi === null || hi === undefined) hi = lo;
  if (hi < 60) {
    const a = Math.max(1, Math.round(lo / 5) * 5 || 1), b = Math.max(a + 5, Math.ceil(hi / 5) * 5);
    return T.about + a + "-" + b + T.seconds;
  }
  const step = hi < 600 ? 1 : 5;
  const a = Math.max(1, Math.floor(lo / 60 / step) * step), b = Math.max(a + step, Math.ceil(hi / 60 / step) * step);
  return T.about + a + "-" + b + T.minutes;
}
function countdown(opensAt) {
  const left = Math.max(0, Math.round((opensAt - Date.now()) / 1000));
  const h = Math.floor(left / 3600), m = Math.floor(left % 3600 / 60), sec = left % 60;
  $("countdown").textContent = T.startsIn + (h ? h + ":" : "") +
    String(m).padStart(h ? 2 : 1, "0") + ":" + String(sec).padStart(2, "0");
}
// Tells the visitor it is their turn, even in a background tab: a tone, the title flashing,
// a system notification (if they allowed it, asked on a click), a vibration on phones.
function callVisitor() {
  try {
    const ctx = new (window.AudioContext || window.webkitAudioContext)();
    const o = ctx.createOscillator(), g = ctx.createGain();
    o.frequency.value = 880; g.gain.value = 0.2; o.connect(g); g.connect(ctx.destination);
    o.start(); o.stop(ctx.currentTime + 0.4);
  } catch { /* no audio here: the other signals still come */ }
  if (navigator.vibrate) navigator.vibrate([200, 100, 200]);
  if (window.Notification && Notification.permission === "granted") {
    try { new Notification(T.turnTitle, {body: T.admitted, tag: "anteroom-" + ROOM}); } catch { /* notifications refused */ }
  }
  let on = false;
  const flash = setInterval(() => { on = !on; document.title = on ? T.turnTitle : T.title; }, 700);
  setTimeout(() => clearInterval(flash), 20000);
}
if (window.Notification && Notification.permission === "default") {
  $("notify").hidden = false;
  $("notify").textContent = T.notify;
  $("notify").onclick = () => Notification.requestPermission().then(() => { $("notify").hidden = true; });
}
// The heading and the tab's title say the same.
function heading(text) {
  $("title").textContent = text;
  document.title = text;
}
function show(s) {
  document.body.dataset.status = s.status;
  if (s.ref) $("ref").textContent = T.ref + s.ref;
  if (tick) { clearInterval(tick); tick = null; }
  $("countdown").hidden = true;
  if (s.status === "WAITING") {
    if (s.opens_at) {  // the pre-queue: no place until the start
      const opens = Date.parse(s.opens_at);
      localStorage.setItem(key("prequeue:" + s.ticket), "1");
      document.body.dataset.phase = "prequeue";
      $("position").textContent = "-";
      $("ahead").textContent = "-";
      $("eta").textContent = "-";
      $("message").textContent = T.prequeue.replace("{time}", new Date(opens).toLocaleString(undefined,
        {year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", timeZoneName: "short"}));
      $("countdown").hidden = false;
      countdown(opens);
      tick = setInterval(() => countdown(opens), 1000);
      return;
    }
    if (s.position === null) {  // random mode: everyone waiting is in the draw
      document.body.dataset.phase = "draw";
      $("position").textContent = "?";
      $("ahead").textContent = "-";
      $("eta").textContent = "-";
      $("message").textContent = T.inDraw;
      return;
    }
    document.body.dataset.phase = s.mode === "queue_all" ? "paused" : "line";
    if (localStorage.getItem(key("prequeue:" + s.ticket))) {  // placed by the start's draw
      $("drawn").hidden = false;
      $("draw-link").textContent = T.checkDraw;
      if (!$("draw-link").href) drawLink();
    }
    const first = Number(localStorage.getItem(key("first:" + s.ticket)) || s.position);
    localStorage.setItem(key("first:" + s.ticket), String(first));
    $("position").textContent = s.position;
    $("ahead").textContent = s.position - 1;
    $("eta").textContent = s.mode === "queue_all" ? "-" : fmtEta(s.eta_seconds, s.eta_high_seconds);
    $("progress").style.width = (first > 1 ? 100 * (first - s.position) / (first - 1) : 100) + "%";
    $("message").textContent = s.mode === "queue_all" ? T.paused : T.keep;
    return;
  }
  stopWatching();
  if ((s.status === "ALLOWED" || s.status === "ACTIVE") && s.token) {
    done = true;
    callVisitor();
    heading(T.turnTitle);
    $("notify").hidden = true;  // nothing left to be told of
    $("position").textContent = "✓";
    $("ahead").textContent = "0";
    $("eta").textContent = "-";
    $("progress").style.width = "100%";
    if (bouncedBack()) {  // the service keeps sending us here: say so instead of looping
      $("message").textContent = T.bounced;
      $("retry").hidden = false;
      return;
    }
    $("message").textContent = T.admitted;
    // The server sets the admission cookie and, the ticket being bound to this browser's
    // key, the key cookie the gate asks for (both HttpOnly), replacing any stale ones.
    fetch("/v1/rooms/" + ROOM + "/tickets/" + s.ticket + "/cookie", {method: "POST",
      headers: {"Content-Type": "application/json"}, body: JSON.stringify({key: secret})})
      .finally(() => setTimeout(() => location.replace(RETURN_TO), 300));
    return;
  }
  $("notify").hidden = true;
  $("position").textContent = "-";
  $("ahead").textContent = "-";
  $("eta").textContent = "-";
  heading(T.endedTitle);
  $("message").textContent = T.ended;
  $("retry").hidden = false;
}
// The event's own link to its draw (it names the event's commitment).
async function drawLink() {
  $("draw-link").href = "/v1/rooms/" + ROOM + "/event/draw";
  try {
    const r = await fetch("/v1/rooms/" + ROOM + "/event", {cache: "no-store"});
    const e = r.ok ? await r.json() : null;
    if (e && e.draw) $("draw-link").href = e.draw;
  } catch { /* the bare link stands */ }
}
// True once this page sent the visitor on three times within a minute and is shown again:
// the service did not take the admission, and reloading would only loop.
function bouncedBack() {
  const now = Date.now();
  const recent = JSON.parse(sessionStorage.getItem(key("sent")) || "[]")
    .filter((t) => now - t < 60000);
  if (recent.length >= 3) return true;
  recent.push(now);
  sessionStorage.setItem(key("sent"), JSON.stringify(recent));
  return false;
}
function stopWatching() {
  if (source) { source.close(); source = null; }
  if (timer) { clearTimeout(timer); timer = null; }
  if (reopen) { clearTimeout(reopen); reopen = null; }
}
async function poll(ticket) {
  try {
    const r = await fetch("/v1/rooms/" + ROOM + "/tickets/" + ticket, {cache: "no-store"});
    if (r.status === 404) { localStorage.removeItem(key("ticket")); return join(); }
    const s = await r.json();
    show(s);
    if (s.status === "WAITING") timer = setTimeout(() => poll(ticket), s.poll_after_ms || 1000);
  } catch {
    $("message").textContent = T.offline;
    timer = setTimeout(() => poll(ticket), 3000);
  }
}
function listen(ticket) {
  if (!window.EventSource) return poll(ticket);
  source = new EventSource("/v1/rooms/" + ROOM + "/tickets/" + ticket + "/events");
  source.addEventListener("status", (e) => show(JSON.parse(e.data)));
  // An open stream counts as being here only for a while: reopen it now and then, which a
  // tab left behind would not.
  reopen = setTimeout(() => { stopWatching(); listen(ticket); }, 20 * 60 * 1000);
  source.onerror = () => { if (source) { source.close(); source = null; } if (!done) poll(ticket); };
}
// Proof of work (the room asks for it with 403 pow_required): SHA-256 of challenge ":" nonce
// must start with `difficulty` zero bits. Solved in a Web Worker with WebCrypto, a batch of
// digests at a time, so the page stays responsive; the bar shows the chance it is done by now.
async function solveChallenge() {
  const r = await fetch("/v1/rooms/" + ROOM + "/challenge", {cache: "no-store"});
  if (!r.ok) throw new Error("challenge " + r.status);
  const c = await r.json();
  if (!c.difficulty) return {challenge: c.challenge, nonce: "0"};
  if (!window.crypto || !crypto.subtle) throw new PowUnavailable();  // WebCrypto: HTTPS only
  document.body.dataset.phase = "solving";
  $("message").textContent = T.solving;
  const w = new Worker(URL.createObjectURL(new Blob([POW_WORKER], {type: "text/javascript"})));
  try {
    return await new Promise((resolve, reject) => {
      w.onerror = reject;
      w.onmessage = (e) => {
        if (e.data.error !== undefined) return reject(new PowUnavailable());
        if (e.data.progress !== undefined) {
          $("progress").style.width = Math.round(100 * e.data.progress) + "%";
          return;
        }
        $("progress").style.width = "100%";
        resolve({challenge: c.challenge, nonce: e.data.nonce});
      };
      w.postMessage({challenge: c.challenge, difficulty: c.difficulty});
    });
  } finally {
    w.terminate();
    delete document.body.dataset.phase;
    $("progress").style.width = "0";
  }
}
// The browser cannot solve the room's challenge (no WebCrypto: a page not served over HTTPS).
class PowUnavailable extends Error {}
let pow = null;
async function join() {
  stopWatching();
  $("retry").hidden = true;
  try {
    const body = {key: secret};
    if (CONFIG.invite) body.invite = CONFIG.invite;  // the service's invite (?invite=)
    if (pow) body.pow = pow;
    pow = null;  // each proof is good for one join
    const r = await fetch("/v1/rooms/" + ROOM + "/tickets", {
      method: "POST", headers: {"Content-Type": "application/json"},
      body: JSON.stringify(body)});
    const s = await r.json();
    if (r.status === 403 && s.error && /^pow_/.test(s.error.code)) {
      try {
        pow = await solveChallenge();
      } catch (e) {
        if (!(e instanceof PowUnavailable)) throw e;
        $("message").textContent = T.powUnavailable;  // no retry would help
        return;
      }
      return join();
    }
    if (!r.ok) {  // no place: said in the page's language, and tried again later
      const code = s.error && s.error.code;
      const said = {room_closed: T.closed, room_full: T.full, rate_limited: T.rateLimited,
        room_not_found: T.noRoom, invite_invalid: T.inviteInvalid}[code];
      const closed = code === "room_closed" || code === "room_not_found" || code === "invite_invalid";
      if (said) {
        document.body.dataset.phase = closed ? "closed" : "refused";
        $("position").textContent = "-";
        $("ahead").textContent = "-";
        $("eta").textContent = "-";
        heading(closed ? T.closedTitle : T.notInLine);
        $("notify").hidden = true;
      }
      $("message").textContent = said || T.failed;
      const after = Math.max(5, Number(r.headers.get("Retry-After")) || 0);
      timer = setTimeout(join, closed ? 30000 : Math.min(after, 300) * 1000);
      return;
    }
    heading(T.title);  // in line (again)
    localStorage.setItem(key("ticket"), s.ticket);
    show(s);
    if (s.status === "WAITING") listen(s.ticket);
  } catch {
    $("message").textContent = T.offline;
    timer = setTimeout(join, 3000);
  }
}
// Back to this browser's ticket if it still holds a place (a reload, a return); else a join.
async function resume() {
  const ticket = localStorage.getItem(key("ticket"));
  if (!ticket) return join();
  try {
    const r = await fetch("/v1/rooms/" + ROOM + "/tickets/" + ticket, {cache: "no-store"});
    const s = r.ok ? await r.json() : null;
    if (!s || !["WAITING", "ALLOWED", "ACTIVE"].includes(s.status)) {
      localStorage.removeItem(key("ticket"));
      return join();
    }
    show(s);
    if (s.status === "WAITING") listen(s.ticket);
  } catch {
    $("message").textContent = T.offline;
    timer = setTimeout(resume, 3000);
  }
}
$("retry").onclick = () => {
  sessionStorage.removeItem(key("sent"));
  const st = document.body.dataset.status;
  if (st === "ALLOWED" || st === "ACTIVE") return location.replace(RETURN_TO);  // admitted: go again
  localStorage.removeItem(key("ticket"));  // the place ended: a new one
  location.reload();
};
resume();
