// The operations page: plain HTML, CSS and a little JavaScript in one response — no build step.
// It reads /ops/api/overview every 10 s and renders with textContent only (nothing from the
// database is ever parsed as HTML). Sign-in posts the operator's token once; a session cookie
// naming a server-side session does the rest, and signing out ends it.

const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1d2330;background:#f5f6f8}
header{background:#1d2330;color:#fff;padding:10px 20px;display:flex;gap:20px;align-items:center}
header a{color:#9cc3ff}header h1{font-size:17px;margin:0;flex:1}
main{padding:16px 20px;display:grid;gap:16px}
section{background:#fff;border:1px solid #dde1e7;border-radius:6px;padding:12px 16px}
h2{font-size:15px;margin:0 0 8px}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #eef0f3;vertical-align:top}
th{font-weight:600;color:#5a6372}
.cards{display:flex;flex-wrap:wrap;gap:12px}.card{border:1px solid #dde1e7;border-radius:6px;padding:8px 14px;min-width:140px;background:#fff}
.card b{display:block;font-size:22px}.bad{color:#b42318}.warn{color:#b54708}.ok{color:#067647}
button{cursor:pointer}.muted{color:#5a6372}.timeline td{font-size:12px}#flash{min-height:1.2em}
`;

const SCRIPT = `
const $ = (id) => document.getElementById(id);
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'onclick') e.addEventListener('click', v); else if (k === 'class') e.className = v; else e.setAttribute(k, v);
  }
  for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(k == null ? '' : String(k)));
  return e;
}
function age(s) {
  s = Math.round(s);
  if (s < 60) return s + 's';
  if (s < 3600) return Math.floor(s / 60) + 'm ' + String(s % 60).padStart(2, '0') + 's';
  if (s < 86400) return Math.floor(s / 3600) + 'h ' + String(Math.floor((s % 3600) / 60)).padStart(2, '0') + 'm';
  return Math.floor(s / 86400) + 'd ' + Math.floor((s % 86400) / 3600) + 'h';
}
function table(head, rows) {
  if (rows.length === 0) return el('p', { class: 'muted' }, 'none');
  return el('table', {}, el('thead', {}, el('tr', {}, ...head.map((h) => el('th', {}, h)))), el('tbody', {}, ...rows));
}
function flash(text, cls) { const f = $('flash'); f.className = cls || ''; f.textContent = text; }
async function api(path, body) {
  const res = await fetch('/ops/api' + path, body === undefined ? { credentials: 'same-origin' } : { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (res.status === 401) { showLogin(); throw new Error('signed out'); }
  const json = await res.json();
  if (!res.ok) throw new Error(json.error || ('HTTP ' + res.status));
  return json;
}
function showLogin() { $('login').hidden = false; $('board').hidden = true; }
function card(label, value, cls) { return el('div', { class: 'card' }, el('span', { class: 'muted' }, label), el('b', { class: cls || '' }, value)); }

async function showTimeline(id, cell) {
  const p = await api('/payments/' + encodeURIComponent(id));
  cell.replaceChildren(table(['at', 'origin', 'input', 'edge', 'reason'], p.timeline.map((t) => el('tr', {},
    el('td', {}, t.at), el('td', {}, t.origin), el('td', {}, (t.input && t.input.type) || ''),
    el('td', {}, t.outcome === 'applied' ? t.from + ' → ' + t.to : 'ignored (' + (t.code || 'noop') + ')'), el('td', {}, t.reason)))));
  cell.firstChild && cell.firstChild.classList && cell.firstChild.classList.add('timeline');
}

function resolveForm(p) {
  const as = el('select', { 'aria-label': 'resolve as' }, ...['failed', 'voided', 'authorized', 'captured'].map((v) => el('option', { value: v }, v)));
  const note = el('input', { placeholder: 'note: what you checked (required)', size: '36', 'aria-label': 'note' });
  // Only for a resolution the money guards refuse: the reason is kept with the operator's name.
  const override = el('input', { placeholder: 'override reason (only if refused)', size: '24', 'aria-label': 'override' });
  const go = el('button', { onclick: async () => {
    try {
      const body = { as: as.value, note: note.value };
      if (override.value.trim() !== '') body.override = override.value;
      const r = await api('/payments/' + encodeURIComponent(p.id) + '/resolve', body);
      flash('payment ' + r.id + ': ' + r.from + ' → ' + r.to, 'ok'); await refresh();
    } catch (e) { flash(String(e.message), 'bad'); }
  } }, 'Resolve');
  return el('span', {}, as, ' ', note, ' ', override, ' ', go);
}

function render(o) {
  const ind = o.indicators;
  const count = (state) => ind.payments.filter((p) => p.state === state).reduce((n, p) => n + p.count, 0);
  const deadTotal = Object.values(ind.deadLetters).reduce((n, d) => n + d.count, 0);
  const discTotal = Object.values(ind.discrepancies).reduce((n, d) => n + d.count, 0);
  const fleet = ind.fleetBreakers || {};
  const accounts = [...new Set([...Object.keys(ind.breakers), ...Object.keys(fleet)])].sort();
  const openBreakers = accounts.filter((a) => (ind.breakers[a] || 'closed') !== 'closed' || (fleet[a] && fleet[a].open + fleet[a].half_open > 0)).length;
  const backlog = Object.values(ind.outboxDue).reduce((n, d) => Math.max(n, d.oldestAgeSeconds), 0);
  $('cards').replaceChildren(
    card('needs_review', count('needs_review'), count('needs_review') > 0 ? 'bad' : 'ok'),
    card('auth_unknown', count('auth_unknown'), count('auth_unknown') > 0 ? 'warn' : 'ok'),
    card('stuck > ' + age(o.stuck_older_than_s), o.stuck.length, o.stuck.length > 0 ? 'warn' : 'ok'),
    card('dead letters', deadTotal, deadTotal > 0 ? 'bad' : 'ok'),
    card('open discrepancies', discTotal, discTotal > 0 ? 'warn' : 'ok'),
    card('breakers not closed', openBreakers, openBreakers > 0 ? 'bad' : 'ok'),
    card('oldest due outbox row', age(backlog), backlog > 60 ? 'warn' : 'ok'),
  );
  $('errors').textContent = ind.errors.length === 0 ? '' : 'Could not read: ' + ind.errors.join('; ');
  $('breakers').replaceChildren(ind.fleetBreakers === null ? el('p', { class: 'bad' }, 'Redis did not answer: fleet breakers unknown') : table(['connector account', 'processes: closed', 'half-open', 'open', 'this process'], accounts.map((a) => {
    const f = fleet[a] || { closed: 0, half_open: 0, open: 0 };
    const mine = ind.breakers[a] || '-';
    return el('tr', { 'data-breaker': a }, el('td', {}, a), el('td', { class: 'ok' }, f.closed), el('td', { class: f.half_open > 0 ? 'warn' : '' }, f.half_open), el('td', { class: f.open > 0 ? 'bad' : '' }, f.open), el('td', { class: mine === 'closed' ? 'ok' : 'bad' }, mine));
  })));
  $('inflight').replaceChildren(table(['state', 'connector', 'payments', 'oldest'], ind.payments.map((p) => el('tr', {}, el('td', {}, p.state), el('td', {}, p.connector), el('td', {}, p.count), el('td', {}, age(p.oldestAgeSeconds))))));
  $('stuck').replaceChildren(table(['payment', 'state', 'connector', 'stuck for', 'amount', 'merchant', ''], o.stuck.flatMap((p) => {
    const detail = el('td', { colspan: '7' });
    const row = el('tr', { 'data-payment': p.id }, el('td', {}, p.id), el('td', { class: p.state === 'needs_review' ? 'bad' : 'warn' }, p.state), el('td', {}, p.connector || '-'),
      el('td', {}, age(p.stuckSeconds)), el('td', {}, p.amount + ' ' + p.currency), el('td', {}, p.merchantId),
      el('td', {}, el('button', { onclick: () => showTimeline(p.id, detail).catch((e) => flash(String(e.message), 'bad')) }, 'Timeline'), ' ', p.state === 'needs_review' ? resolveForm(p) : ''));
    return [row, el('tr', {}, detail)];
  })));
  $('dead').replaceChildren(table(['id', 'kind', 'connector', 'payment', 'tries', 'last error', 'since', ''], o.dead_letters.map((d) => el('tr', { 'data-dead-letter': String(d.id) },
    el('td', {}, d.id), el('td', {}, d.kind), el('td', {}, d.connector || '-'), el('td', {}, d.paymentId || '-'), el('td', {}, d.attempts), el('td', {}, d.lastError || ''), el('td', {}, d.createdAt),
    el('td', {}, el('button', { onclick: async () => {
      try { await api('/dead-letters/' + d.id + '/replay', {}); flash('dead letter ' + d.id + ' replayed', 'ok'); await refresh(); } catch (e) { flash(String(e.message), 'bad'); }
    } }, 'Replay'))))));
  $('discrepancies').replaceChildren(table(['category', 'payment', 'connector', 'detail', 'since'], o.discrepancies.map((d) => el('tr', {}, el('td', {}, d.category), el('td', {}, d.paymentId || '-'), el('td', {}, d.connector || '-'), el('td', {}, d.detail), el('td', {}, d.createdAt)))));
  $('queues').replaceChildren(ind.queues === null ? el('p', { class: 'bad' }, 'Redis did not answer') : table(['queue', 'waiting', 'active', 'delayed', 'failed', 'oldest waiting'], ind.queues.map((q) => el('tr', {}, el('td', {}, q.queue), el('td', {}, q.waiting), el('td', {}, q.active), el('td', {}, q.delayed), el('td', {}, q.failed), el('td', {}, age(q.oldestWaitingAgeSeconds))))));
  $('deliveries').replaceChildren(table(['endpoint', 'url', 'pending', 'failing', 'oldest'], ind.deliveries.map((d) => el('tr', {}, el('td', {}, d.endpointId), el('td', {}, d.url), el('td', {}, d.pending), el('td', { class: d.failing > 0 ? 'bad' : '' }, d.failing), el('td', {}, age(d.oldestAgeSeconds))))));
  const short = (m) => m.replace(/^switchyard_/, '').replace(/_total$/, '');
  $('counters').replaceChildren(table(['counter', 'labels', 'count'], o.counters.map((c) => el('tr', {}, el('td', {}, short(c.metric)),
    el('td', {}, Object.entries(c.labels).filter(([, v]) => v !== '').map(([k, v]) => k + '=' + v).join(' ')), el('td', { class: /unknown|not_sent|rejected|illegal|in_progress|key_reused/.test(c.metric + ' ' + Object.values(c.labels).join(' ')) ? 'warn' : '' }, c.value)))));
  $('whoami').textContent = 'signed in as ' + o.operator;
  const brief = (v) => v == null ? '' : JSON.stringify(v);
  $('audit').replaceChildren(table(['at', 'operator', 'action', 'target', 'before', 'after', 'note'], o.audit.map((a) => el('tr', { 'data-audit': a.action },
    el('td', {}, a.at), el('td', {}, a.operator), el('td', {}, a.action), el('td', {}, a.target), el('td', {}, brief(a.before)), el('td', {}, brief(a.after)), el('td', {}, a.note || '')))));
  $('updated').textContent = 'updated ' + new Date().toLocaleTimeString();
}

async function refresh() {
  const older = $('older').value || '5m';
  const o = await api('/overview?older_than=' + encodeURIComponent(older));
  $('login').hidden = true; $('board').hidden = false;
  render(o);
}
$('older').addEventListener('change', () => refresh().catch((e) => flash(String(e.message), 'bad')));
refresh().catch(() => undefined);
setInterval(() => { if (!$('board').hidden) refresh().catch(() => undefined); }, 10000);
`;

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function dashboardPage(loginError?: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Switchyard operations</title><meta name="viewport" content="width=device-width,initial-scale=1"><style>${STYLE}</style></head>
<body>
<header><h1>Switchyard operations</h1><span id="whoami"></span><a href="/ops/queues/">Queues (bull-board)</a>
<form method="post" action="/ops/logout"><button>Sign out</button></form></header>
<main>
<section id="login" ${loginError === undefined ? 'hidden' : ''}><h2>Sign in</h2>
<form method="post" action="/ops/login"><label>Operator token <input type="password" name="token" autocomplete="current-password" size="48"></label> <button>Sign in</button></form>
<p class="bad">${loginError === undefined ? '' : escapeHtml(loginError)}</p></section>
<div id="board" hidden>
<p id="flash"></p><p class="bad" id="errors"></p>
<section><h2>Indicators <span class="muted" id="updated"></span></h2><div class="cards" id="cards"></div></section>
<section><h2>Stuck payments, longest first <label class="muted">untouched for at least <select id="older"><option>1m</option><option selected>5m</option><option>15m</option><option>1h</option><option>6h</option><option>24h</option></select></label></h2><div id="stuck"></div></section>
<section><h2>Dead letters</h2><div id="dead"></div></section>
<section><h2>Open discrepancies</h2><div id="discrepancies"></div></section>
<section><h2>Breakers</h2><div id="breakers"></div></section>
<section><h2>Payments in flight</h2><div id="inflight"></div></section>
<section><h2>Queues</h2><div id="queues"></div></section>
<section><h2>Merchant webhook deliveries pending</h2><div id="deliveries"></div></section>
<section><h2>Operator actions, newest first</h2><div id="audit"></div></section>
<section><h2>Counters of this process since it started <span class="muted">(the fleet's: sum them in Prometheus from /metrics)</span></h2><div id="counters"></div></section>
</div>
</main>
<script>${SCRIPT}</script>
</body></html>`;
}

export function disabledPage(): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Switchyard operations</title></head><body>
<h1>The operations dashboard is off</h1><p>Set SWITCHYARD_ADMIN_TOKEN (at least 24 characters, e.g. <code>openssl rand -hex 24</code>), or name your operators in SWITCHYARD_OPERATORS (<code>alice:&lt;token&gt;,bob:&lt;token&gt;</code>), in the gateway's environment and restart it.</p></body></html>`;
}
