'use strict';
/* global chart */ // web/dashboard/chart.js, which the page's script carries after this file
// The strings of each language (web/i18n/dashboard/*.json), in the JSON block the page carries.
const STRINGS = JSON.parse(document.getElementById("anteroom-strings").textContent);
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
  const c = $('conn');  // the connection's state, in the new language
  if (c.className === 'on' || c.className === 'off') connected(c.className === 'on');
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
  try { data = text ? JSON.parse(text) : null; } catch { data = null; }
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
  } catch { $('login-error').textContent = t('cannotReach'); return; }
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
  if (!board) {  // no feed: no state to show (the dot is drawn from the class)
    $('conn').textContent = '';
    $('conn').className = '';
  }
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
  } catch {
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
  for (const [n, label] of [[state.rooms.size, t(state.rooms.size === 1 ? 'oneRoom' : 'rooms')], [waiting, t('totalWaiting')], [active, t('totalActive')]]) {
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
    try { body = JSON.parse($('ed-body').value); } catch { throw new Error(t('badJson')); }
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
