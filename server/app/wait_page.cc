#include "server/app/wait_page.h"

#include <openssl/rand.h>

#include <boost/json.hpp>

#include "server/app/token.h"

namespace anteroom {
namespace {

// The page is anteroom's document (kPage) around the waiting box (kWidget: its style, markup
// and script), or an operator's template (docs/branding.md) around the same box.
// %ROOM%, %RETURN% (a JSON string), %LANG%, %TITLE%, %COLORS% (CSS variables) and %STRINGS%
// (a JSON object) are filled in per request; everything else is static.
constexpr std::string_view kPage = R"HTML(<!doctype html>
<html lang="%LANG%"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>%TITLE%</title>
</head><body>%WIDGET%</body></html>
)HTML";

constexpr std::string_view kWidget = R"HTML(<style>
:root{--background:#f4f5f7;--card:#fff;--text:#1d2433;--accent:#3867d6;%COLORS%}
body{margin:0;font-family:system-ui,-apple-system,"Noto Sans KR",sans-serif;background:var(--background);color:var(--text)}
main{max-width:28rem;margin:12vh auto;padding:2rem 1.5rem;background:var(--card);border-radius:12px;box-shadow:0 2px 12px #0001}
#logo{max-height:3rem;max-width:100%;display:block;margin:0 0 1rem}
h1{font-size:1.3rem;margin:0 0 1rem}
.big{font-size:3rem;font-weight:700;margin:.2rem 0}
.row{display:flex;justify-content:space-between;margin:.4rem 0;color:#4a5468}
.bar{height:10px;background:#e3e6ec;border-radius:5px;overflow:hidden;margin:1.2rem 0}
.bar div{height:100%;width:0;background:var(--accent);transition:width .6s}
.note{font-size:.9rem;color:#6b7489}
@media (max-width:30rem){main{margin:6vh .75rem}}
body[data-phase=closed] .row,body[data-phase=closed] .bar,body[data-phase=closed] .big,body[data-phase=closed] #label,
body[data-phase=prequeue] .row,body[data-phase=prequeue] .bar,body[data-phase=prequeue] .big,body[data-phase=prequeue] #label,
body[data-phase=draw] .row,
body[data-phase=solving] .row,body[data-phase=solving] .big,body[data-phase=solving] #label{display:none}
body[data-phase=prequeue] #countdown{font-size:2rem;font-weight:700;color:#1d2433}
button{margin-top:1rem;padding:.6rem 1.2rem;border:0;border-radius:8px;background:var(--accent);color:#fff;font-size:1rem}
</style><main>
<img id="logo" alt="" hidden>
<h1 id="title"></h1>
<p id="brand-message" hidden></p>
<div class="note" id="label"></div>
<div class="big" id="position">…</div>
<div class="row"><span id="ahead-label"></span><span id="ahead">-</span></div>
<div class="row"><span id="eta-label"></span><span id="eta">-</span></div>
<div class="bar"><div id="progress"></div></div>
<p class="note" id="message"></p>
<p class="note" id="countdown" hidden></p>
<p class="note" id="drawn" hidden><a id="draw-link"></a></p>
<button id="notify" hidden></button>
<button id="retry" hidden></button>
<p class="note" id="ref"></p>
</main>
<script nonce="%NONCE%">
const ROOM = "%ROOM%", RETURN_TO = %RETURN%, T = %STRINGS%;
const $ = (id) => document.getElementById(id);
const key = (k) => "anteroom:" + ROOM + ":" + k;
$("title").textContent = T.title; $("label").textContent = T.position;
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
  } catch (e) {}
  if (navigator.vibrate) navigator.vibrate([200, 100, 200]);
  if (window.Notification && Notification.permission === "granted") {
    try { new Notification(T.turnTitle, {body: T.admitted, tag: "anteroom-" + ROOM}); } catch (e) {}
  }
  let on = false;
  const flash = setInterval(() => { document.title = (on = !on) ? T.turnTitle : T.title; }, 700);
  setTimeout(() => clearInterval(flash), 20000);
}
if (window.Notification && Notification.permission === "default") {
  $("notify").hidden = false;
  $("notify").textContent = T.notify;
  $("notify").onclick = () => Notification.requestPermission().then(() => { $("notify").hidden = true; });
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
      $("draw-link").href = "/v1/rooms/" + ROOM + "/event/draw";
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
  stop();
  if ((s.status === "ALLOWED" || s.status === "ACTIVE") && s.token) {
    done = true;
    callVisitor();
    $("position").textContent = "✓";
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
  $("position").textContent = "-";
  $("message").textContent = T.ended;
  $("retry").hidden = false;
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
function stop() {
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
  } catch (e) {
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
  reopen = setTimeout(() => { stop(); listen(ticket); }, 20 * 60 * 1000);
  source.onerror = () => { if (source) { source.close(); source = null; } if (!done) poll(ticket); };
}
// Proof of work (the room asks for it with 403 pow_required): SHA-256 of challenge ":" nonce
// must start with `difficulty` zero bits. Solved in a Web Worker with WebCrypto, a batch of
// digests at a time, so the page stays responsive; the bar shows the chance it is done by now.
const POW_WORKER = `onmessage = async (e) => {
  const {challenge, difficulty} = e.data, enc = new TextEncoder(), tries = 2 ** difficulty;
  const zeros = (d) => { let n = 0; for (const b of d) { if (b) return n + Math.clz32(b) - 24; n += 8; } return n; };
  for (let base = 0; ; base += 256) {
    const batch = [];
    for (let i = 0; i < 256; i++) batch.push(crypto.subtle.digest("SHA-256", enc.encode(challenge + ":" + (base + i))));
    const digests = await Promise.all(batch);
    for (let i = 0; i < 256; i++) {
      if (zeros(new Uint8Array(digests[i])) >= difficulty) { postMessage({nonce: String(base + i)}); return; }
    }
    postMessage({progress: 1 - Math.exp(-(base + 256) / tries)});
  }
};`;
async function solveChallenge() {
  const r = await fetch("/v1/rooms/" + ROOM + "/challenge", {cache: "no-store"});
  if (!r.ok) throw new Error("challenge " + r.status);
  const c = await r.json();
  if (!c.difficulty) return {challenge: c.challenge, nonce: "0"};
  document.body.dataset.phase = "solving";
  $("message").textContent = T.solving;
  const w = new Worker(URL.createObjectURL(new Blob([POW_WORKER], {type: "text/javascript"})));
  try {
    return await new Promise((resolve, reject) => {
      w.onerror = reject;
      w.onmessage = (e) => {
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
let pow = null;
async function join() {
  stop();
  $("retry").hidden = true;
  try {
    const body = {key: secret};
    if (pow) body.pow = pow;
    pow = null;  // each proof is good for one join
    const r = await fetch("/v1/rooms/" + ROOM + "/tickets", {
      method: "POST", headers: {"Content-Type": "application/json"},
      body: JSON.stringify(body)});
    const s = await r.json();
    if (r.status === 403 && s.error && /^pow_/.test(s.error.code)) {
      pow = await solveChallenge();
      return join();
    }
    if (!r.ok) {
      const closed = s.error && s.error.code === "room_closed";
      if (closed) {
        document.body.dataset.phase = "closed";
        $("position").textContent = "-";
        $("title").textContent = T.closedTitle;
        $("notify").hidden = true;
      }
      $("message").textContent = closed ? T.closed : (s.error && s.error.message) || T.offline;
      timer = setTimeout(join, closed ? 30000 : 5000);
      return;
    }
    localStorage.setItem(key("ticket"), s.ticket);
    show(s);
    if (s.status === "WAITING") listen(s.ticket);
  } catch (e) {
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
  } catch (e) {
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
</script>)HTML";

constexpr std::string_view kEnglish =
    R"({"title":"You are in line","position":"Your place in line","ahead":"People ahead of you","eta":"Estimated wait","progress":"Progress","keep":"Keep this page open: it moves on by itself. Reloading keeps your place.","admitted":"It is your turn. Taking you in…","ended":"Your place in line has ended.","retry":"Join again","joining":"Joining the line…","solving":"Checking your browser before you join the line (this takes a moment, once)…","offline":"Connection lost; retrying…","unknown":"calculating…","seconds":" s","minutes":" min","about":"about ","prequeue":"The sale opens at {time} (your time zone). You are in the pre-queue: everyone here gets a place at the start, in a fair draw.","startsIn":"Opens in ","inDraw":"You are in the draw: each place that frees goes to someone picked at random from everyone waiting.","paused":"The line is paused for now. Keep this page open; your place is kept.","closed":"This room is closed or sold out.","closedTitle":"Closed","checkDraw":"Your place came from a fair draw: check it","notify":"Notify me when it is my turn","turnTitle":"It is your turn!","ref":"Support code: ","bounced":"You were let in, but the service sent you back here. Your admission may have been refused there; try again, or contact the organiser."})";
constexpr std::string_view kKorean =
    R"({"title":"대기열에 들어왔습니다","position":"나의 대기 순번","ahead":"내 앞의 대기 인원","eta":"예상 대기 시간","progress":"진행률","keep":"이 페이지를 열어 두세요. 차례가 되면 자동으로 이동합니다. 새로고침해도 순번은 유지됩니다.","admitted":"입장 차례입니다. 이동 중…","ended":"대기 순번이 만료되었습니다.","retry":"다시 줄 서기","joining":"대기열에 들어가는 중…","solving":"대기열에 들어가기 전에 브라우저를 확인하고 있습니다(잠시, 한 번만)…","offline":"연결이 끊겼습니다. 다시 시도 중…","unknown":"계산 중…","seconds":"초","minutes":"분","about":"약 ","prequeue":"판매는 {time}(현지 시간)에 시작합니다. 사전 대기열에 들어왔습니다. 시작 시각에 공정한 추첨으로 모두에게 순번이 정해집니다.","startsIn":"시작까지 ","inDraw":"추첨 대기 중입니다. 자리가 날 때마다 대기 중인 모든 분 가운데 무작위로 한 분이 입장합니다.","paused":"대기열이 잠시 멈췄습니다. 페이지를 열어 두세요. 순번은 유지됩니다.","closed":"이 방은 마감되었거나 매진되었습니다.","closedTitle":"마감","checkDraw":"공정한 추첨으로 정해진 순번입니다: 확인하기","notify":"내 차례가 되면 알림 받기","turnTitle":"입장 차례입니다!","ref":"문의 코드: ","bounced":"입장이 허용되었지만 서비스가 이 페이지로 다시 보냈습니다. 다시 시도하거나 운영자에게 문의해 주세요."})";

}  // namespace

std::string first_language(std::string_view accept_language) {
  while (!accept_language.empty()) {
    const size_t comma = accept_language.find(',');
    std::string_view item = accept_language.substr(0, comma);
    accept_language = comma == std::string_view::npos ? "" : accept_language.substr(comma + 1);
    const size_t semi = item.find(';');
    std::string_view tag = item.substr(0, semi), params;
    if (semi != std::string_view::npos) params = item.substr(semi + 1);
    while (!tag.empty() && tag.front() == ' ') tag.remove_prefix(1);
    while (!tag.empty() && tag.back() == ' ') tag.remove_suffix(1);
    const std::string_view primary = tag.substr(0, tag.find('-'));
    if (primary.size() != 2 || !std::isalpha(static_cast<unsigned char>(primary[0])) ||
        !std::isalpha(static_cast<unsigned char>(primary[1]))) {
      continue;
    }
    while (!params.empty() && params.front() == ' ') params.remove_prefix(1);
    if (params.starts_with("q=0") && params.find_first_not_of("0.", 2) == std::string_view::npos) {
      continue;  // q=0, q=0.0, q=0.000: refused
    }
    std::string lang(primary);
    for (char& c : lang) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return lang;
  }
  return "";
}

namespace {

// JSON inside <script>: '<' escaped, so no "</script>" or "<!--" can end it.
std::string script_json(const boost::json::value& v) {
  std::string out = boost::json::serialize(v);
  std::string safe;
  safe.reserve(out.size());
  for (char c : out) {
    if (c == '<') {
      safe += "\\u003c";
    } else {
      safe += c;
    }
  }
  return safe;
}

// Text for HTML (element content or a quoted attribute).
std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

template <size_t N>
std::string fill_template(std::string_view tmpl,
                          const std::pair<std::string_view, std::string_view> (&fills)[N],
                          char lead = '%') {
  std::string out;
  out.reserve(tmpl.size() + 1024);
  for (size_t i = 0; i < tmpl.size();) {
    bool filled = false;
    if (tmpl[i] == lead) {
      for (const auto& [name, value] : fills) {
        if (tmpl.substr(i, name.size()) == name) {
          out += value;
          i += name.size();
          filled = true;
          break;
        }
      }
    }
    if (!filled) out += tmpl[i++];
  }
  return out;
}

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<std::string> query_param(std::string_view query, std::string_view name) {
  for (size_t i = 0; i <= query.size();) {
    size_t end = query.find('&', i);
    if (end == std::string_view::npos) end = query.size();
    std::string_view pair = query.substr(i, end - i);
    size_t eq = pair.find('=');
    if (pair.substr(0, eq) == name) {
      std::string out;
      std::string_view raw =
          eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1);
      for (size_t k = 0; k < raw.size(); ++k) {
        if (raw[k] == '+') {
          out += ' ';
        } else if (raw[k] == '%') {
          if (k + 2 >= raw.size()) return std::nullopt;
          int hi = hex(raw[k + 1]), lo = hex(raw[k + 2]);
          if (hi < 0 || lo < 0) return std::nullopt;
          out += static_cast<char>(hi * 16 + lo);
          k += 2;
        } else {
          out += raw[k];
        }
      }
      return out;
    }
    i = end + 1;
  }
  return std::nullopt;
}

std::string safe_return_url(std::string_view url) {
  if (url.empty() || url[0] != '/' || url.starts_with("//") || url.starts_with("/\\")) return "/";
  for (unsigned char c : url) {
    if (c < 0x20 || c == 0x7f || c == '\\') return "/";
  }
  return std::string(url);
}

ApiResponse wait_page(std::string_view room, std::string_view query,
                      std::string_view accept_language, std::string_view return_header,
                      const Branding& brand) {
  const std::string wanted = first_language(accept_language);
  // The page's language: the visitor's first, if anteroom or the operator has its strings.
  const bool ko = wanted == "ko";
  const std::string lang = ko || brand.texts.count(wanted) != 0 ? wanted : "en";
  boost::json::object strings = boost::json::parse(ko ? kKorean : kEnglish).as_object();
  if (!brand.title.empty()) strings["title"] = brand.title;
  if (auto it = brand.texts.find(lang); it != brand.texts.end()) {  // a language's own wins
    for (const auto& [k, v] : it->second) strings[k] = v;
  }
  if (!brand.message.empty()) strings["brandMessage"] = brand.message;
  if (!brand.logo_url.empty()) strings["logo"] = brand.logo_url;
  const std::string strings_js = script_json(strings);
  unsigned char random[16];
  if (RAND_bytes(random, sizeof random) != 1) std::abort();
  const std::string nonce =
      base64url_encode({reinterpret_cast<const char*>(random), sizeof random});
  std::string ret =
      safe_return_url(query_param(query, "return").value_or(std::string(return_header)));
  const std::string ret_js = script_json(boost::json::value(ret));
  std::string colors;  // checked #rrggbb values (page_branding.cc)
  for (const auto& [name, value] : brand.colors) {
    colors += "--";
    colors += name;
    colors += ':';
    colors += value;
    colors += ';';
  }
  // One pass over each template: what is put in is never scanned for placeholders again (a
  // return address holding "%STRINGS%" stays text).
  const std::pair<std::string_view, std::string_view> widget_fills[] = {{"%ROOM%", room},
                                                                        {"%RETURN%", ret_js},
                                                                        {"%COLORS%", colors},
                                                                        {"%STRINGS%", strings_js},
                                                                        {"%NONCE%", nonce}};
  const std::string widget = fill_template(kWidget, widget_fills);
  const std::string title = html_escape(strings["title"].as_string());
  std::string page;
  if (brand.html_template.empty()) {
    const std::pair<std::string_view, std::string_view> fills[] = {
        {"%LANG%", lang}, {"%TITLE%", title}, {"%WIDGET%", widget}};
    page = fill_template(kPage, fills);
  } else {
    const std::string message = html_escape(brand.message), logo = html_escape(brand.logo_url);
    const std::pair<std::string_view, std::string_view> fills[] = {
        {"{{widget}}", widget}, {"{{title}}", title}, {"{{message}}", message},
        {"{{logo_url}}", logo}, {"{{room}}", room},   {"{{lang}}", lang}};
    page = fill_template(brand.html_template, fills, '{');
  }
  ApiResponse res;
  res.content_type = "text/html; charset=utf-8";
  res.body = std::move(page);
  res.headers.emplace_back("Cache-Control", "no-store");
  res.headers.emplace_back("Content-Language", lang);
  res.headers.emplace_back("Vary", "Accept-Language");
  res.headers.emplace_back("X-Content-Type-Options", "nosniff");
  res.headers.emplace_back("Referrer-Policy", "same-origin");
  // Only the widget's own script runs (its nonce is new on every answer, so text an operator
  // or a visitor got into the page cannot carry script); styles and images as templates need
  // them; the page talks to this origin only, and may not be framed (clickjacking).
  res.headers.emplace_back("Content-Security-Policy",
                           "default-src 'none'; script-src 'nonce-" + nonce +
                               "'; worker-src blob:; connect-src 'self'; style-src 'self' "
                               "'unsafe-inline'; img-src 'self' https: data:; font-src 'self' "
                               "https: data:; base-uri 'none'; form-action 'self'; "
                               "frame-ancestors 'none'");
  res.headers.emplace_back("X-Frame-Options", "DENY");
  return res;
}

}  // namespace anteroom
