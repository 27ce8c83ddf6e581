#include "server/app/dashboard_page.h"

#include <openssl/rand.h>

#include <cstdlib>
#include <string>

#include "server/app/dashboard_script.h"
#include "server/app/token.h"
#include "server/app/wait_page.h"

namespace anteroom {
namespace {

// The markup and the style; the script (dashboard_script.cc) fills it in. Every element the
// script writes data into is filled with textContent, never as markup.
constexpr std::string_view kHead = R"HTML(<!doctype html>
<html lang="%LANG%">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>anteroom</title>
<link rel="icon" href="data:,">
<style nonce="%NONCE%">
:root { --fg:#1d2430; --muted:#5b6676; --bg:#f5f6f8; --card:#fff; --line:#dde1e7; --accent:#2457c5;
        --warn:#b3261e; --ok:#1e7d3a; --wait:#2457c5; --act:#1e7d3a; --join:#8a4fd3; --adm:#d98a00; }
* { box-sizing: border-box; }
body { margin:0; font:15px/1.45 system-ui, -apple-system, "Segoe UI", "Noto Sans KR", sans-serif;
       color:var(--fg); background:var(--bg); }
header { display:flex; align-items:center; gap:.75rem; padding:.6rem 1rem; background:#1d2430; color:#fff;
         position:sticky; top:0; z-index:2; flex-wrap:wrap; }
header h1 { font-size:1.05rem; margin:0; flex:1; }
header button { background:transparent; color:#fff; border:1px solid #ffffff66; }
#conn { font-size:.85rem; }
#conn.on::before { content:"● "; color:#5fd37a; }
#conn.off::before { content:"● "; color:#f2a33a; }
main { padding:1rem; max-width:1200px; margin:0 auto; }
button, input, select, textarea { font:inherit; }
button { padding:.4rem .8rem; border-radius:6px; border:1px solid var(--line); background:var(--card);
         cursor:pointer; min-height:2.4rem; }
button.primary { background:var(--accent); color:#fff; border-color:var(--accent); }
button.danger { color:var(--warn); border-color:var(--warn); }
input, select { padding:.35rem .5rem; border:1px solid var(--line); border-radius:6px; min-height:2.4rem;
                background:#fff; }
input[type=number] { width:7rem; }
.card { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:1rem; margin-bottom:1rem; }
#login { max-width:26rem; margin:3rem auto; }
#login label { display:block; margin-bottom:.4rem; }
#login input { width:100%; margin-bottom:.6rem; }
.error { color:var(--warn); min-height:1.2em; }
#summary { display:flex; gap:1.5rem; flex-wrap:wrap; color:var(--muted); margin-bottom:.6rem; }
#summary b { color:var(--fg); font-size:1.2rem; }
table { width:100%; border-collapse:collapse; }
th, td { text-align:right; padding:.45rem .5rem; border-bottom:1px solid var(--line); white-space:nowrap; }
th:first-child, td:first-child, th.l, td.l { text-align:left; }
tbody tr { cursor:pointer; }
tbody tr:hover, tbody tr.sel { background:#eef3fd; }
.mode { display:inline-block; padding:0 .45rem; border-radius:99px; background:#e7ebf2; font-size:.85rem; }
.mode.queue_all, .mode.reject { background:#fde7c7; }
.charts { display:grid; grid-template-columns:repeat(auto-fit, minmax(280px, 1fr)); gap:1rem; }
figure { margin:0; display:flex; flex-direction:column; justify-content:space-between; }
figcaption { font-size:.85rem; color:var(--muted); display:flex; gap:.8rem; flex-wrap:wrap; }
.key::before { content:"■ "; }
.k-wait { color:var(--wait); } .k-act { color:var(--act); } .k-join { color:var(--join); } .k-adm { color:var(--adm); }
.k-unused { color:var(--adm); } .k-idle { color:var(--join); } .k-aband { color:var(--warn); }
svg.chart { width:100%; height:130px; background:#fbfcfd; border:1px solid var(--line); border-radius:6px; }
.controls { display:flex; flex-wrap:wrap; gap:.6rem 1.2rem; align-items:flex-end; }
.controls form, .controls .group { display:flex; gap:.4rem; align-items:flex-end; flex-wrap:wrap; }
.controls label { display:flex; flex-direction:column; font-size:.85rem; color:var(--muted); }
#stats { display:flex; gap:1.2rem; flex-wrap:wrap; margin:.3rem 0 .8rem; color:var(--muted); }
#stats b { color:var(--fg); }
textarea { width:100%; min-height:12rem; font-family:ui-monospace, monospace; font-size:.85rem; }
#msg { position:sticky; bottom:0; margin:0; padding:.5rem 1rem; background:#1d2430; color:#fff; min-height:0; }
#msg:empty { display:none; }
#msg.bad { background:var(--warn); }
h2 { margin:.2rem 0; font-size:1.2rem; }
h3 { margin:.2rem 0 .6rem; font-size:1rem; }
@media (max-width: 700px) {
  main { padding:.5rem; }
  thead { display:none; }
  table, tbody, tr, td { display:block; width:100%; }
  tr { border:1px solid var(--line); border-radius:8px; margin-bottom:.5rem; background:var(--card); padding:.3rem .5rem;
       display:grid; grid-template-columns:1fr 1fr; gap:0 .8rem; }
  td.name { grid-column:1 / -1; font-weight:600; }
  td { border:0; text-align:left; padding:.1rem 0; white-space:normal; }
  td[data-label]::before { content:attr(data-label) ": "; color:var(--muted); }
  .controls { flex-direction:column; align-items:stretch; }
  input[type=number] { width:100%; }
}
</style>
</head>
<body>
<header><h1>anteroom · <span data-t="dashboard"></span></h1><span id="conn"></span>
<button id="lang" type="button"></button><button id="logout" type="button" hidden data-t="logout"></button></header>
<main>
<section id="login" class="card">
<form id="login-form">
<label for="key" data-t="keyLabel"></label>
<input id="key" name="key" type="password" autocomplete="off" required>
<button class="primary" type="submit" data-t="login"></button>
<p id="login-error" class="error" role="alert"></p>
</form>
</section>
<section id="board" hidden>
<div id="summary"></div>
<div class="card"><table id="rooms"><thead><tr>
<th data-t="room"></th><th class="l" data-t="mode"></th><th data-t="waiting"></th><th data-t="active"></th>
<th data-t="joinsPerS"></th><th data-t="admissionsPerS"></th><th data-t="expiriesPerS"></th>
<th data-t="etaLast"></th><th class="l" data-t="event"></th></tr></thead><tbody></tbody></table>
<p id="empty" data-t="noRooms" hidden></p>
<button id="new-room" type="button" data-t="newRoom"></button></div>
<section id="detail" class="card" hidden>
<h2 id="d-name"></h2>
<div id="stats"></div>
<div class="charts">
<figure><figcaption><span data-t="chartLine"></span><span class="key k-wait" data-t="waiting"></span><span class="key k-act" data-t="active"></span></figcaption><svg class="chart" id="c-line" viewBox="0 0 300 100" preserveAspectRatio="none" role="img"></svg></figure>
<figure><figcaption><span data-t="chartRates"></span><span class="key k-join" data-t="joinsPerS"></span><span class="key k-adm" data-t="admissionsPerS"></span></figcaption><svg class="chart" id="c-rates" viewBox="0 0 300 100" preserveAspectRatio="none" role="img"></svg></figure>
<figure><figcaption><span data-t="chartExpiries"></span><span class="key k-unused" data-t="allowed_unused"></span><span class="key k-idle" data-t="session_idle"></span><span class="key k-aband" data-t="abandoned"></span></figcaption><svg class="chart" id="c-exp" viewBox="0 0 300 100" preserveAspectRatio="none" role="img"></svg></figure>
</div>
<h3 data-t="controls"></h3>
<div class="controls">
<form id="f-admit"><label><span data-t="admitN"></span><input id="admit-n" type="number" min="1" max="1000000" value="5" required></label><button class="primary" type="submit" data-t="admit"></button></form>
<div class="group"><button id="pause" type="button" data-t="pause"></button><button id="resume" type="button" data-t="resume"></button></div>
<form id="f-capacity"><label><span data-t="capacity"></span><input id="capacity" type="number" min="0" required></label><button type="submit" data-t="save"></button></form>
<form id="f-rate"><label><span data-t="rate"></span><input id="rate" type="number" min="0" required></label><button type="submit" data-t="save"></button></form>
<form id="f-mode"><label><span data-t="mode"></span><select id="mode"><option>fifo</option><option>random</option><option>passthrough</option><option>reject</option><option>queue_all</option></select></label><button type="submit" data-t="save"></button></form>
<div class="group"><button id="clear" class="danger" type="button" data-t="clear"></button></div>
</div>
<h3 data-t="event"></h3>
<p id="event-now"></p>
<form id="f-event" class="controls">
<label><span data-t="prequeueAt"></span><input id="ev-pre" type="datetime-local" step="1" required></label>
<label><span data-t="startAt"></span><input id="ev-start" type="datetime-local" step="1" required></label>
<label><span data-t="endAt"></span><input id="ev-end" type="datetime-local" step="1"></label>
<label><span data-t="shuffle"></span><input id="ev-shuffle" type="checkbox"></label>
<div class="group"><button type="submit" data-t="saveEvent"></button><button id="ev-delete" type="button" class="danger" data-t="deleteEvent"></button><a id="ev-draw" hidden target="_blank" rel="noopener" data-t="draw"></a></div>
</form>
</section>
<section class="card">
<h3 data-t="editor"></h3>
<form id="f-editor">
<label><span data-t="roomName"></span> <input id="ed-name" pattern="[A-Za-z0-9_\-]{1,64}" required></label>
<textarea id="ed-body" spellcheck="false"></textarea>
<button class="primary" type="submit" data-t="saveRoom"></button>
</form>
</section>
</section>
</main>
<p id="msg" role="status" aria-live="polite"></p>
<script nonce="%NONCE%">
)HTML";

constexpr std::string_view kTail = "\n</script>\n</body>\n</html>\n";

std::string replace_all(std::string_view text, std::string_view from, std::string_view to) {
  std::string out;
  size_t at = 0;
  for (size_t i; (i = text.find(from, at)) != std::string_view::npos; at = i + from.size()) {
    out.append(text.substr(at, i - at));
    out.append(to);
  }
  out.append(text.substr(at));
  return out;
}

}  // namespace

ApiResponse dashboard_page(std::string_view accept_language) {
  const std::string_view lang = first_language(accept_language) == "ko" ? "ko" : "en";
  unsigned char random[16];
  if (RAND_bytes(random, sizeof random) != 1) std::abort();
  const std::string nonce =
      base64url_encode({reinterpret_cast<const char*>(random), sizeof random});
  ApiResponse res;
  res.content_type = "text/html; charset=utf-8";
  res.body = replace_all(replace_all(kHead, "%NONCE%", nonce), "%LANG%", lang);
  res.body += kDashboardScript;
  res.body += kTail;
  res.headers.emplace_back("Cache-Control", "no-store");
  res.headers.emplace_back("Content-Language", std::string(lang));
  res.headers.emplace_back("Vary", "Accept-Language");
  res.headers.emplace_back("X-Content-Type-Options", "nosniff");
  res.headers.emplace_back("Referrer-Policy", "same-origin");
  // Only the page's own script and style (a new nonce on every answer); it talks to this
  // origin only, draws its charts itself, and may not be framed.
  res.headers.emplace_back("Content-Security-Policy",
                           "default-src 'none'; script-src 'nonce-" + nonce +
                               "'; style-src 'nonce-" + nonce +
                               "'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; "
                               "form-action 'none'; frame-ancestors 'none'");
  res.headers.emplace_back("X-Frame-Options", "DENY");
  return res;
}

}  // namespace anteroom
