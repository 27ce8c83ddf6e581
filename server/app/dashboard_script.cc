// The dashboard's script, plain JavaScript with no library: the login, the one stream
// (fetch, so that the key goes in a header, never in a URL), the room table, the SVG charts,
// the controls and the room editor. Data is written with textContent only.
#include "server/app/dashboard_script.h"

namespace anteroom {

const std::string_view kDashboardScript = R"JS('use strict';
const STRINGS = {
  en: {dashboard:'dashboard', keyLabel:'Admin key', login:'Log in', logout:'Log out',
    wrongKey:'That key was refused.', cannotReach:'Cannot reach the server.', live:'live',
    reconnecting:'reconnecting…', room:'Room', mode:'Mode', waiting:'Waiting', active:'Active',
    joinsPerS:'Joins/s', admissionsPerS:'Admissions/s', expiriesPerS:'Expiries/s',
    etaLast:'Last in line', event:'Event', noRooms:'No rooms yet: make one with the editor below.',
    newRoom:'New room', chartLine:'Line, last 15 min', chartRates:'Per second',
    chartExpiries:'Expiries per second', allowed_unused:'not used', session_idle:'idle',
    abandoned:'abandoned', controls:'Controls', admitN:'Admit how many', admit:'Admit',
    pause:'Pause (queue all)', resume:'Resume', capacity:'Capacity (0 = no limit)',
    rate:'Admissions per second (0 = no cap)', save:'Save', clear:'Clear the line',
    prequeueAt:'Pre-queue from', startAt:'Start', endAt:'End (optional)', shuffle:'Draw at the start',
    saveEvent:'Save event', deleteEvent:'Delete event', draw:'The draw', editor:'Room editor',
    roomName:'Room', saveRoom:'Save room', rooms:'rooms', totalWaiting:'waiting',
    totalActive:'active', capacityOf:'capacity', unknown:'unknown', none:'none',
    admitted:'Admitted {n}.', saved:'Saved.', cleared:'Cleared {n} tickets.',
    confirmDeleteEvent:'Delete the event of room "{room}"? Its draw commitment goes with it.',
    confirmClear:'Clear every ticket of room "{room}"? Everyone waiting and admitted loses their place.',
    paused:'Paused: everyone queues, nobody is admitted.', resumed:'Resumed ({mode}).',
    eventSaved:'Event saved.', eventDeleted:'Event deleted.', badJson:'The editor does not hold a JSON object.',
    phase:'phase', noEvent:'No event scheduled.', joined:'joined', admittedTotal:'admitted',
    seconds:'s', minutes:'min', hours:'h'},
  ko: {dashboard:'대시보드', keyLabel:'관리자 키', login:'로그인', logout:'로그아웃',
    wrongKey:'키가 거부되었습니다.', cannotReach:'서버에 연결할 수 없습니다.', live:'실시간',
    reconnecting:'다시 연결 중…', room:'방', mode:'모드', waiting:'대기', active:'입장',
    joinsPerS:'초당 합류', admissionsPerS:'초당 입장', expiriesPerS:'초당 만료',
    etaLast:'마지막 대기자', event:'이벤트', noRooms:'방이 없습니다. 아래 편집기로 만드세요.',
    newRoom:'새 방', chartLine:'대기열, 최근 15분', chartRates:'초당',
    chartExpiries:'초당 만료', allowed_unused:'미사용', session_idle:'유휴',
    abandoned:'이탈', controls:'제어', admitN:'입장시킬 인원', admit:'입장',
    pause:'일시 정지 (모두 대기)', resume:'재개', capacity:'정원 (0 = 제한 없음)',
    rate:'초당 입장 (0 = 제한 없음)', save:'저장', clear:'대기열 비우기',
    prequeueAt:'사전 대기 시작', startAt:'시작', endAt:'종료 (선택)', shuffle:'시작 시 추첨',
    saveEvent:'이벤트 저장', deleteEvent:'이벤트 삭제', draw:'추첨 결과', editor:'방 편집기',
    roomName:'방', saveRoom:'방 저장', rooms:'방', totalWaiting:'대기',
    totalActive:'입장', capacityOf:'정원', unknown:'알 수 없음', none:'없음',
    admitted:'{n}명 입장시켰습니다.', saved:'저장했습니다.', cleared:'티켓 {n}개를 비웠습니다.',
    confirmDeleteEvent:'"{room}" 방의 이벤트를 삭제할까요? 추첨 약속(시드 해시)도 함께 사라집니다.',
    confirmClear:'"{room}" 방의 모든 티켓을 비울까요? 대기 중인 사람과 입장한 사람 모두 자리를 잃습니다.',
    paused:'일시 정지: 모두 대기하고 아무도 입장하지 않습니다.', resumed:'재개했습니다 ({mode}).',
    eventSaved:'이벤트를 저장했습니다.', eventDeleted:'이벤트를 삭제했습니다.', badJson:'편집기 내용이 JSON 객체가 아닙니다.',
    phase:'단계', noEvent:'예정된 이벤트가 없습니다.', joined:'합류', admittedTotal:'입장',
    seconds:'초', minutes:'분', hours:'시간'}
};
const SETTINGS = ['capacity', 'admission', 'admit_per_second', 'allowed_ttl_seconds',
  'session_ttl_seconds', 'heartbeat_timeout_seconds', 'max_waiting', 'trust_user', 'mode',
  'ip_joins_per_minute', 'pow_difficulty'];
const WINDOW_MS = 15 * 60 * 1000;
const $ = (id) => document.getElementById(id);
const state = {lang: sessionStorage.getItem('anteroom_lang') || document.documentElement.lang,
  key: sessionStorage.getItem('anteroom_admin_key') || '', rooms: new Map(), selected: null,
  history: null, abort: null, retry: null, rows: new Map()};

function t(name, fill) {
  let s = (STRINGS[state.lang] || STRINGS.en)[name] || STRINGS.en[name] || name;
  for (const k in fill || {}) s = s.split('{' + k + '}').join(String(fill[k]));
  return s;
}
function translate() {
  document.documentElement.lang = state.lang;
  for (const el of document.querySelectorAll('[data-t]')) el.textContent = t(el.dataset.t);
  $('lang').textContent = state.lang === 'ko' ? 'English' : '한국어';
  if (state.rooms.size) render();
}
function say(text, bad) {
  const m = $('msg');
  m.textContent = text;
  m.className = bad ? 'bad' : '';
  clearTimeout(say.timer);
  say.timer = setTimeout(() => { m.textContent = ''; }, 6000);
}
function duration(s) {
  if (s === null || s === undefined) return t('unknown');
  if (s < 90) return Math.round(s) + t('seconds');
  if (s < 5400) return Math.round(s / 60) + t('minutes');
  return (s / 3600).toFixed(1) + t('hours');
}
function num(n) { return (n === undefined || n === null) ? '–' : Number(n).toLocaleString(); }

async function call(method, path, body) {
  const opts = {method, headers: {Authorization: 'Bearer ' + state.key}, cache: 'no-store'};
  if (body !== undefined) {
    opts.body = JSON.stringify(body);
    opts.headers['Content-Type'] = 'application/json';
  }
  const res = await fetch(path, opts);
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
  if (res.status === 401) { logout(t('wrongKey')); throw new Error(t('wrongKey')); }
  if (!res.ok) throw new Error((data && data.error && data.error.message) || ('HTTP ' + res.status));
  return data;
}
function roomPath(room, rest) { return '/v1/rooms/' + encodeURIComponent(room) + (rest || ''); }

// Log in: the key is tried on GET /v1/rooms and kept only if it works.
async function login(key) {
  $('login-error').textContent = '';
  let res;
  try {
    res = await fetch('/v1/rooms', {headers: {Authorization: 'Bearer ' + key}, cache: 'no-store'});
  } catch (e) { $('login-error').textContent = t('cannotReach'); return; }
  if (res.status === 401) { $('login-error').textContent = t('wrongKey'); return; }
  if (!res.ok) { $('login-error').textContent = 'HTTP ' + res.status; return; }
  state.key = key;
  sessionStorage.setItem('anteroom_admin_key', key);
  show(true);
  openStream();
}
function logout(why) {
  state.key = '';
  sessionStorage.removeItem('anteroom_admin_key');
  if (state.abort) state.abort.abort();
  clearTimeout(state.retry);
  show(false);
  $('login-error').textContent = why || '';
}
function show(board) {
  $('login').hidden = board;
  $('board').hidden = !board;
  $('logout').hidden = !board;
  if (!board) $('conn').textContent = '';
}
function connected(on) {
  const c = $('conn');
  c.className = on ? 'on' : 'off';
  c.textContent = on ? t('live') : t('reconnecting');
}

// One stream: a frame of every room each second.
async function openStream() {
  if (state.abort) state.abort.abort();
  const ctl = new AbortController();
  state.abort = ctl;
  try {
    const res = await fetch('/v1/admin/stream', {headers: {Authorization: 'Bearer ' + state.key},
      cache: 'no-store', signal: ctl.signal});
    if (res.status === 401) return logout(t('wrongKey'));
    if (!res.ok || !res.body) throw new Error('HTTP ' + res.status);
    connected(true);
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    for (;;) {
      const {value, done} = await reader.read();
      if (done) break;
      buf += decoder.decode(value, {stream: true});
      let end;
      while ((end = buf.indexOf('\n\n')) >= 0) {
        onBlock(buf.slice(0, end));
        buf = buf.slice(end + 2);
      }
    }
  } catch (e) {
    if (ctl.signal.aborted) return;
  }
  if (state.abort !== ctl || !state.key) return;
  connected(false);
  state.retry = setTimeout(openStream, 2000);
}
function onBlock(block) {
  let event = 'message', data = '';
  for (const line of block.split('\n')) {
    if (line.startsWith('event:')) event = line.slice(6).trim();
    else if (line.startsWith('data:')) data += line.slice(5).trim();
  }
  if (event !== 'rooms' || !data) return;
  const frame = JSON.parse(data);
  state.rooms = new Map(frame.rooms.map((r) => [r.room, r]));
  const at = Date.parse(frame.time);
  const sel = state.rooms.get(state.selected);
  if (sel && state.history) addSample(at, sel);
  render();
}

// A room's row: made once, then its cells' text changed in place each second (a row rebuilt
// every frame would lose a click or a selection that spans one).
const COLUMNS = [['name', ''], ['l', 'mode'], ['waiting', 'waiting'], ['active', 'active'],
  ['joins', 'joinsPerS'], ['admissions', 'admissionsPerS'], ['expiries', 'expiriesPerS'],
  ['eta', 'etaLast'], ['l event', 'event']];
function rowOf(room) {
  let tr = state.rows.get(room);
  if (tr) return tr;
  tr = document.createElement('tr');
  tr.dataset.room = room;
  for (const [cls] of COLUMNS) {
    const td = document.createElement('td');
    td.className = cls;
    tr.appendChild(td);
  }
  const badge = document.createElement('span');
  tr.children[1].appendChild(badge);
  tr.addEventListener('click', () => select(room));
  state.rows.set(room, tr);
  return tr;
}
function setText(el, text) { if (el.textContent !== text) el.textContent = text; }
function fillRow(tr, r) {
  const c = tr.children, ps = r.per_second || {}, e = ps.expiries;
  COLUMNS.forEach(([, label], i) => { if (label) c[i].dataset.label = t(label); });
  tr.classList.toggle('sel', r.room === state.selected);
  setText(c[0], r.room);
  const badge = c[1].firstChild;
  badge.className = 'mode ' + r.mode;
  setText(badge, r.mode);
  setText(c[2], num(r.waiting));
  setText(c[3], num(r.active) + ' / ' + (r.capacity === 0 ? '∞' : num(r.capacity)));
  setText(c[4], num(ps.joins));
  setText(c[5], num(ps.admissions));
  setText(c[6], e ? num(e.allowed_unused + e.session_idle + e.abandoned) : '–');
  setText(c[7], duration(r.eta_last_seconds));
  setText(c[8], r.event ? r.event.phase : '');
}
function render() {
  const body = document.querySelector('#rooms tbody');
  let waiting = 0, active = 0;
  const sorted = [...state.rooms.values()].sort((a, b) => a.room < b.room ? -1 : 1);
  for (const [room, tr] of state.rows) {
    if (!state.rooms.has(room)) { tr.remove(); state.rows.delete(room); }
  }
  sorted.forEach((r, i) => {
    waiting += r.waiting;
    active += r.active;
    const tr = rowOf(r.room);
    fillRow(tr, r);
    if (body.children[i] !== tr) body.insertBefore(tr, body.children[i] || null);
  });
  $('empty').hidden = state.rooms.size !== 0;
  const sum = $('summary');
  sum.replaceChildren();
  for (const [n, label] of [[state.rooms.size, t('rooms')], [waiting, t('totalWaiting')], [active, t('totalActive')]]) {
    const span = document.createElement('span');
    const b = document.createElement('b');
    b.textContent = num(n);
    span.append(b, ' ' + label);
    sum.appendChild(span);
  }
  renderDetail();
}

async function select(room) {
  state.selected = room;
  state.filled = null;
  state.history = null;
  fillEditor(room);
  render();
  try {
    const h = await call('GET', '/v1/admin/rooms/' + encodeURIComponent(room) + '/history');
    if (state.selected !== room) return;
    state.history = h;
    renderDetail();
  } catch (e) { say(e.message, true); }
}
function addSample(at, r) {
  const h = state.history;
  const last = h.unix_ms[h.unix_ms.length - 1];
  if (last !== undefined && at <= last) return;
  const ps = r.per_second || {};
  const e = ps.expiries || {allowed_unused: 0, session_idle: 0, abandoned: 0};
  h.unix_ms.push(at);
  h.waiting.push(r.waiting);
  h.active.push(r.active);
  h.joins_per_second.push(ps.joins || 0);
  h.admissions_per_second.push(ps.admissions || 0);
  for (const k of ['allowed_unused', 'session_idle', 'abandoned']) h.expiries_per_second[k].push(e[k]);
  while (h.unix_ms.length && h.unix_ms[0] < at - WINDOW_MS) {
    h.unix_ms.shift(); h.waiting.shift(); h.active.shift();
    h.joins_per_second.shift(); h.admissions_per_second.shift();
    for (const k in h.expiries_per_second) h.expiries_per_second[k].shift();
  }
}

// A line chart of the last 15 minutes: x is time (the right edge is now), y from 0 to the
// largest value shown.
function chart(svg, times, series) {
  const NS = 'http://www.w3.org/2000/svg';
  svg.replaceChildren();
  if (!times.length) return;
  // The window is the last 15 minutes, or since the first sample (at least a minute) while
  // the server has held the room for less.
  const end = times[times.length - 1];
  const span = Math.min(WINDOW_MS, Math.max(60000, end - times[0]));
  const start = end - span;
  let max = 1;
  for (const s of series) for (const v of s.values) if (v > max) max = v;
  for (const frac of [0.25, 0.5, 0.75]) {
    const g = document.createElementNS(NS, 'line');
    g.setAttribute('x1', 0); g.setAttribute('x2', 300);
    g.setAttribute('y1', 100 - frac * 95); g.setAttribute('y2', 100 - frac * 95);
    g.setAttribute('stroke', '#e3e7ee'); g.setAttribute('stroke-width', 0.5);
    svg.appendChild(g);
  }
  for (const s of series) {
    const pts = [];
    for (let i = 0; i < times.length; ++i) {
      const x = (times[i] - start) / span * 300;
      const y = 100 - s.values[i] / max * 95;
      pts.push(x.toFixed(1) + ',' + y.toFixed(1));
    }
    const line = document.createElementNS(NS, 'polyline');
    line.setAttribute('points', pts.join(' '));
    line.setAttribute('fill', 'none');
    line.setAttribute('stroke', s.color);
    line.setAttribute('stroke-width', 1.5);
    line.setAttribute('vector-effect', 'non-scaling-stroke');
    svg.appendChild(line);
  }
  const label = document.createElementNS(NS, 'text');
  label.setAttribute('x', 3); label.setAttribute('y', 10);
  label.setAttribute('font-size', 8); label.setAttribute('fill', '#5b6676');
  label.textContent = num(max);
  svg.appendChild(label);
  svg.setAttribute('aria-label', series.map((s) => s.name + ' ' + num(s.values[s.values.length - 1])).join(', '));
}
function renderDetail() {
  const r = state.rooms.get(state.selected);
  $('detail').hidden = !r;
  if (!r) return;
  $('d-name').textContent = r.room;
  if (state.filled !== r.room) {  // the controls start from the room's values, once
    state.filled = r.room;
    $('capacity').value = r.capacity;
    $('rate').value = r.admit_per_second;
    $('mode').value = r.mode;
    fillEvent(r.event);
  }
  const stats = $('stats');
  stats.replaceChildren();
  const items = [[t('waiting'), num(r.waiting)], [t('active'), num(r.active)],
    [t('capacityOf'), r.capacity === 0 ? '∞' : num(r.capacity)], [t('mode'), r.mode],
    [t('joined'), num(r.totals.joined)], [t('admittedTotal'), num(r.totals.admitted)],
    [t('etaLast'), duration(r.eta_last_seconds)]];
  for (const [k, v] of items) {
    const span = document.createElement('span');
    const b = document.createElement('b');
    b.textContent = v;
    span.append(k + ' ', b);
    span.dataset.stat = k;
    stats.appendChild(span);
  }
  const ev = r.event;
  $('event-now').textContent = ev ? (t('phase') + ': ' + ev.phase + ' · ' + ev.prequeue_at + ' → ' +
    ev.start_at + (ev.end_at ? ' → ' + ev.end_at : '')) : t('noEvent');
  $('ev-delete').hidden = !ev;
  // Resume only a paused room; pause only one that is not.
  $('resume').disabled = r.mode !== 'queue_all';
  $('pause').disabled = r.mode === 'queue_all';
  const draw = $('ev-draw');
  draw.hidden = !(ev && ev.draw);
  if (ev && ev.draw) draw.href = ev.draw;
  const h = state.history;
  if (!h) return;
  chart($('c-line'), h.unix_ms, [{name: t('waiting'), values: h.waiting, color: '#2457c5'},
    {name: t('active'), values: h.active, color: '#1e7d3a'}]);
  chart($('c-rates'), h.unix_ms, [{name: t('joinsPerS'), values: h.joins_per_second, color: '#8a4fd3'},
    {name: t('admissionsPerS'), values: h.admissions_per_second, color: '#d98a00'}]);
  const e = h.expiries_per_second;
  chart($('c-exp'), h.unix_ms, [{name: t('allowed_unused'), values: e.allowed_unused, color: '#d98a00'},
    {name: t('session_idle'), values: e.session_idle, color: '#8a4fd3'},
    {name: t('abandoned'), values: e.abandoned, color: '#b3261e'}]);
}

// The event form starts from the room's event (times in the browser's zone), if it has one.
function fillEvent(ev) {
  const local = (iso) => {
    if (!iso) return '';
    const d = new Date(iso);
    return new Date(d.getTime() - d.getTimezoneOffset() * 60000).toISOString().slice(0, 19);
  };
  $('ev-pre').value = ev ? local(ev.prequeue_at) : '';
  $('ev-start').value = ev ? local(ev.start_at) : '';
  $('ev-end').value = ev ? local(ev.end_at) : '';
  $('ev-shuffle').checked = !!(ev && ev.shuffle);
}
function fillEditor(room) {
  const r = state.rooms.get(room);
  $('ed-name').value = room || '';
  const o = {};
  if (r) for (const k of SETTINGS) o[k] = r[k];
  else Object.assign(o, {capacity: 100, admission: 'auto', admit_per_second: 0, mode: 'fifo'});
  $('ed-body').value = JSON.stringify(o, null, 2);
}

// Each control: the call, then what to say. Errors say why.
function control(form, run) {
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    try { say(await run()); } catch (e) { say(e.message, true); }
  });
}
function wire() {
  $('login-form').addEventListener('submit', (ev) => { ev.preventDefault(); login($('key').value); });
  $('logout').addEventListener('click', () => logout(''));
  $('lang').addEventListener('click', () => {
    state.lang = state.lang === 'ko' ? 'en' : 'ko';
    sessionStorage.setItem('anteroom_lang', state.lang);
    translate();
  });
  $('new-room').addEventListener('click', () => { fillEditor(''); $('ed-name').focus(); });
  control($('f-admit'), async () => {
    const d = await call('POST', roomPath(state.selected, '/admit'), {count: Number($('admit-n').value)});
    return t('admitted', {n: d.admitted});
  });
  control($('f-capacity'), async () => {
    await call('PUT', roomPath(state.selected), {capacity: Number($('capacity').value)});
    return t('saved');
  });
  control($('f-rate'), async () => {
    await call('PUT', roomPath(state.selected), {admit_per_second: Number($('rate').value)});
    return t('saved');
  });
  control($('f-mode'), async () => {
    await call('PUT', roomPath(state.selected), {mode: $('mode').value});
    return t('saved');
  });
  $('pause').addEventListener('click', async () => {
    const room = state.selected, r = state.rooms.get(room);
    try {
      // What to go back to on resume, kept for this tab.
      if (r && r.mode !== 'queue_all') sessionStorage.setItem('anteroom_resume_' + room, r.mode);
      await call('PUT', roomPath(room), {mode: 'queue_all'});
      say(t('paused'));
    } catch (e) { say(e.message, true); }
  });
  $('resume').addEventListener('click', async () => {
    const room = state.selected;
    const mode = sessionStorage.getItem('anteroom_resume_' + room) || 'fifo';
    try {
      await call('PUT', roomPath(room), {mode});
      say(t('resumed', {mode}));
    } catch (e) { say(e.message, true); }
  });
  $('clear').addEventListener('click', async () => {
    const room = state.selected;
    if (!window.confirm(t('confirmClear', {room}))) return;
    try {
      const d = await call('POST', roomPath(room, '/clear'));
      say(t('cleared', {n: d ? d.cleared : 0}));
    } catch (e) { say(e.message, true); }
  });
  const iso = (v) => v ? new Date(v).toISOString() : undefined;
  control($('f-event'), async () => {
    const body = {prequeue_at: iso($('ev-pre').value), start_at: iso($('ev-start').value),
      shuffle: $('ev-shuffle').checked};
    if ($('ev-end').value) body.end_at = iso($('ev-end').value);
    await call('PUT', roomPath(state.selected, '/event'), body);
    return t('eventSaved');
  });
  $('ev-delete').addEventListener('click', async () => {
    if (!window.confirm(t('confirmDeleteEvent', {room: state.selected}))) return;
    try { await call('DELETE', roomPath(state.selected, '/event')); say(t('eventDeleted')); }
    catch (e) { say(e.message, true); }
  });
  control($('f-editor'), async () => {
    let body;
    try { body = JSON.parse($('ed-body').value); } catch (e) { throw new Error(t('badJson')); }
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw new Error(t('badJson'));
    const name = $('ed-name').value;
    await call('PUT', roomPath(name), body);
    select(name);  // the charts and controls follow the room just saved
    return t('saved');
  });
}

wire();
translate();
if (state.key) { show(true); openStream(); } else { show(false); }
)JS";

}  // namespace anteroom
