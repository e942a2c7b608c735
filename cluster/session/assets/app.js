// flinksim ui — the live diagram of "Flink, simulated".
//
// The session (session.js: HTTP + server-sent events to `flinksim ui`)
// streams frames: the state at one virtual time, the log lines and the
// traffic delivered since the last frame. This page draws them; every change
// goes back through the session object. Nothing here decides anything about
// the run: the page can be closed, reloaded or opened twice.
'use strict';

// ---------------------------------------------------------------- helpers

const $ = (sel, root = document) => root.querySelector(sel);
const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));
const LONG_MIN = -9.2e18, LONG_MAX = 9.2e18;
const PAUSED = '❚❚'; // in HTML text; the diagram draws its marks as shapes

function esc(s) {
  return String(s).replace(/[&<>"']/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}

// virtual µs -> "m:ss.mmm" (or "h:mm:ss.mmm", "Nd h:mm:ss")
function fmtVT(us) {
  if (us == null) return '—';
  const neg = us < 0; us = Math.abs(us);
  const msTotal = Math.floor(us / 1000);
  const ms = msTotal % 1000, s = Math.floor(msTotal / 1000) % 60, m = Math.floor(msTotal / 60000) % 60;
  const h = Math.floor(msTotal / 3600000) % 24, d = Math.floor(msTotal / 86400000);
  const p2 = x => String(x).padStart(2, '0'), p3 = x => String(x).padStart(3, '0');
  let out = h || d ? `${h}:${p2(m)}:${p2(s)}.${p3(ms)}` : `${m}:${p2(s)}.${p3(ms)}`;
  if (d) out = `${d}d ${out}`;
  return (neg ? '-' : '') + out;
}
function fmtVTus(us) { return us < 10000 ? `${us} µs` : fmtVT(us); }

// event time (ms since the epoch) -> time of day UTC "hh:mm:ss.mmm"
function fmtTS(ms) {
  if (ms == null || ms <= LONG_MIN) return '—';
  if (ms >= LONG_MAX) return '∞';
  const d = new Date(ms);
  if (isNaN(d)) return String(ms);
  return d.toISOString().slice(11, 23);
}
function fmtWM(ms) {
  if (ms == null || ms <= LONG_MIN) return 'no watermark';
  if (ms >= LONG_MAX) return 'MAX (end of input)';
  return fmtTS(ms);
}
// a window [start, end) as times of day, without milliseconds when whole
function fmtWin(a, b) {
  const t = x => { const s = fmtTS(x); return s.endsWith('.000') ? s.slice(0, 8) : s; };
  return `[${t(a)}, ${t(b)})`;
}
function fmtBytes(b) {
  if (b == null) return '—';
  if (b < 1024) return `${b} B`;
  if (b < 1 << 20) return `${(b / 1024).toFixed(1)} KiB`;
  return `${(b / (1 << 20)).toFixed(1)} MiB`;
}
function fmtN(n) { return n == null ? '—' : Number(n).toLocaleString('en-US'); }
function durMs(ms) { return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`; }

// one colour per key (a record's colour as it travels)
function keyHue(key) {
  let h = 2166136261;
  for (let i = 0; i < key.length; i++) { h ^= key.charCodeAt(i); h = Math.imul(h, 16777619); }
  return ((h >>> 0) % 360);
}
function keyColor(key) { return `hsl(${keyHue(key)} 62% 48%)`; }

// Flink's web UI job and task status colours
const STATUS_COLOR = {
  CREATED: '#2f54eb', SCHEDULED: '#722ed1', DEPLOYING: '#13c2c2', INITIALIZING: '#738df8', RUNNING: '#52c41a',
  FINISHED: '#1890ff', CANCELING: '#faad14', CANCELLING: '#faad14', CANCELED: '#fa8c16', FAILED: '#f5222d',
  FAILING: '#f5222d', RECONCILING: '#eb2f96', RESTARTING: '#13c2c2', SUSPENDED: '#8c8c8c',
};

// node colour as flink-runtime-web's node.component.ts blends it: from
// blue (idle) towards red by busy %, then towards black/grey by
// backpressured %
function hex2rgb(h) { const x = parseInt(h.slice(1), 16); return [(x >> 16) & 255, (x >> 8) & 255, x & 255]; }
function blend(from, to, p) {
  const f = hex2rgb(from), t = hex2rgb(to);
  const c = f.map((v, i) => Math.round((t[i] - v) * p + v));
  return '#' + c.map(v => v.toString(16).padStart(2, '0')).join('');
}
function nodeColors(busyMs, bpMs) {
  let bg = '#5db1ff', border = '#1890ff';
  if (busyMs) { bg = blend(bg, '#ee6464', busyMs / 1000); border = blend(border, '#ee2222', busyMs / 1000); }
  if (bpMs) { bg = blend(bg, '#888888', bpMs / 1000); border = blend(border, '#000000', bpMs / 1000); }
  return { bg, border };
}

let toastTimer = 0;
function toast(msg, isErr) {
  const t = $('#toast');
  t.textContent = msg; t.hidden = false; t.className = 'toast' + (isErr ? ' err' : '');
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { t.hidden = true; }, isErr ? 7000 : 3500);
}

async function act(text) {
  try {
    const r = await session.act(text);
    const note = r.dropped ? ` (dropped ${r.dropped} later action${r.dropped > 1 ? 's' : ''}: new timeline)` : '';
    toast(`${r.action}${note}`);
    const res = $('#act-result'); if (res) { res.textContent = `scheduled: ${r.action}${note}`; res.className = 'result mono'; }
    return r;
  } catch (e) {
    toast(e.message, true);
    const res = $('#act-result'); if (res) { res.textContent = e.message; res.className = 'result err'; }
    throw e;
  }
}

// ---------------------------------------------------------------- text that fits

// The diagram's text is laid out by measuring it (a canvas with the
// diagram's fonts), so that no label covers another and none runs out of
// its box: a text that does not fit takes its shorter form, or is cut with
// an ellipsis (its whole content stays in the box's tooltip).
const SANS = 'system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif';
const MONO = 'ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace';
const measureCtx = document.createElement('canvas').getContext('2d');
const widthCache = new Map();
// the font of a text of class textCls, or of a tspan of spanCls inside it
// (the cascade of style.css: .m is monospace 10.5 px, .small 9.5 px, .head
// semibold, .headr 10 px, .title semibold 12 px, .colhead 11 px)
function fontOf(textCls, spanCls) {
  let size = 11, fam = SANS, weight = '';
  const apply = cls => {
    const c = (cls || '').split(/\s+/);
    if (c.includes('m')) { fam = MONO; size = 10.5; }
    if (c.includes('small')) size = 9.5;
    if (c.includes('head')) { weight = '600 '; size = 11; }
    if (c.includes('headr')) size = 10;
    if (c.includes('title')) { weight = '600 '; size = 12; }
    if (c.includes('colhead')) size = 11;
    if (c.includes('bold')) weight = '600 ';
  };
  apply(textCls);
  apply(spanCls);
  return `${weight}${size}px ${fam}`;
}
function textWidth(str, textCls, spanCls) {
  const font = fontOf(textCls, spanCls);
  const k = font + '\u0000' + str;
  let w = widthCache.get(k);
  if (w == null) {
    measureCtx.font = font;
    w = measureCtx.measureText(str).width * 1.02;
    if (widthCache.size > 4000) widthCache.clear();
    widthCache.set(k, w);
  }
  return w;
}
// segs: a string, or an array of [spanCls, text] pieces
function segsOf(x) { return typeof x === 'string' ? [['', x]] : x; }
function segsWidth(segs, cls) { return segs.reduce((a, [c, s]) => a + textWidth(s, cls, c), 0); }
// the first of alts that fits in max px, else the last cut to fit
function fitSegs(alts, max, cls) {
  alts = alts.map(segsOf);
  for (const a of alts) if (segsWidth(a, cls) <= max) return a;
  const a = alts[alts.length - 1].map(p => p.slice());
  while (a.length) {
    const [c, s] = a[a.length - 1];
    const rest = segsWidth(a.slice(0, -1), cls);
    let lo = 0, hi = s.length;
    while (lo < hi) { // the longest prefix that fits with the ellipsis
      const mid = (lo + hi + 1) >> 1;
      if (rest + textWidth(s.slice(0, mid) + '…', cls, c) <= max) lo = mid; else hi = mid - 1;
    }
    if (lo > 0) { a[a.length - 1] = [c, s.slice(0, lo).trimEnd() + '…']; return a; }
    a.pop();
  }
  return [];
}
// T is one line of diagram text at (x, y): alts are its forms, longest
// first, each a string or an array of [spanCls, text] segments; with o.max
// the first that fits in o.max px is drawn, or the last cut to fit.
// o.cls is the text's class, o.anchor its text-anchor.
function T(x, y, alts, o = {}) {
  const segs = o.max != null ? fitSegs(alts, Math.max(0, o.max), o.cls) : segsOf(alts[0]);
  if (!segs.length) return '';
  const body = segs.map(([c, s]) => c ? `<tspan class="${c}">${esc(s)}</tspan>` : esc(s)).join('');
  const attrs = `${o.cls ? ` class="${o.cls}"` : ''}${o.anchor ? ` text-anchor="${o.anchor}"` : ''}${o.style ? ` style="${o.style}"` : ''}${o.attrs || ''}`;
  return `<text x="${x}" y="${y}"${attrs}>${body}</text>`;
}

// The marks of an input channel, drawn as shapes (fonts lack ⏸ and ↯):
// 12 px squares of their own beside the gauge they belong to.
function pauseMark(x, y, what) {
  return `<g data-mark="blocked"><title>${esc(what)}</title><rect x="${x}" y="${y}" width="12" height="12" fill="transparent"/>` +
    `<rect x="${x + 2}" y="${y + 1}" width="3" height="10" rx=".5" fill="#000"/><rect x="${x + 7}" y="${y + 1}" width="3" height="10" rx=".5" fill="#000"/></g>`;
}
function persistMark(x, y, what) {
  return `<g data-mark="persisting"><title>${esc(what)}</title><rect x="${x}" y="${y}" width="12" height="12" fill="transparent"/>` +
    `<path d="M${x + 7.5},${y} L${x + 2},${y + 6.6} L${x + 5.8},${y + 6.6} L${x + 4},${y + 12} L${x + 10.2},${y + 4.8} L${x + 6.4},${y + 4.8} L${x + 8.6},${y} Z" fill="#722ed1"/></g>`;
}

// ---------------------------------------------------------------- state

let S = null;            // the latest state
let gen = 0;             // the log generation the events belong to
let events = [];         // recent log lines (parsed), bounded
const MAX_EVENTS = 5000;
let statusHistory = [];  // job_status transitions seen: {vt, job, status}
let selected = null;     // {type, id}
let activeTab = 'watermarks';
let sliderDragging = false;
const kindsSeen = new Set(), actorsSeen = new Set();

function applyFrame(msg) {
  const reset = msg.reset || msg.gen !== gen;
  if (reset) {
    events = []; statusHistory = []; kindsSeen.clear(); actorsSeen.clear();
    inspHTML = ''; // a new session: the inspector shows it even while hovered
    gen = msg.gen;
    logDirty = true;
  }
  for (const raw of msg.events) {
    const ev = typeof raw === 'string' ? { event: 'truncated', text: raw } : raw;
    events.push(ev);
    if (ev.event === 'job_status') statusHistory.push({ vt: ev.vt, job: ev.job_id, status: ev.status });
    if (!kindsSeen.has(ev.event)) { kindsSeen.add(ev.event); filtersDirty = true; }
    if (ev.actor && !actorsSeen.has(ev.actor)) { actorsSeen.add(ev.actor); filtersDirty = true; }
  }
  if (msg.skipped) events.push({ event: 'skipped', text: `${msg.skipped} lines not shown (download the log for all)` });
  if (events.length > MAX_EVENTS) events.splice(0, events.length - MAX_EVENTS);
  if (statusHistory.length > 200) statusHistory.splice(0, statusHistory.length - 200);
  if (msg.events.length) logDirty = true;
  S = msg.state;
  Traffic.ingest(msg.traffic || [], S, reset);
  // a new session, a pause, a step or the end shows at once; while running
  // the boxes are redrawn at most STATIC_EVERY (the glyphs move every
  // animation frame)
  const urgent = reset || !lastShown || S.speed !== lastShown.speed || S.ended !== lastShown.ended || S.speed === 'pause';
  lastShown = { speed: S.speed, ended: S.ended };
  dirty = true;
  if (urgent) { dirty = false; lastRender = performance.now(); render(); }
}
let dirty = false, lastRender = 0, lastShown = null;
const STATIC_EVERY = 200; // ms between redraws of the boxes and panels while running

// like Flink's web UI: stop while the tab is hidden, resume where we were
let hiddenTimer = 0;
document.addEventListener('visibilitychange', () => {
  if (document.hidden) {
    hiddenTimer = setTimeout(() => session.pause(), 5000);
  } else {
    clearTimeout(hiddenTimer);
    session.resume();
  }
});

// ---------------------------------------------------------------- layout

// The diagram: the Kafka topic on the left, one column per JobVertex
// (source -> window/process -> [sink]), the sink topic on the right, the
// JobManager on top and the TaskManagers at the bottom. Boxes shrink as
// parallelism grows so 64 subtasks stay readable.
function densityOf(p) { return p <= 6 ? 'normal' : p <= 16 ? 'compact' : 'mini'; }

// geometry of a subtask box in the normal density: the channel gauges in a
// strip on the left (label, gauge, 12 px mark), the text column beside it
const G = { row: 16, top: 22, gaugeX: 6, gaugeW: 34, markX: 43, labelX: 58, textX: 80, boxH: 94 };

function layout(st) {
  const L = { boxes: {}, anchors: {}, w: 0, h: 0 };
  const verts = st.vertices || [];
  const maxP = Math.max(1, ...verts.map(v => Math.max(v.parallelism, v.subtasks.length)));
  const dens = densityOf(maxP);
  L.dens = dens;
  const parts = st.kafka.partitions || [];
  const shownParts = parts.slice(0, dens === 'normal' ? 12 : 32);
  L.shownParts = shownParts;
  const KW = 164, SW = 224, OW = 196;
  L.KW = KW; L.SW = SW; L.OW = OW;
  const avail = Math.max(960, phone ? 0 : wrapWidth());
  const GAP = Math.max(56, Math.min(120, (avail - 32 - KW - OW - SW * verts.length) / (verts.length + 1)));
  L.gap = GAP;
  let x = 16;
  L.kafkaX = x; x += KW + GAP;
  L.cols = [];
  for (const v of verts) { L.cols.push({ v, x }); x += SW + GAP; }
  L.outX = x; x += OW + 16;
  L.w = x;
  const top = 104;
  // subtask boxes
  let bottom = top;
  for (const c of L.cols) {
    const n = c.v.subtasks.length;
    const nch = Math.max(0, ...c.v.subtasks.map(s => (s.inputs || []).length));
    let h, gap;
    if (dens === 'normal') { h = Math.max(G.boxH, nch ? G.top + nch * G.row + 6 : 0); gap = 14; }
    else if (dens === 'compact') { h = 44; gap = 6; }
    else { h = 29; gap = 3; }
    c.h = h; c.gap = gap;
    c.v.subtasks.forEach((s, i) => {
      const b = { x: c.x, y: top + i * (h + gap), w: SW, h };
      L.boxes['st:' + s.name] = b;
      L.anchors[s.name] = b;
      (s.inputs || []).forEach((ch, j) => {
        const g = gaugeRect(b, j, (s.inputs || []).length, dens);
        L.anchors[`${s.name}/ch-${j}`] = { x: g.x, y: g.y, w: g.w, h: g.h, gauge: true, box: b };
      });
    });
    bottom = Math.max(bottom, top + n * (h + gap));
  }
  // partitions
  const ph = dens === 'normal' ? 52 : 22, pg = dens === 'normal' ? 8 : 3;
  shownParts.forEach((p, i) => { L.boxes['p:' + p.partition] = { x: L.kafkaX, y: top + i * (ph + pg), w: KW, h: ph }; });
  bottom = Math.max(bottom, top + shownParts.length * (ph + pg) + (parts.length > shownParts.length ? 18 : 0));
  // output
  const outH = 172;
  L.boxes.out = { x: L.outX, y: top, w: OW, h: outH };
  bottom = Math.max(bottom, top + outH);
  // JobManager and ResourceManager
  const jmX = L.cols.length ? L.cols[0].x : 200;
  const jmR = L.cols.length ? L.cols[L.cols.length - 1].x + SW : 600;
  L.boxes.jm = { x: jmX, y: 12, w: jmR - jmX, h: 62 };
  L.boxes.rm = { x: L.outX, y: 12, w: OW, h: 62 };
  // TaskManagers
  const tms = st.taskmanagers || [];
  const tmW = 176, tmH = 70;
  const perRow = Math.max(1, Math.floor((L.w - 32) / (tmW + 12)));
  const tmTop = bottom + 34;
  tms.forEach((t, i) => {
    L.boxes['tm:' + t.name] = { x: 16 + (i % perRow) * (tmW + 12), y: tmTop + Math.floor(i / perRow) * (tmH + 12), w: tmW, h: tmH };
  });
  const tmRows = Math.ceil(tms.length / perRow);
  L.tmTop = tmTop;
  L.h = tmTop + tmRows * (tmH + 12) + 8;
  L.top = top;
  return L;
}

function gaugeRect(b, j, n, dens) {
  if (dens === 'normal') return { x: b.x + G.gaugeX, y: b.y + G.top + j * G.row + 1.5, w: G.gaugeW, h: 9 };
  if (dens === 'compact') {
    const w = Math.max(2, Math.min(10, Math.floor((b.w - 110) / Math.max(1, n)) - 1));
    return { x: b.x + 90 + j * (w + 1), y: b.y + b.h - 12, w, h: 8 };
  }
  // mini: right of the watermark, 1 px per channel at 64
  const room = b.w - 130, w = Math.max(1, Math.min(8, Math.floor(room / Math.max(1, n)) - 1)), gap = w >= 2 ? 1 : 0;
  return { x: b.x + b.w - 4 - (n - j) * (w + gap), y: b.y + 15, w, h: 7 };
}

// ---------------------------------------------------------------- diagram

let L = null;
// the diagram frame's width, read again only when it changes size
let wrapW = 0;
function wrapWidth() {
  if (!wrapW) wrapW = ($('#diagram-wrap') || {}).clientWidth || 1000;
  return wrapW;
}
new ResizeObserver(() => { wrapW = 0; }).observe(document.getElementById('diagram-wrap'));
let phone = false;
let scrolledSideways = false;             // the diagram was scrolled (the "more to the right" hint goes)                        // the phone layout: the diagram pans and zooms by touch
let view = null;                          // phone: the part of the diagram shown {x, y, w}

function renderDiagram() {
  const st = S;
  L = layout(st);
  const svg = $('#diagram'), wrap = $('#diagram-wrap');
  if (phone) {
    const sr = svg.getBoundingClientRect();
    const ww = sr.width || 360, wh = sr.height || 400;
    if (!view) view = { x: 0, y: 0, w: Math.min(L.w, 480) };
    view.w = Math.max(120, Math.min(L.w * 1.2, view.w));
    const vh = view.w * wh / ww;
    view.x = Math.max(-view.w * 0.3, Math.min(L.w - view.w * 0.7, view.x));
    view.y = Math.max(-vh * 0.3, Math.min(L.h - vh * 0.7, view.y));
    svg.setAttribute('viewBox', `${view.x.toFixed(1)} ${view.y.toFixed(1)} ${view.w.toFixed(1)} ${vh.toFixed(1)}`);
    svg.style.minWidth = '';
  } else {
    svg.setAttribute('viewBox', `0 0 ${L.w} ${L.h}`);
    svg.style.width = ''; svg.style.height = '';
    // a wide job (a filter, chaining off, a separate sink: five or six
    // columns) keeps its text readable, at four fifths of its size at the
    // least, and the diagram scrolls sideways rather than shrink further
    svg.style.minWidth = Math.round(Math.min(L.w, Math.max(wrapWidth(), L.w * 0.8))) + 'px';
  }
  const more = $('#diagram-more');
  const minW = Math.min(L.w, Math.max(wrapWidth(), L.w * 0.8));
  if (more) more.hidden = phone || scrolledSideways || wrapWidth() >= minW - 4;
  const o = [];
  o.push(`<defs><marker id="arr" viewBox="0 0 6 6" refX="5" refY="3" markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0L6,3L0,6z" fill="#bfbfbf"/></marker></defs>`);
  // column heads
  const head = (x, s, w) => T(x, L.top - 10, [s.toUpperCase()], { cls: 'colhead', max: w, style: 'letter-spacing:0' });
  o.push(head(L.kafkaX, `Kafka · ${st.kafka.source_topic || ''}`, L.KW));
  for (const c of L.cols) o.push(head(c.x, `${shortVertex(c.v)} · p=${c.v.parallelism}`, L.SW));
  o.push(head(L.outX, `Kafka · ${st.kafka.sink_topic || ''}`, L.OW));
  o.push(edges(st));
  o.push(jmBox(st));
  o.push(rmBox(st));
  st.kafka.partitions.forEach(p => { if (L.boxes['p:' + p.partition]) o.push(partitionBox(p)); });
  if (st.kafka.partitions.length > L.shownParts.length) {
    const last = L.boxes['p:' + L.shownParts[L.shownParts.length - 1].partition];
    const more = st.kafka.partitions.slice(L.shownParts.length);
    const lag = more.reduce((a, p) => a + p.lag, 0);
    o.push(T(L.kafkaX, last.y + last.h + 13, [`+ ${more.length} more partitions · lag ${fmtN(lag)} (Kafka partitions tab)`, `+ ${more.length} more · lag ${fmtN(lag)}`], { cls: 'small', max: L.KW }));
  }
  for (const c of L.cols) for (const s of c.v.subtasks) o.push(subtaskBox(c.v, s));
  o.push(outputBox(st));
  o.push(T(16, L.tmTop - 10, ['TASKMANAGERS'], { cls: 'colhead' }));
  for (const t of st.taskmanagers || []) o.push(tmBox(t));
  o.push(`<g id="flights"></g>`);
  svg.innerHTML = o.join('');
  Traffic.measureStatics();
  Traffic.render();
}

function shortVertex(v) {
  if (v.id === 'source') return 'Source';
  if (v.id === 'sink') return 'Sink';
  return (v.operators[0] || v.name).replace(/\(.*/, '') + (v.operators.length > 1 ? ' → Sink' : '');
}

function sel(type, id) { return selected && selected.type === type && selected.id === id ? ' sel' : ''; }

function edges(st) {
  const o = [];
  const dens = L.dens;
  // partition -> reader
  for (const p of L.shownParts) {
    const b = L.boxes['p:' + p.partition], r = p.reader && L.boxes['st:' + p.reader];
    if (!b || !r) continue;
    o.push(`<path class="edge" d="M${b.x + b.w},${b.y + b.h / 2} C${b.x + b.w + 45},${b.y + b.h / 2} ${r.x - 45},${r.y + 16} ${r.x},${r.y + 16}"/>`);
  }
  // channels: producer -> gauge of the consumer
  for (let ci = 1; ci < L.cols.length; ci++) {
    const c = L.cols[ci], prev = L.cols[ci - 1];
    if (dens === 'normal') {
      for (const s of c.v.subtasks) (s.inputs || []).forEach((ch, j) => {
        const from = L.anchors[ch.producer] || findByBase(prev, ch.producer);
        const g = L.anchors[`${s.name}/ch-${j}`];
        if (!from || !g) return;
        const x1 = from.x + from.w, y1 = from.y + from.h / 2, x2 = g.x - 1, y2 = g.y + g.h / 2;
        o.push(`<path class="edge${ch.in_use || ch.backlog ? ' hot' : ''}" d="M${x1},${y1} C${x1 + 45},${y1} ${x2 - 45},${y2} ${x2},${y2}" marker-end="url(#arr)"/>`);
      });
    } else {
      const a = prev.v.subtasks, b = c.v.subtasks;
      if (!a.length || !b.length) continue;
      const fa = L.boxes['st:' + a[0].name], la = L.boxes['st:' + a[a.length - 1].name];
      const fb = L.boxes['st:' + b[0].name], lb = L.boxes['st:' + b[b.length - 1].name];
      const x1 = fa.x + fa.w, x2 = fb.x;
      o.push(`<path d="M${x1},${fa.y} C${x1 + 40},${fa.y} ${x2 - 40},${fb.y} ${x2},${fb.y} L${x2},${lb.y + lb.h} C${x2 - 40},${lb.y + lb.h} ${x1 + 40},${la.y + la.h} ${x1},${la.y + la.h} Z" fill="#f0f5ff" stroke="#d6e4ff"/>`);
      const my = (Math.min(fa.y, fb.y) + Math.max(la.y + la.h, lb.y + lb.h)) / 2;
      const room = x2 - x1 - 8;
      o.push(T((x1 + x2) / 2, my, [c.v.input_partitioner || ''], { cls: 'small', anchor: 'middle', max: room }));
      o.push(T((x1 + x2) / 2, my + 12, [`${a.length}×${b.length} channels`, `${a.length}×${b.length}`], { cls: 'small', anchor: 'middle', max: room }));
    }
  }
  // sinks -> output
  const last = L.cols[L.cols.length - 1];
  if (last) {
    const ob = L.boxes.out;
    for (const s of last.v.subtasks) {
      const b = L.boxes['st:' + s.name];
      if (dens !== 'normal' && s.index % Math.ceil(last.v.subtasks.length / 8) !== 0) continue;
      o.push(`<path class="edge" d="M${b.x + b.w},${b.y + b.h / 2} C${b.x + b.w + 45},${b.y + b.h / 2} ${ob.x - 45},${ob.y + 40} ${ob.x},${ob.y + 40}" marker-end="url(#arr)"/>`);
    }
  }
  return o.join('');
}

function findByBase(col, name) {
  const base = name.replace(/#\d+$/, '');
  const s = col.v.subtasks.find(x => x.name.replace(/#\d+$/, '') === base);
  return s && L.boxes['st:' + s.name];
}

// the job's status: the log's last job_status (Stats), which a view of the
// JobManager taken before the run ended may not have caught up with
function jobStatus(st) { return st.stats.job_status || (st.job && st.job.state) || '—'; }

function jmBox(st) {
  const b = L.boxes.jm, j = st.job || {};
  const status = jobStatus(st);
  const col = STATUS_COLOR[status] || '#8c8c8c';
  const cp = j.checkpoint;
  let cpText = ['no checkpoint yet'];
  if (cp) {
    const what = cp.kind === 'savepoint' || cp.kind === 'stop-with-savepoint' ? 'savepoint' : 'checkpoint';
    if (cp.status === 'IN_PROGRESS') cpText = [`${what} ${cp.id} in progress · ${cp.acknowledged}${cp.tasks ? '/' + cp.tasks : ''} acknowledged · ${cp.unaligned ? 'unaligned' : 'aligned'}`, `${what} ${cp.id} in progress · ${cp.unaligned ? 'unaligned' : 'aligned'}`];
    else if (cp.status === 'COMPLETED') cpText = [`${what} ${cp.id} completed in ${durMs(cp.duration_ms)} · ${fmtBytes(cp.checkpointed_size)}`, `${what} ${cp.id} completed in ${durMs(cp.duration_ms)}`];
    else cpText = [`${what} ${cp.id} FAILED: ${cp.reason || ''}`];
  }
  const hist = statusHistory.filter(h => h.job === j.jid).slice(-4).map(h => h.status).join(' → ');
  const inner = b.w - 16;
  const att = [['', 'attempt '], ['m', String(j.attempt || 0)], ['', ' · restarts '], ['m', String(j.restarts || 0)]];
  const attW = segsWidth(att, '') + 10;
  return `<g class="clickable${sel('jm', 'jobmanager')}" data-kind="jm" data-id="jobmanager" data-testid="jobmanager">
    <title>JobManager: ${esc(j.name || '')} (${esc(j.jid || '')}) ${esc(status)}</title>
    <rect class="box" x="${b.x}" y="${b.y}" width="${b.w}" height="${b.h}" rx="4"/>
    <rect x="${b.x}" y="${b.y}" width="${b.w}" height="20" rx="4" fill="#001529"/><rect x="${b.x}" y="${b.y + 14}" width="${b.w}" height="6" fill="#001529"/>
    ${T(b.x + 8, b.y + 14, [`JobManager · ${j.name || ''} (${j.jid || ''})`, `JobManager · ${j.jid || ''}`, 'JobManager'], { cls: 'head', max: inner - 112 })}
    <rect x="${b.x + b.w - 104}" y="${b.y + 4}" width="96" height="13" rx="2" fill="${col}"/>
    ${T(b.x + b.w - 56, b.y + 14, [status], { cls: 'headr', anchor: 'middle', max: 90, attrs: ' data-testid="jm-status"' })}
    ${T(b.x + 8, b.y + 35, [att], { max: inner })}
    ${T(b.x + 8 + attW, b.y + 35, [hist], { cls: 'small', max: inner - attW, attrs: ' data-testid="status-history"' })}
    ${T(b.x + 8, b.y + 52, cpText.map(c => [['small', 'CheckpointCoordinator: '], ['', c]]).concat(cpText.map(c => [['', c]])), { max: inner })}
  </g>`;
}

function rmBox(st) {
  const b = L.boxes.rm;
  const alive = (st.taskmanagers || []).filter(t => t.alive);
  const free = alive.reduce((a, t) => a + (t.slots || []).filter(x => !x).length, 0);
  const total = alive.reduce((a, t) => a + (t.slots || []).length, 0);
  const inner = b.w - 16;
  return `<g><rect class="box" x="${b.x}" y="${b.y}" width="${b.w}" height="${b.h}" rx="4"/>
    ${T(b.x + 8, b.y + 17, ['ResourceManager'], { cls: 'title', max: inner })}
    ${T(b.x + 8, b.y + 35, [`${alive.length} TaskManagers · ${total - free}/${total} slots used`, `${alive.length} TMs · ${total - free}/${total} slots`], { max: inner })}
    ${T(b.x + 8, b.y + 52, [`${st.settings.slots} per TaskManager · the job needs ${st.job.slots_needed || '—'}`, `${st.settings.slots}/TM · needs ${st.job.slots_needed || '—'}`], { cls: 'small', max: inner })}</g>`;
}

function partitionBox(p) {
  const b = L.boxes['p:' + p.partition];
  const paused = p.paused || p.user_paused;
  const why = p.user_paused ? 'producer paused' : p.paused ? 'paused by alignment' : '';
  const inner = b.w - 16;
  if (L.dens !== 'normal') {
    return `<g class="clickable${sel('part', String(p.partition))}" data-kind="part" data-id="${p.partition}" data-testid="partition">
      <title>partition ${p.partition}: end offset ${p.end_offset}, read offset ${p.read_offset}, lag ${p.lag}${why ? ', ' + why : ''}</title>
      <rect class="box" x="${b.x}" y="${b.y}" width="${b.w}" height="${b.h}" rx="3"/>
      ${T(b.x + 6, b.y + 15, [`p${p.partition}  lag ${fmtN(p.lag)}  end ${fmtN(p.end_offset)}`, `p${p.partition} lag ${fmtN(p.lag)}`], { cls: 'm', max: b.w - (paused ? 30 : 12) })}
      ${paused ? pauseMark(b.x + b.w - 18, b.y + 5, `partition ${p.partition}: ${why}`) : ''}</g>`;
  }
  const lagW = Math.min(b.w - 16, p.end_offset ? (b.w - 16) * p.lag / Math.max(1, p.end_offset - (p.committed_offset > 0 ? p.committed_offset : 0)) : 0);
  const lag = `lag ${fmtN(p.lag)}`, lagPx = textWidth(lag, 'm') + 8;
  const reader = `→ ${p.reader || 'no reader'}`, readerPx = Math.min(inner * 0.6, textWidth(reader, 'small') + 4);
  return `<g class="clickable${sel('part', String(p.partition))}" data-kind="part" data-id="${p.partition}" data-testid="partition">
    <title>partition ${p.partition}: end offset ${p.end_offset}, read offset ${p.read_offset}, lag ${p.lag}, read by ${p.reader || 'no reader'}${why ? ', ' + why : ''}</title>
    <rect class="box" x="${b.x}" y="${b.y}" width="${b.w}" height="${b.h}" rx="3"/>
    ${T(b.x + 8, b.y + 15, [`partition ${p.partition}`, `p${p.partition}`], { cls: 'title', max: inner - lagPx })}
    ${T(b.x + b.w - 8, b.y + 15, [lag], { cls: 'm', anchor: 'end', max: inner * 0.6, style: p.lag > 1000 ? 'fill:#d46b08;font-weight:600' : '' })}
    ${T(b.x + 8, b.y + 28, [`end ${fmtN(p.end_offset)} · read ${fmtN(p.read_offset)}`, `${fmtN(p.read_offset)}/${fmtN(p.end_offset)}`], { cls: 'small m', max: inner })}
    <rect x="${b.x + 8}" y="${b.y + 32}" width="${b.w - 16}" height="3" fill="#f0f0f0"/>
    <rect x="${b.x + 8}" y="${b.y + 32}" width="${Math.max(0, lagW)}" height="3" fill="${p.lag > 1000 ? '#fa8c16' : '#ffd591'}"/>
    ${paused ? pauseMark(b.x + 8, b.y + 37, `partition ${p.partition}: ${why}`) + T(b.x + 24, b.y + 47, [why, 'paused'], { cls: 'small', max: inner - 16 - readerPx - 6 }) : ''}
    ${T(b.x + b.w - 8, b.y + 47, [reader], { cls: 'small', anchor: 'end', max: readerPx })}</g>`;
}

function busyBar(x, y, w, h, s) {
  const tot = Math.max(1, s.busy + s.backpressured + s.idle);
  const wb = w * s.busy / tot, wp = w * s.backpressured / tot, wi = w - wb - wp;
  return `<rect data-ink="1" x="${x}" y="${y}" width="${w}" height="${h}" fill="none"/><rect x="${x}" y="${y}" width="${wb}" height="${h}" fill="#ee6464"/>` +
    `<rect x="${x + wb}" y="${y}" width="${wp}" height="${h}" fill="#000"/>` +
    `<rect x="${x + wb + wp}" y="${y}" width="${Math.max(0, wi)}" height="${h}" fill="#5db1ff"/>`;
}

// localOf is what a channel's gauge shows: a RemoteInputChannel its buffers
// in use of its exclusive and floating ones (red when it has no credit
// left); a LocalInputChannel, which has no credit nor buffers of its own
// (it reads the producer's subpartition view), the buffers waiting in the
// producer's subpartition of at most max-buffers-per-channel.
function gaugeOf(ch) {
  if (ch.local) {
    const prod = findSubtask(ch.producer);
    const sub = ch.subpartition != null ? ch.subpartition : 0;
    const q = prod && prod.s.output_queues ? prod.s.output_queues[sub] || 0 : ch.backlog || 0;
    const cap = Math.max(1, (S.settings.max_buffers_per_channel || 10));
    return { local: true, fill: Math.min(1, q / cap), value: q, cap, full: q >= cap, sub };
  }
  const cap = Math.max(1, ch.capacity || 1);
  return { local: false, fill: Math.min(1, (ch.in_use || 0) / cap), value: ch.in_use || 0, cap: ch.capacity, full: ch.capacity > 0 && ch.credit === 0 && !ch.ended };
}

function gauge(g, ch, dens) {
  const gv = gaugeOf(ch);
  const stroke = gv.full ? (gv.local ? '#d46b08' : '#f5222d') : ch.local ? '#13c2c2' : '#8c8c8c';
  const fillCol = gv.full ? (gv.local ? '#ffc069' : '#ff7875') : ch.local ? '#87e8de' : '#69c0ff';
  const horizontal = dens === 'normal';
  const fw = horizontal ? g.w * gv.fill : g.w, fh = horizontal ? g.h : g.h * gv.fill;
  const fy = horizontal ? g.y : g.y + g.h - fh;
  const what = gv.local ? `LocalInputChannel ${ch.index} from ${ch.producer}: reads ${ch.producer}'s subpartition ${gv.sub} in place (no credit); ${gv.value} of at most ${gv.cap} buffers waiting there`
    : `RemoteInputChannel ${ch.index} from ${ch.producer}: ${ch.in_use}/${ch.capacity} buffers in use, credit ${ch.credit}, backlog ${ch.backlog}`;
  const marks = [];
  const mark = ch.blocked ? 'blocked' : ch.persisting ? 'persisting' : Traffic.markOf(`${ch.owner}/ch-${ch.pos}`);
  if (dens === 'normal') {
    const my = g.y - 1.5;
    if (mark === 'blocked') marks.push(pauseMark(g.x - G.gaugeX + G.markX, my, `channel ${ch.index}: blocked by checkpoint alignment`));
    else if (mark === 'persisting') marks.push(persistMark(g.x - G.gaugeX + G.markX, my, `channel ${ch.index}: in-flight data persisted (unaligned checkpoint)`));
  } else if (mark) {
    marks.push(`<rect x="${g.x}" y="${g.y - 3}" width="${g.w}" height="2" fill="${mark === 'persisting' ? '#722ed1' : '#000'}"/>`);
  }
  const label = dens === 'normal' ? T(g.x - G.gaugeX + G.labelX, g.y + 8, [`ch${ch.index}`], { cls: 'small', max: G.textX - G.labelX - 3 }) : '';
  return `<g class="clickable" data-kind="chan" data-id="${esc(ch.owner)}/ch-${ch.index}" data-testid="channel-gauge" data-local="${ch.local ? 1 : 0}">
    <title>${esc(what)}${ch.blocked ? ', blocked by alignment' : ''}${ch.persisting ? ', persisting in-flight data' : ''}${ch.ended ? ', ended' : ''}</title>
    ${label}<rect x="${g.x}" y="${g.y}" width="${g.w}" height="${g.h}" fill="${ch.ended ? '#f5f5f5' : '#fff'}" stroke="${stroke}"${ch.local ? ' stroke-dasharray="2 1.5"' : ''}/>
    <rect x="${g.x}" y="${fy}" width="${fw}" height="${fh}" fill="${fillCol}"/>${marks.join('')}<rect data-ink="1" x="${g.x}" y="${g.y}" width="${g.w}" height="${g.h}" fill="none"/></g>`;
}

function subtaskBox(v, s) {
  const b = L.boxes['st:' + s.name];
  let { bg, border } = nodeColors(s.busy, s.backpressured);
  if (s.planned) { bg = '#bfbfbf'; border = '#bfbfbf'; }
  if (s.lost) border = LOST_COLOR;
  const dens = L.dens;
  const isSource = v.id === 'source';
  const isKeyed = v.id === 'window'; // jobgraph.VertexKeyed: the only vertex with key groups
  const inputs = (s.inputs || []).map((ch, pos) => ({ ...ch, owner: s.name, pos }));
  const dead = s.status === 'CANCELED' || s.status === 'FAILED' || s.planned ? ' dead' : '';
  const o = [`<g class="clickable${sel('st', s.name)}${dead}" data-kind="st" data-id="${esc(s.name)}" data-testid="subtask" data-vertex="${esc(v.id)}">`];
  o.push(`<title>${esc(s.name)} on ${esc(s.task_manager || '—')} · ${esc(subtaskStatusText(s))} · busy ${s.busy} · backpressured ${s.backpressured} · idle ${s.idle} ms/s</title>`);
  o.push(`<rect class="box" x="${b.x}" y="${b.y}" width="${b.w}" height="${b.h}" rx="3" style="stroke:${border}"${s.lost ? ' stroke-dasharray="4 3"' : ''}/>`);
  const hh = dens === 'mini' ? b.h : 17;
  o.push(`<rect x="${b.x}" y="${b.y}" width="${b.w}" height="${hh}" rx="3" fill="${bg}"/>`);
  if (dens !== 'mini') o.push(`<rect x="${b.x}" y="${b.y + hh - 4}" width="${b.w}" height="4" fill="${bg}"/>`);
  const bpTag = s.backpressure_level !== 'ok' ? ` · BP ${s.backpressure_level.toUpperCase()}` : '';
  const where = s.planned ? 'not deployed' : (s.task_manager || '') + subtaskLostMark(s);
  const state = s.status !== 'RUNNING' ? ' · ' + s.status : '';
  const rightAlts = [`${where}${state}${bpTag}`, `${where}${state}`, `${s.status}`];
  const nameW = textWidth(s.name, 'head');
  const markOf = c => c.blocked ? 'blocked' : c.persisting ? 'persisting' : Traffic.markOf(`${s.name}/ch-${c.pos}`);
  const anyBlocked = inputs.some(c => markOf(c) === 'blocked'), anyPersist = inputs.some(c => markOf(c) === 'persisting');
  if (dens === 'mini') {
    o.push(T(b.x + 5, b.y + 11, [s.name], { cls: 'head', max: 86 }));
    o.push(T(b.x + 5, b.y + 25, [`${fmtWM(s.watermark)}${s.watermark_idle ? ' idle' : ''}`], { cls: 'headr', max: 118 }));
    o.push(T(b.x + 96, b.y + 11, rightAlts, { cls: 'headr', max: b.w - 100 }));
    inputs.forEach((ch, j) => o.push(gauge(gaugeRect(b, j, inputs.length, dens), ch, dens)));
    o.push('</g>');
    return o.join('');
  }
  o.push(T(b.x + 6, b.y + 12.5, [s.name], { cls: 'head', max: b.w * 0.55 }));
  o.push(T(b.x + b.w - 6, b.y + 12.5, rightAlts, { cls: 'headr', anchor: 'end', max: b.w - 22 - Math.min(nameW, b.w * 0.55) }));
  if (dens === 'compact') {
    const markW = anyBlocked || anyPersist ? 16 : 0;
    o.push(T(b.x + 6, b.y + 30, [`W ${fmtWM(s.watermark)}${s.watermark_idle ? ' idle' : ''}`], { cls: 'm', max: 120 }));
    o.push(busyBar(b.x + 6, b.y + b.h - 11, 78, 6, s));
    const what = isSource ? [`reads ${(s.splits || []).map(x => 'p' + x.partition + (x.paused ? ' paused' : '')).join(' ') || 'no split'}`] :
      isKeyed ? [`KG ${s.key_groups[0]}-${s.key_groups[1]} · ${s.keys} keys`, `KG ${s.key_groups[0]}-${s.key_groups[1]}`] : [`${fmtN(s.records_in)} in · ${fmtN(s.records_out)} out`];
    o.push(T(b.x + 130, b.y + 30, what, { cls: 'small', max: b.w - 136 - markW }));
    if (anyBlocked) o.push(pauseMark(b.x + b.w - 16, b.y + 20, 'a channel is blocked by checkpoint alignment'));
    else if (anyPersist) o.push(persistMark(b.x + b.w - 16, b.y + 20, 'in-flight data persisted (unaligned checkpoint)'));
    inputs.forEach((ch, j) => o.push(gauge(gaugeRect(b, j, inputs.length, dens), ch, dens)));
    o.push('</g>');
    return o.join('');
  }
  const tx = isSource ? b.x + 8 : b.x + G.textX;
  const tw = b.x + b.w - 8 - tx;
  const wm = fmtWM(s.watermark), idle = s.watermark_idle ? [['small', ' IDLE']] : [];
  o.push(T(tx, b.y + 31, [[['small', 'watermark '], ['m', wm], ...idle], [['small', 'wm '], ['m', wm], ...idle]], { max: tw }));
  o.push(busyBar(tx, b.y + 37, tw, 7, s));
  o.push(T(tx, b.y + 56, [`busy ${s.busy} · bp ${s.backpressured} · idle ${s.idle} ms/s`, `busy ${s.busy} · bp ${s.backpressured} · idle ${s.idle}`], { cls: 'small', max: tw }));
  if (isSource) {
    const splits = (s.splits || []).map(x => `p${x.partition}${x.paused ? ' paused' : ''}${x.idle ? ' idle' : ''}`).join(', ');
    o.push(T(tx, b.y + 70, [[['small', 'reads '], ['', splits || 'no split']]], { max: tw }));
    o.push(T(tx, b.y + 84, [`${fmtN(s.records_out)} out · out pool ${(s.out_pool_usage * 100).toFixed(0)}%${s.blocked_now ? ' · blocked' : ''}`,
      `${fmtN(s.records_out)} out · ${(s.out_pool_usage * 100).toFixed(0)}%${s.blocked_now ? ' · blocked' : ''}`], { cls: 'small', max: tw }));
  } else if (!isKeyed) {
    // ParseOrder, Filter or an unchained sink: no keyed state
    o.push(T(tx, b.y + 70, [[['m', fmtN(s.records_in)], ['small', ' in · '], ['m', fmtN(s.records_out)], ['small', ' out']]], { max: tw }));
    o.push(T(tx, b.y + 84, [`out pool ${(s.out_pool_usage * 100).toFixed(0)}%${s.blocked_now ? ' · blocked' : ''}`], { cls: 'small', max: tw }));
  } else {
    o.push(T(tx, b.y + 70, [[['small', 'key groups '], ['m', `${s.key_groups[0]}–${s.key_groups[1]}`]], [['small', 'KG '], ['m', `${s.key_groups[0]}–${s.key_groups[1]}`]]], { max: tw }));
    const late = s.late_dropped ? [['small', ' · late '], ['m', fmtN(s.late_dropped)]] : [];
    o.push(T(tx, b.y + 84, [[['m', fmtN(s.keys)], ['small', ' keys · '], ['m', fmtN(s.windows)], ['small', ' windows'], ...late],
      [['m', fmtN(s.keys)], ['small', ' k · '], ['m', fmtN(s.windows)], ['small', ' w'], ...late]], { max: tw }));
  }
  inputs.forEach((ch, j) => o.push(gauge(gaugeRect(b, j, inputs.length, dens), ch, dens)));
  o.push('</g>');
  return o.join('');
}

function outputBox(st) {
  const b = L.boxes.out, out = st.output;
  const iso = out.isolation || st.settings.isolation;
  const inner = b.w - 16;
  const o = [`<g class="clickable${sel('out', 'out')}" data-kind="out" data-id="out" data-testid="output">
    <rect class="box" x="${b.x}" y="${b.y}" width="${b.w}" height="${b.h}" rx="4"/>
    ${T(b.x + 8, b.y + 17, [st.kafka.sink_topic || ''], { cls: 'title', max: inner })}
    ${T(b.x + 8, b.y + 31, [`${fmtN(st.kafka.sink_records)} records · LSO ${fmtN(out.last_stable_offset)}`], { cls: 'small', max: inner })}
    ${T(b.x + 8, b.y + 47, [[['m', fmtN(out.visible)], ['', ' results visible']]], { max: inner })}
    ${T(b.x + 8, b.y + 59, [`to a ${iso} consumer`], { cls: 'small', max: inner })}
    ${T(b.x + 8, b.y + 71, [`open ${out.open} · pre-committed ${out.pre_committed}`], { cls: 'small', max: inner })}
    ${T(b.x + 8, b.y + 83, [`committed ${out.committed} · aborted ${out.aborted}`], { cls: 'small', max: inner })}`];
  const recent = (out.recent || []).slice(-5);
  recent.forEach((r, i) => {
    let v = {}; try { v = JSON.parse(r.value); } catch { }
    const label = v.window_start != null ? `${v.key} [${fmtTS(v.window_start).slice(0, 8)}) = ${v.value}` : `${r.key} ${r.value.slice(0, 26)}`;
    const col = r.state === 'Aborted' ? '#cf1322' : r.state === 'Open' ? '#d48806' : r.state === 'PreCommitted' ? '#096dd9' : '#262626';
    const tag = r.state && r.state !== 'Committed' ? ' · ' + r.state : '';
    o.push(T(b.x + 8, b.y + 99 + i * 12, [label + tag, label], { cls: 'small m', max: inner, style: `fill:${col}` }));
  });
  if (out.late_count) o.push(T(b.x + 8, b.y + b.h - 6, [`late side output: ${fmtN(out.late_count)}`], { cls: 'small', max: inner }));
  o.push('</g>');
  return o.join('');
}

function tmBox(t) {
  const b = L.boxes['tm:' + t.name];
  const dead = t.alive ? '' : ' dead';
  const inner = b.w - 16;
  const stateText = t.state || (t.alive ? '' : 'killed');
  const o = [`<g class="clickable${sel('tm', t.name)}${dead}" data-kind="tm" data-id="${esc(t.name)}" data-testid="tm" data-tm="${esc(t.name)}">
    <title>${esc(t.name)}${stateText ? ' · ' + esc(stateText) : ''} · ${esc((t.tasks || []).join(', '))}</title>
    <rect class="box" x="${b.x}" y="${b.y}" width="${b.w}" height="${b.h}" rx="4"/>
    ${T(b.x + 8, b.y + 16, [`${t.name}${tmLossMark(t)}`, `${t.name}${t.alive ? '' : ' ✕'}`], { cls: 'title', max: t.alive ? 60 : inner })}
    ${t.alive && stateText ? T(b.x + 70, b.y + 16, [stateText], { cls: 'small', max: b.w - 78 }) : ''}`];
  const slots = t.slots || [];
  slots.slice(0, 8).forEach((a, i) => {
    o.push(`<rect x="${b.x + 8 + i * 19}" y="${b.y + 24}" width="16" height="16" rx="2" fill="${a ? '#1890ff' : '#fff'}" stroke="#91d5ff"><title>slot ${i}${a ? ' allocated ' + esc(a) : ' free'}</title></rect>`);
  });
  const tasks = (t.tasks || []);
  const list = tasks.join(', ');
  const note = t.alive ? '' : (t.loss_detected ? 'loss detected' : 'not yet detected');
  const alts = note ? [`${note} · ${list || 'no tasks'}`, note] : [list || 'no tasks', `${tasks.length} tasks: ${list}`];
  o.push(T(b.x + 8, b.y + 56, alts, { cls: 'small', max: inner, style: note ? `fill:${LOST_COLOR}` : undefined }));
  o.push('</g>');
  return o.join('');
}

// ---------------------------------------------------------------- animation

let lastFlights = 0;
function animate(now) {
  Traffic.tick(now);
  if (S && !document.hidden) {
    if (dirty && now - lastRender >= STATIC_EVERY) { dirty = false; lastRender = now; render(); }
    else if (now - lastFlights >= 30) { lastFlights = now; Traffic.render(); }
  }
  requestAnimationFrame(animate);
}

function renderTop() {
  const st = S;
  $('#job-name').textContent = st.job && st.job.name ? `${st.job.name}` : 'job';
  const status = jobStatus(st);
  const tag = $('#job-status');
  tag.textContent = status; tag.style.background = STATUS_COLOR[status] || '#8c8c8c';
  $('#vt').textContent = fmtVT(st.vt);
  $('#seed').textContent = st.seed;
  $('#mode').textContent = st.mode === 'replay' ? 'replay of a recorded log' : (st.ended ? 'run over' : '');
  for (const b of $$('[data-speed]')) b.classList.toggle('active', b.dataset.speed === st.speed);
  $('#lagging').hidden = !st.lagging;
  const sl = $('#slider');
  const max = Math.max(1, Math.round(st.timeline.max / 1000));
  if (!sliderDragging) { sl.max = max; sl.value = Math.round(st.vt / 1000); }
  $('#slider-label').textContent = `${fmtVT(sliderDragging ? sl.value * 1000 : st.vt)} / ${fmtVT(st.timeline.max)}`;
  const fut = $('#future');
  fut.hidden = !st.timeline.future;
  fut.textContent = st.timeline.future ? `${st.timeline.future} action(s) ahead — acting now forks` : '';
  const rr = $('#rerun');
  rr.hidden = !st.rerun;
  if (st.rerun) rr.textContent = `re-running to ${fmtVT(st.rerun.target)} … ${Math.round(100 * st.rerun.at / Math.max(1, st.rerun.target))}%`;
  const sel = $('#a-tm');
  const names = (st.taskmanagers || []).filter(t => t.alive).map(t => t.name);
  if (sel.dataset.names !== names.join()) {
    const cur = sel.value;
    sel.innerHTML = names.map(n => `<option>${esc(n)}</option>`).join('');
    if (names.includes(cur)) sel.value = cur;
    sel.dataset.names = names.join();
  }
  if (document.activeElement !== $('#sw-iso')) $('#sw-iso').value = st.settings.isolation;
  if (document.activeElement !== $('#sw-unaligned')) $('#sw-unaligned').checked = !!st.settings.unaligned;
}

function renderStats() {
  const s = S.stats, st = S;
  const lc = s.last_checkpoint;
  // each row one short line, so that the column keeps its height
  let lcText = '—', lcMore = '—', lcMoreLabel = 'Its alignment';
  if (lc) {
    lcText = lc.status === 'COMPLETED' ? `#${lc.id} · ${durMs(lc.duration_ms)}` : `#${lc.id} FAILED`;
    if (lc.unaligned) { lcMoreLabel = 'Its in-flight records'; lcMore = lc.status === 'COMPLETED' ? fmtN(lc.persisted_records) : '—'; }
    else lcMore = lc.status === 'COMPLETED' ? durMs(lc.max_alignment_ms) : '—';
  }
  const rows = [
    ['Job status', `<span style="color:${STATUS_COLOR[s.job_status] || '#262626'}">${esc(s.job_status || '—')}</span>`],
    ['Records read', `<span data-testid="records-read">${fmtN(s.records_read)}</span>`],
    ['Windows fired', fmtN(s.windows_fired)],
    [`<span title="to a ${esc(st.output.isolation || st.settings.isolation)} consumer">Results visible</span>`, fmtN(s.results_visible)],
    ['Uncommitted results', fmtN(s.results_uncommitted)],
    ['Duplicates', fmtN(s.duplicates)],
    ['<span title="late records dropped / sent to the late side output">Late: dropped / side</span>', `${fmtN(s.late_dropped)} / ${fmtN(s.late_side_output)}`],
    ['Expired state reads', fmtN(s.expired_state_reads)],
    ['<span title="checkpoints completed / failed">Checkpoints ok / failed</span>', `${fmtN(s.checkpoints_completed)} / ${fmtN(s.checkpoints_failed)}`],
    ['<span title="the last checkpoint or savepoint that ended: its id and duration">Last checkpoint</span>', lcText],
    [`<span title="the last checkpoint's longest alignment (aligned), or the records persisted as channel state (unaligned)">${lcMoreLabel}</span>`, lcMore],
    ['Restarts', fmtN(s.restarts)],
    ['<span title="the highest backPressuredTimeMsPerSecond of the last metrics tick">Backpressure now</span>', `<span title="${esc(s.backpressure_now_task || '')}">${s.backpressure_now} ms/s ${backpressureLevel(s.backpressure_now).toUpperCase()}</span>`],
    ['<span title="the highest backPressuredTimeMsPerSecond of the run">Highest backpressure</span>', `<span title="${esc(s.max_backpressure_task || '')}">${s.max_backpressure} ms/s ${backpressureLevel(s.max_backpressure).toUpperCase()}</span>`],
  ];
  $('#stats-list').innerHTML = rows.map(([k, v]) => `<dt>${k}</dt><dd title="${esc(v.replace(/<[^>]*>/g, ''))}">${v}</dd>`).join('');
  const notices = st.notices || [];
  $('#notices').hidden = !notices.length;
  $('#notice-list').innerHTML = notices.slice(-6).reverse().map(n => `<li><span class="mono hint">${fmtVT(n.vt)}</span> ${esc(n.text)}</li>`).join('');
}

function backpressureLevel(ms) { const r = ms / 1000; return r <= 0.1 ? 'ok' : r <= 0.5 ? 'low' : 'high'; }

// ---------------------------------------------------------------- inspector

function findSubtask(name) {
  for (const v of S.vertices || []) for (const s of v.subtasks) if (s.name === name) return { v, s };
  return null;
}
function row(k, v) { return `<div class="row"><span>${k}</span><span>${v}</span></div>`; }

function renderInspector() {
  const t = $('#insp-title'), body = $('#insp-body');
  if (!selected) return;
  const st = S;
  let html = '';
  switch (selected.type) {
    case 'tm': {
      const tm = (st.taskmanagers || []).find(x => x.name === selected.id);
      t.textContent = `TaskManager ${selected.id}`;
      if (!tm) { html = '<p class="hint">gone</p>'; break; }
      html += row('state', tmStateText(tm));
      html += row('slots', `${(tm.slots || []).filter(Boolean).length}/${(tm.slots || []).length} allocated`);
      (tm.slots || []).forEach((a, i) => { html += row(`slot ${i}`, a ? esc(a) : 'free'); });
      html += row('tasks', esc((tm.tasks || []).join(', ') || '—'));
      if (tm.alive) html += `<div class="acts"><button class="danger" data-do="kill-taskmanager ${esc(tm.name)}" data-testid="kill-tm">Kill ${esc(tm.name)}</button></div>
        <p class="hint">The JobManager notices after heartbeat.timeout; the ResourceManager starts a replacement; the job restarts if the restart strategy allows.</p>`;
      break;
    }
    case 'part': {
      const p = st.kafka.partitions.find(x => String(x.partition) === selected.id);
      t.textContent = `Partition ${st.kafka.source_topic}-${selected.id}`;
      if (!p) break;
      html += row('end offset', fmtN(p.end_offset)) + row('read offset', fmtN(p.read_offset)) + row('lag', fmtN(p.lag));
      html += row('committed offset', p.committed_offset < 0 ? 'none' : fmtN(p.committed_offset));
      html += row('reader', esc(p.reader || 'none')) + row('split watermark', esc(fmtWM(p.watermark))) + row('idle', p.idle ? 'yes' : 'no');
      html += row('paused', p.user_paused ? 'producer paused (pause-partition)' : p.paused ? PAUSED + ' by watermark alignment' : 'no');
      html += `<div class="acts"><button data-do="pause-partition ${p.partition}">Pause</button><button data-do="resume-partition ${p.partition}">Resume</button>
        <button data-do="send-event key=user-7 ts=now partition=${p.partition}">Send user-7@now</button>
        <button data-do="send-event key=user-7 ts=now-30s partition=${p.partition}">Send user-7@now-30s</button></div>`;
      break;
    }
    case 'jm': {
      const j = st.job;
      t.textContent = 'JobManager';
      html += row('job', `${esc(j.name)} (${esc(j.jid)})`) + row('status', esc(j.state)) + row('attempt', j.attempt) + row('restarts', j.restarts);
      html += row('status history', esc(statusHistory.filter(h => h.job === j.jid).slice(-6).map(h => `${h.status}@${fmtVT(h.vt)}`).join(' → ') || '—'));
      const cp = j.checkpoint;
      if (cp) html += row('checkpoint', `${cp.id} ${esc(cp.kind)} ${esc(cp.status)}`);
      html += `<div class="acts"><button data-do="trigger-checkpoint">Trigger checkpoint</button><button data-do="trigger-savepoint">Trigger savepoint</button>
        <button data-do="stop-with-savepoint">Stop with savepoint</button></div>
        <div class="acts"><label>rescale to <input id="insp-rescale" size="3" value="${Math.max(1, (st.vertices[0] || { parallelism: 2 }).parallelism + 1)}"></label><button data-do-rescale>Rescale</button></div>`;
      break;
    }
    case 'st': {
      const f = findSubtask(selected.id);
      t.textContent = `Subtask ${selected.id}`;
      if (!f) { html = '<p class="hint">not in the current attempt</p>'; break; }
      const s = f.s;
      html += row('vertex', esc(f.v.name)) + row('task manager', esc(s.task_manager)) + row('status', esc(subtaskStatusText(s))) + row('attempt', s.attempt);
      html += row('watermark', `${esc(fmtWM(s.watermark))}${s.watermark_idle ? ' (IDLE)' : ''}`);
      html += row('busy / backpressured / idle', `${s.busy} / ${s.backpressured} / ${s.idle} ms/s`) + row('backpressure', s.backpressure_level.toUpperCase());
      html += row('records in / out', `${fmtN(s.records_in)} / ${fmtN(s.records_out)}`);
      html += row('out pool usage', `${(s.out_pool_usage * 100).toFixed(0)}%`) + row('output queues', esc((s.output_queues || []).join(' ')));
      if (s.splits && s.splits.length) {
        html += '<h3>Splits</h3><table><tr><th>partition</th><th>offset</th><th>watermark</th><th></th></tr>' +
          s.splits.map(x => `<tr><td>p${x.partition}</td><td>${fmtN(x.offset)}</td><td>${esc(fmtWM(x.watermark))}</td><td>${x.paused ? PAUSED : ''}${x.idle ? 'idle' : ''}${x.finished ? 'done' : ''}</td></tr>`).join('') + '</table>';
      }
      if (f.v.id !== 'source') {
        const keyed = f.v.id === 'window';
        if (keyed) html += row('key groups', `${s.key_groups[0]}–${s.key_groups[1]}`) + row('keys / windows', `${fmtN(s.keys)} / ${fmtN(s.windows)}`) + row('late records dropped', fmtN(s.late_dropped));
        html += row('checkpoint (barrier handler)', s.checkpoint || '—');
        html += '<h3>Input channels</h3><table><tr><th>ch</th><th>from</th><th>buffers</th><th>credit</th><th>backlog</th><th>watermark</th></tr>' +
          (s.inputs || []).map(c => {
            const gv = gaugeOf(c);
            const buf = gv.local ? `${gv.value}/${gv.cap} at the producer` : `${c.in_use}/${c.capacity}`;
            const credit = gv.local ? '— (local)' : `<span style="color:${c.credit === 0 ? '#cf1322' : ''}">${c.credit}</span>`;
            return `<tr><td>${c.index}${c.blocked ? ' ' + PAUSED : ''}${c.persisting ? ' ↯' : ''}</td><td>${esc(c.producer)} ${c.local ? '(local)' : '(remote)'}</td><td>${buf}</td><td>${credit}</td><td>${gv.local ? gv.value : c.backlog}</td><td>${esc(fmtWM(c.watermark))}</td></tr>`;
          }).join('') + '</table>';
        if (keyed) html += `<div class="acts"><button data-tab-go="keyed">Keyed state</button><label>explain key <input id="insp-key" size="8" value="user-7"></label><button data-explain>Explain</button></div><div id="explain-out"></div>`;
      }
      break;
    }
    case 'chan': {
      const [owner, ch] = selected.id.split('/ch-');
      const f = findSubtask(owner);
      t.textContent = `Input channel ${selected.id}`;
      const c = f && (f.s.inputs || [])[+ch];
      if (!c) break;
      const gv = gaugeOf(c);
      html += row('from', esc(c.producer)) + row('kind', c.local ? 'LocalInputChannel' : 'RemoteInputChannel');
      if (gv.local) {
        // LocalInputChannel reads the producer's subpartition view in place:
        // no credit, no buffers of its own (Flink's credit-based flow
        // control is for RemoteInputChannel)
        html += row('reads', `${esc(c.producer)}'s subpartition ${gv.sub} in place (same TaskManager): no credit, no buffers of its own`);
        html += row('waiting at the producer', `${gv.value} of at most ${gv.cap} buffers (max-buffers-per-channel)${gv.full ? ' — full: the producer is backpressured' : ''}`);
      } else {
        html += row('buffers in use', `${c.in_use} of ${c.capacity} (exclusive + floating)`) + row('credit', `${c.credit}${c.credit === 0 ? ' — out of credit: the producer must wait' : ''}`);
        html += row('backlog', c.backlog);
      }
      html += row('queued in the gate', c.queued) + row('records in', fmtN(c.records_in));
      html += row('watermark', esc(fmtWM(c.watermark))) + row('blocked by alignment', c.blocked ? PAUSED + ' yes' : 'no') + row('persisting (unaligned)', c.persisting ? '↯ yes' : 'no');
      break;
    }
    case 'out': {
      const o = st.output;
      t.textContent = `Sink topic ${st.kafka.sink_topic}`;
      html += row('records', fmtN(st.kafka.sink_records)) + row('consumer', esc(o.isolation)) + row('visible', fmtN(o.visible));
      html += row('uncommitted', fmtN(o.uncommitted)) + row('duplicates', fmtN(o.duplicates)) + row('view from offset', fmtN(o.from_offset));
      html += row('last stable offset', fmtN(o.last_stable_offset));
      const other = o.isolation === 'read_committed' ? 'read_uncommitted' : 'read_committed';
      html += `<div class="acts"><button data-do="set sim.output.isolation-level=${other}">Switch the consumer to ${other}</button><button data-tab-go="output">Output</button></div>`;
      break;
    }
    case 'key': {
      t.textContent = `Key ${selected.id}`;
      html = `<div id="explain-out"><p class="hint">asking…</p></div>`;
      explainKey(selected.id);
      break;
    }
    case 'window': {
      const w = selected.data;
      t.textContent = `Window of ${w.key}`;
      const f = findSubtask(w.owner);
      const wm = f ? f.s.watermark : null;
      html += row('window', `[${esc(fmtTS(w.start))}, ${esc(fmtTS(w.end))})`) + row('count', fmtN(w.count)) + row('aggregate', w.value);
      html += row('fires at', `${esc(fmtTS(w.fires_at))} (watermark ≥ end − 1 ms)`);
      html += row('cleaned up at', `${esc(fmtTS(w.cleanup_at))} (end − 1 + allowed lateness)`);
      html += row('watermark now', esc(fmtWM(wm)));
      if (wm != null && wm > LONG_MIN) html += row('fires in', w.fired ? `fired ${w.fired}×` : `${durMs(Math.max(0, w.fires_at - wm))} of event time`);
      break;
    }
  }
  // While the pointer is over the panel its buttons stay where they are
  // (the numbers wait), unless the buttons themselves change: a TaskManager
  // killed from its own Kill button shows "killed" at once.
  const frozen = inspHover && inspHTML && actsOf(html) === actsOf(inspHTML);
  if (html && html !== inspHTML && !frozen) { body.innerHTML = html; inspHTML = html; }
}
let inspHTML = '', inspHover = false;
function actsOf(html) { return (html.match(/data-do="[^"]*"/g) || []).join(' '); }

async function explainKey(key) {
  try {
    const e = await session.explain(key);
    const out = $('#explain-out');
    if (!out) return;
    let html = row('hashCode()', e.hash_code) + row('murmurHash', e.murmur_hash) + row('key group', `${e.key_group} = murmur % ${e.max_parallelism}`);
    html += row('subtask', `${e.subtask} = ${e.key_group} × ${e.parallelism} / ${e.max_parallelism}`) + row('its key groups', `${e.key_group_range[0]}–${e.key_group_range[1]}`);
    html += row('lives in', esc(e.owner || '—'));
    if (e.state) {
      if (e.state.windows) html += e.state.windows.map(w => row(`window ${fmtTS(w.start)}`, `${w.count} · ${w.value}${w.fired ? ' ✓' : ''}`)).join('');
      else html += row('ValueState', `${e.state.count} · last write ${fmtTS(e.state.last_access_ms)}`);
    } else html += row('state', 'none for this key now');
    out.innerHTML = html;
  } catch (err) {
    const out = $('#explain-out'); if (out) out.innerHTML = `<p class="error">${esc(err.message)}</p>`;
  }
}

// ---------------------------------------------------------------- panels

function renderPanel() {
  switch (activeTab) {
    case 'watermarks': return renderWatermarks();
    case 'output': return renderOutput();
    case 'checkpoints': return renderCheckpoints();
    case 'keyed': return renderKeyed();
    case 'kafka': return renderKafka();
    case 'log': return renderLog();
  }
}

function renderWatermarks() {
  const o = ['<p class="hint">A source reader\'s watermark is the minimum over its active splits; an operator\'s is the minimum over its non-idle input channels (StatusWatermarkValve). The minimum is in bold.</p>',
    '<table class="grid"><tr><th>subtask</th><th>input (split or channel)</th><th class="num">last watermark</th><th></th></tr>'];
  for (const v of S.vertices || []) for (const s of v.subtasks) {
    const ins = v.id === 'source' ? (s.splits || []).map(x => ({ name: `split ${S.kafka.source_topic}-${x.partition}`, wm: x.watermark, idle: x.idle, note: x.paused ? PAUSED + ' paused by alignment' : '' }))
      : (s.inputs || []).map(c => ({ name: `channel ${c.index} ← ${c.producer}`, wm: c.watermark, idle: c.watermark_idle, note: c.ended ? 'ended' : '' }));
    const active = ins.filter(i => !i.idle).map(i => i.wm);
    const min = active.length ? Math.min(...active) : null;
    if (!ins.length) {
      // a reader without a split is the trap: it holds every watermark
      // downstream at Long.MIN_VALUE until withIdleness marks it idle
      const why = v.id === 'source' ? (s.planned ? 'not deployed' : 'no split assigned: it holds the watermark downstream until idleness marks it idle') : 'no input channel';
      o.push(`<tr data-subtask="${esc(s.name)}"><td>${esc(s.name)}</td><td class="sub">${esc(why)}</td><td class="num"></td><td></td></tr>`);
    }
    ins.forEach((i, k) => {
      o.push(`<tr${i.wm === min && !i.idle ? ' class="min"' : ''}${k === 0 ? ` data-subtask="${esc(s.name)}"` : ''}><td>${k === 0 ? esc(s.name) : ''}</td><td>${esc(i.name)}</td><td class="num">${esc(fmtWM(i.wm))}</td><td class="sub">${i.idle ? 'IDLE ' : ''}${esc(i.note)}</td></tr>`);
    });
    o.push(`<tr class="min"><td class="sub">${esc(s.name)}</td><td>→ ${v.id === 'source' ? 'output' : 'operator'} watermark</td><td class="num">${esc(fmtWM(s.watermark))}</td><td class="sub">${s.watermark_idle ? 'IDLE' : ''}</td></tr>`);
  }
  o.push('</table>');
  $('#panel-watermarks').innerHTML = o.join('');
}

function renderOutput() {
  const out = S.output;
  const recent = out.recent || [];
  const committedOnly = out.isolation === 'read_committed';
  const consumer = recent.filter(r => r.offset >= (out.from_offset || 0) && (!committedOnly || !r.state || (r.state === 'Committed' && r.offset < out.last_stable_offset)));
  const rec = r => {
    let v = {}; try { v = JSON.parse(r.value); } catch { }
    return `<tr><td class="num">${r.offset}</td><td class="nw">${esc(v.key != null ? v.key : r.key)}</td><td class="nw mono">${v.window_start != null ? esc(fmtWin(v.window_start, v.window_end)) : ''}</td><td class="num">${esc(v.value != null ? v.value : r.value)}</td><td class="num">${v.firing || ''}</td><td class="state-${esc(r.state || '')}">${esc(r.state || 'plain')}</td><td class="sub">${esc(r.transactional_id || '')}</td></tr>`;
  };
  const head = '<tr><th class="num">offset</th><th>key</th><th>window</th><th class="num">value</th><th class="num">firing</th><th>state</th><th>transaction</th></tr>';
  $('#panel-output').innerHTML = `<div class="cols wide">
    <div><h3>What a ${esc(out.isolation)} consumer sees <span class="sub">${fmtN(out.visible)} results · ${fmtN(out.duplicates)} duplicates · from offset ${fmtN(out.from_offset)}</span></h3>
      <table class="grid">${head}${consumer.slice(-60).reverse().map(rec).join('')}</table></div>
    <div><h3>The whole topic log <span class="sub">open ${out.open} · pre-committed ${out.pre_committed} · committed ${out.committed} · aborted ${out.aborted} · plain ${out.plain} · LSO ${fmtN(out.last_stable_offset)}</span></h3>
      <table class="grid">${head}${recent.slice(-60).reverse().map(rec).join('')}</table></div>
    <div><h3>Late side output <span class="sub">${fmtN(out.late_count)} records</span></h3>
      <table class="grid"><tr><th>virtual time</th><th>subtask</th><th>key</th><th class="num">event time</th></tr>${(out.late || []).slice().reverse().map(l => `<tr><td class="mono">${fmtVT(l.vt)}</td><td>${esc(l.actor)}</td><td>${esc(l.key)}</td><td class="num">${esc(fmtTS(l.timestamp))}</td></tr>`).join('') || '<tr><td colspan="4" class="sub">none (job.window.side-output-late-data sends records too late for every window here)</td></tr>'}</table></div>
  </div>`;
}

function renderCheckpoints() {
  const cks = (S.checkpoints || []).slice().reverse();
  const o = [`<p class="hint">Recent checkpoints and savepoints (the CheckpointCoordinator's, from the log). Backend ${esc(S.settings.state_backend)} · interval ${esc(S.settings.checkpoint_interval)} · ${S.settings.unaligned ? 'unaligned' : 'aligned'}.</p>`,
    '<table class="grid" data-testid="checkpoints-table"><tr><th class="num">id</th><th>kind</th><th>status</th><th class="num">triggered</th><th class="num">duration</th><th class="num">size (checkpointed / full)</th><th class="num">alignment</th><th class="num">in-flight persisted</th><th class="num">acks</th><th>Kafka offsets stored</th></tr>'];
  for (const c of cks) {
    let offs = '';
    if (c.source_offsets) offs = c.source_offsets.map(x => `${x.split}@${x.offset}`).join(' ');
    const dur = c.status === 'COMPLETED' ? durMs(c.duration_ms) : c.status === 'IN_PROGRESS' ? '…' : '';
    o.push(`<tr data-testid="checkpoint-row"><td class="num">${c.id}</td><td>${esc(c.kind)}${c.unaligned ? ' (unaligned)' : ''}</td><td class="st-${c.status}">${esc(c.status)}${c.reason ? ' · ' + esc(c.reason) : ''}</td>
      <td class="num">${fmtVT(c.trigger_vt)}</td><td class="num">${dur}</td><td class="num">${fmtBytes(c.checkpointed_size)} / ${fmtBytes(c.state_size)}</td>
      <td class="num">${c.status === 'COMPLETED' ? durMs(c.max_alignment_ms) : ''}</td><td class="num">${fmtN(c.persisted_records)}</td><td class="num">${c.acknowledged}${c.tasks ? '/' + c.tasks : ''}</td><td class="sub mono">${esc(offs)}${c.savepoint_path ? '<br>' + esc(c.savepoint_path) : ''}</td></tr>`);
  }
  if (!cks.length) o.push('<tr><td colspan="10" class="sub">no checkpoint yet: set execution.checkpointing.interval, or trigger one (Do something)</td></tr>');
  o.push('</table>');
  $('#panel-checkpoints').innerHTML = o.join('');
}

let keyedState = null, keyedAt = 0, keyedBusy = false;
async function fetchKeyed() {
  if (keyedBusy) return;
  keyedBusy = true;
  try { keyedState = await session.state(); keyedAt = performance.now(); renderKeyedTable(); }
  catch { } finally { keyedBusy = false; }
}
function renderKeyed() {
  if (!keyedState || performance.now() - keyedAt > 1000) fetchKeyed();
  renderKeyedTable();
}
function renderKeyedTable() {
  const st = keyedState;
  if (!st) { $('#panel-keyed').innerHTML = '<p class="hint">loading…</p>'; return; }
  const o = [];
  for (const v of st.vertices || []) {
    if (v.id !== 'window') continue; // only the keyed vertex has keyed state
    for (const s of v.subtasks) {
      o.push(`<h3>${esc(s.name)} <span class="sub">key groups ${s.key_groups[0]}–${s.key_groups[1]} · ${fmtN(s.keys)} keys · ${fmtN(s.windows)} windows · watermark ${esc(fmtWM(s.watermark))}${s.more_keys ? ` · ${s.more_keys} more keys not listed` : ''}</span></h3>`);
      const ks = s.keyed_state || [];
      if (!ks.length) { o.push('<p class="sub">no keyed state</p>'); continue; }
      o.push('<table class="grid"><tr><th>key</th><th class="num">key group</th><th>state</th></tr>');
      for (const k of ks.slice(0, 120)) {
        let cell;
        if (k.windows) cell = k.windows.map(w => `<span class="pill k${w.fired ? ' fired' : ''}" data-win='${esc(JSON.stringify({ ...w, key: k.key, owner: s.name }))}' title="fires at ${esc(fmtTS(w.fires_at))}, cleaned up at ${esc(fmtTS(w.cleanup_at))}">[${esc(fmtTS(w.start).slice(0, 8))}, ${esc(fmtTS(w.end).slice(0, 8))}) ${w.count}${st.settings.operator === 'window' && w.value !== w.count ? ' = ' + w.value : ''}${w.fired ? ' ✓' : ''}</span>`).join('');
        else cell = `ValueState ${fmtN(k.count)} · written ${esc(fmtTS(k.last_access_ms))}${k.ttl_ms ? ` · TTL ${durMs(k.ttl_ms)} · expires ${esc(fmtTS(k.last_access_ms + k.ttl_ms))}` : ''}`;
        o.push(`<tr><td><span class="pill k" data-key="${esc(k.key)}">${esc(k.key)}</span></td><td class="num">${k.key_group}</td><td>${cell}</td></tr>`);
      }
      if (ks.length > 120) o.push(`<tr><td colspan="3" class="sub">${ks.length - 120} more keys</td></tr>`);
      o.push('</table>');
    }
  }
  $('#panel-keyed').innerHTML = o.join('') || '<p class="hint">the job is not running</p>';
}

function renderKafka() {
  const parts = S.kafka.partitions.slice(0, 1000);
  const o = [`<p class="hint">Topic ${esc(S.kafka.source_topic)}: splits are assigned to readers by KafkaSourceEnumerator.getSplitOwner. Committed offsets are the last completed checkpoint's (for monitoring only).</p>`,
    '<table class="grid"><tr><th class="num">partition</th><th class="num">end offset</th><th class="num">read offset</th><th class="num">lag</th><th class="num">committed</th><th>reader</th><th class="num">split watermark</th><th></th></tr>'];
  for (const p of parts) {
    o.push(`<tr class="clickable" data-part="${p.partition}"><td class="num">${p.partition}</td><td class="num">${fmtN(p.end_offset)}</td><td class="num">${fmtN(p.read_offset)}</td><td class="num">${fmtN(p.lag)}</td><td class="num">${p.committed_offset < 0 ? '—' : fmtN(p.committed_offset)}</td><td>${esc(p.reader || '—')}</td><td class="num">${esc(fmtWM(p.watermark))}</td><td>${p.user_paused ? PAUSED + ' producer paused' : p.paused ? PAUSED + ' alignment' : ''}${p.idle ? ' idle' : ''}</td></tr>`);
  }
  if (S.kafka.partitions.length > parts.length) o.push(`<tr><td colspan="8" class="sub">${S.kafka.partitions.length - parts.length} more</td></tr>`);
  o.push('</table>');
  $('#panel-kafka').innerHTML = o.join('');
}

let logDirty = true, filtersDirty = true;
function renderLog() {
  if (filtersDirty) {
    for (const [id, set] of [['#log-kind', kindsSeen], ['#log-actor', actorsSeen]]) {
      const sel = $(id), cur = sel.value;
      sel.innerHTML = '<option value="">all</option>' + Array.from(set).sort().map(x => `<option>${esc(x)}</option>`).join('');
      sel.value = cur;
    }
    filtersDirty = false;
  }
  if (!logDirty) return;
  logDirty = false;
  const kind = $('#log-kind').value, actor = $('#log-actor').value, text = $('#log-text').value.trim().toLowerCase();
  const match = events.filter(e => (!kind || e.event === kind) && (!actor || e.actor === actor) && (!text || JSON.stringify(e).toLowerCase().includes(text)));
  const shown = match.slice(-400);
  $('#log-count').textContent = `${match.length} of the last ${events.length} lines${match.length > shown.length ? ` (showing ${shown.length})` : ''}`;
  const lines = $('#log-lines');
  lines.innerHTML = shown.map(e => {
    if (e.event === 'truncated' || e.event === 'skipped') return `<div class="t">${esc(e.text)}</div>`;
    const { vt, actor, event, ...rest } = e;
    return `<div><span class="t">${fmtVT(vt)}</span> <span class="a">${esc(actor)}</span> <span class="k">${esc(event)}</span> ${esc(JSON.stringify(rest))}</div>`;
  }).join('');
  if ($('#log-follow').checked) lines.parentElement.scrollTop = lines.parentElement.scrollHeight;
}

// ---------------------------------------------------------------- settings

let settingsMeta = null;
async function openSettings() {
  settingsMeta = await session.settings();
  const body = $('#settings-body');
  const byGroup = {};
  for (const s of settingsMeta.settings) (byGroup[s.group] = byGroup[s.group] || []).push(s);
  const input = s => {
    if (s.type === 'bool') return `<select data-key="${esc(s.key)}"><option${s.value === 'true' ? ' selected' : ''}>true</option><option${s.value === 'false' ? ' selected' : ''}>false</option></select>`;
    if (s.type === 'enum') return `<select data-key="${esc(s.key)}">${s.range.split('|').map(w => `<option${w === s.value ? ' selected' : ''}>${esc(w)}</option>`).join('')}</select>`;
    return `<input data-key="${esc(s.key)}" value="${esc(s.value)}">`;
  };
  const rowOf = s => `<tr title="${esc(s.doc)}"><td class="lab">${esc(s.label)}</td><td>${input(s)}</td><td class="key">${esc(s.key)}</td>
    <td class="def">range <b>${esc(s.range)}</b></td><td class="def">default <b>${esc(s.sim_default || '""')}</b></td><td class="def">Flink <b>${esc(s.flink_default === '' ? '—' : s.flink_default === s.sim_default ? 'same' : s.flink_default)}</b></td></tr>`;
  const o = [];
  for (const g of settingsMeta.groups) {
    const rows = byGroup[g] || [];
    const seed = rows.filter(s => s.seed).sort((a, b) => a.order - b.order), more = rows.filter(s => !s.seed);
    if (!rows.length) continue;
    o.push(`<h3>${esc(g)}</h3><table>${seed.map(rowOf).join('')}</table>`);
    if (more.length) o.push(`<details><summary class="hint">${more.length} more</summary><table>${more.map(rowOf).join('')}</table></details>`);
  }
  body.innerHTML = o.join('');
  $('#settings-error').textContent = '';
  body.addEventListener('input', e => { const tr = e.target.closest('tr'); if (tr) tr.classList.add('changed'); });
  $('#settings').showModal();
}

async function applySettings() {
  const changed = [];
  for (const el of $$('#settings-body [data-key]')) {
    const s = settingsMeta.settings.find(x => x.key === el.dataset.key);
    if (s && el.value !== s.value) changed.push(`${s.key}=${el.value}`);
  }
  if (!changed.length) { $('#settings').close(); return; }
  try {
    await session.applySettings(changed.join('\n'));
    $('#settings').close();
    selected = null;
    keyedState = null;
    toast('new session: ' + changed.join(', '));
  } catch (e) {
    $('#settings-error').textContent = e.message;
  }
}

// ---------------------------------------------------------------- scenarios

// The guided scenarios (examples/*/scenario.txt, GET /sim/scenarios): the
// menu starts one's session; the narration panel says what to watch and
// when, each step at its virtual time, the step under way highlighted and
// the actions the scenario takes marked where they happen.
let scenarios = null;
async function loadScenarios() {
  try { scenarios = (await session.scenarios()).scenarios || []; } catch (e) { scenarios = []; toast(e.message, true); }
  const list = $('#scenario-list');
  list.innerHTML = scenarios.map(s => `<li><button data-scenario="${esc(s.name)}" data-testid="scenario-item"><b>${esc(s.title)}</b><span class="hint">${esc(s.summary)}</span></button></li>`).join('');
  renderNarration();
}
async function startScenario(name) {
  try {
    await session.startScenario(name);
    $('#scenario-menu').close();
    selected = null; keyedState = null;
    const sc = (scenarios || []).find(s => s.name === name);
    toast(`scenario: ${sc ? sc.title : name}`);
  } catch (e) { toast(e.message, true); }
}
let narrationKey = '';
function renderNarration() {
  const card = $('#narration');
  const sc = S && S.scenario && (scenarios || []).find(s => s.name === S.scenario);
  card.hidden = !sc;
  if (!sc) { narrationKey = ''; return; }
  // the step under way: the last whose time the clock has reached
  let cur = -1;
  sc.steps.forEach((st, i) => { if (S.vt >= st.at_us) cur = i; });
  const key = `${sc.name}:${cur}:${S.generation}`;
  if (key === narrationKey) return;
  narrationKey = key;
  $('#narration-title').textContent = sc.title;
  const next = sc.next && (scenarios || []).find(s => s.name === sc.next);
  $('#narration-body').innerHTML = `<ol class="steps">${sc.steps.map((st, i) => `<li class="${i === cur ? 'now' : i < cur ? 'done' : 'later'}" data-testid="narration-step" data-step="${i}">
      <span class="at mono">${fmtVT(st.at_us)}</span>${st.action ? `<span class="does mono" title="a live action at its time, in the --action syntax">${i <= cur ? '✓' : '▸'} ${esc(st.action)}</span>` : ''}
      <p>${esc(st.say)}</p></li>`).join('')}</ol>` +
    (next ? `<p class="nextsc">Next: <button data-scenario="${esc(next.name)}">${esc(next.title)}</button></p>` : '');
  // the step under way shows in the list (the list scrolls, never the page)
  const now = $('#narration-body li.now'), list = $('#narration-body .steps');
  if (now && list && !narrationHover) {
    const top = now.offsetTop;
    if (top < list.scrollTop || top + now.offsetHeight > list.scrollTop + list.clientHeight) list.scrollTop = Math.max(0, top - 4);
  }
}
let narrationHover = false;

// ---------------------------------------------------------------- phone

// On a phone the diagram pans with one finger and zooms with two (the
// viewBox moves); a tap still selects what it touches.
const touches = new Map();
let gesture = null;
function wirePhone() {
  const wrap = $('#diagram-wrap'), svg = $('#diagram');
  const mq = matchMedia('(max-width: 760px)');
  const apply = () => { phone = mq.matches; document.body.classList.toggle('phone', phone); if (!phone) view = null; if (S) render(); };
  mq.addEventListener('change', apply);
  phone = mq.matches; document.body.classList.toggle('phone', phone);
  wrap.addEventListener('pointerdown', e => {
    if (!phone || e.pointerType === 'mouse' || !view) return;
    touches.set(e.pointerId, { x: e.clientX, y: e.clientY });
    wrap.setPointerCapture(e.pointerId);
    gesture = { moved: 0, start: new Map([...touches].map(([k, v]) => [k, { ...v }])), view: { ...view } };
  });
  wrap.addEventListener('pointermove', e => {
    if (!gesture || !touches.has(e.pointerId)) return;
    touches.set(e.pointerId, { x: e.clientX, y: e.clientY });
    const pts = [...touches.values()], st = [...gesture.start.values()];
    const r = svg.getBoundingClientRect();
    if (pts.length === 1 && st.length === 1) {
      const dx = pts[0].x - st[0].x, dy = pts[0].y - st[0].y;
      gesture.moved = Math.max(gesture.moved, Math.hypot(dx, dy));
      view.x = gesture.view.x - dx / r.width * gesture.view.w;
      view.y = gesture.view.y - dy / r.width * gesture.view.w;
    } else if (pts.length >= 2 && st.length >= 2) {
      const d0 = Math.hypot(st[0].x - st[1].x, st[0].y - st[1].y), d1 = Math.hypot(pts[0].x - pts[1].x, pts[0].y - pts[1].y);
      const m0 = { x: (st[0].x + st[1].x) / 2, y: (st[0].y + st[1].y) / 2 }, m1 = { x: (pts[0].x + pts[1].x) / 2, y: (pts[0].y + pts[1].y) / 2 };
      gesture.moved = 99;
      const k = d0 > 0 && d1 > 0 ? d0 / d1 : 1;
      const w = Math.max(120, Math.min(L.w * 1.2, gesture.view.w * k));
      // the point under the first midpoint stays under the fingers
      const ux = gesture.view.x + (m0.x - r.left) / r.width * gesture.view.w;
      const uy = gesture.view.y + (m0.y - r.top) / r.width * gesture.view.w;
      view.w = w;
      view.x = ux - (m1.x - r.left) / r.width * w;
      view.y = uy - (m1.y - r.top) / r.width * w;
    }
    renderDiagram();
  });
  const end = e => {
    if (!touches.has(e.pointerId)) return;
    touches.delete(e.pointerId);
    if (gesture && gesture.moved < 8 && touches.size === 0 && e.type === 'pointerup') {
      const g = pickAt(e.clientX, e.clientY);
      if (g) selectFromDiagram(g);
    }
    gesture = touches.size ? { moved: 99, start: new Map([...touches].map(([k, v]) => [k, { ...v }])), view: { ...view } } : null;
  };
  $('#diagram-fit').addEventListener('click', () => { view = null; if (S) renderDiagram(); });
  wrap.addEventListener('pointerup', end);
  wrap.addEventListener('pointercancel', end);
}

// ---------------------------------------------------------------- wiring

function render() {
  if (!S) return;
  renderTop();
  renderStats();
  renderDiagram();
  renderInspector();
  renderNarration();
  renderPanel();
}

// what a click or tap at (x, y) selects: the box under it, through the
// glyphs travelling over it
function pickAt(x, y) {
  for (const el of document.elementsFromPoint(x, y)) {
    const g = el.closest('[data-kind]');
    if (g && g.closest('#diagram')) return g;
  }
  return null;
}

function selectFromDiagram(g) {
  selected = { type: g.dataset.kind, id: g.dataset.id };
  inspHTML = '';
  render();
  if (phone) $('#inspector').scrollIntoView({ block: 'nearest' });
}

function wire() {
  for (const b of $$('[data-speed]')) b.addEventListener('click', async () => {
    try { await session.speed(b.dataset.speed); } catch (e) { toast(e.message, true); }
  });
  const sl = $('#slider');
  sl.addEventListener('input', () => { sliderDragging = true; $('#slider-label').textContent = `${fmtVT(sl.value * 1000)} / ${fmtVT(S.timeline.max)}`; });
  sl.addEventListener('change', async () => {
    sliderDragging = false;
    try { await session.seek(`${sl.value} ms`); } catch (e) { toast(e.message, true); }
  });
  // the diagram is redrawn up to 20 times a second: select on pointerdown,
  // so that a redraw between press and release does not lose the click (a
  // touch selects on release, when it did not pan: wirePhone)
  $('#diagram').addEventListener('pointerdown', e => {
    if (phone && e.pointerType !== 'mouse') return;
    const g = e.target.closest('[data-kind]') || pickAt(e.clientX, e.clientY);
    if (g) selectFromDiagram(g);
  });
  // nor is the inspector redrawn under the pointer (its buttons stay put)
  $('#diagram-wrap').addEventListener('scroll', () => { scrolledSideways = true; const m = $('#diagram-more'); if (m) m.hidden = true; });
  $('#inspector').addEventListener('pointerenter', () => { inspHover = true; });
  $('#inspector').addEventListener('pointerleave', () => { inspHover = false; });
  $('#narration').addEventListener('pointerenter', () => { narrationHover = true; });
  $('#narration').addEventListener('pointerleave', () => { narrationHover = false; });
  document.addEventListener('click', async e => {
    const sc = e.target.closest('[data-scenario]');
    if (sc) { startScenario(sc.dataset.scenario); return; }
    const d = e.target.closest('[data-do]');
    if (d) { try { await act(d.dataset.do); } catch { } return; }
    if (e.target.closest('[data-do-rescale]')) { try { await act(`rescale ${$('#insp-rescale').value}`); } catch { } return; }
    if (e.target.closest('[data-explain]')) { explainKey($('#insp-key').value); return; }
    const tg = e.target.closest('[data-tab-go]');
    if (tg) { showTab(tg.dataset.tabGo); return; }
    const k = e.target.closest('[data-key].pill');
    if (k) { selected = { type: 'key', id: k.dataset.key }; inspHTML = ''; renderInspector(); return; }
    const w = e.target.closest('[data-win]');
    if (w) { selected = { type: 'window', id: 'w', data: JSON.parse(w.dataset.win) }; inspHTML = ''; renderInspector(); return; }
  });
  document.addEventListener('pointerdown', e => {
    const p = e.target.closest('tr[data-part]');
    if (p) { selected = { type: 'part', id: p.dataset.part }; inspHTML = ''; render(); }
  });
  for (const b of $$('[data-tab]')) b.addEventListener('click', () => showTab(b.dataset.tab));
  $('#open-settings').addEventListener('click', () => openSettings().catch(e => toast(e.message, true)));
  $('#settings-apply').addEventListener('click', e => { e.preventDefault(); applySettings(); });
  $('#open-scenarios').addEventListener('click', () => { $('#scenario-menu').showModal(); if (!scenarios) loadScenarios(); });
  $('#scenario-close').addEventListener('click', () => $('#scenario-menu').close());
  for (const id of ['#log-kind', '#log-actor', '#log-text']) $(id).addEventListener('input', () => { logDirty = true; renderLog(); });
  // Do something
  const fs = $('#f-send');
  fs.ts.addEventListener('change', () => { $('.custom-ts', fs).hidden = fs.ts.value !== 'custom'; });
  fs.addEventListener('submit', async e => {
    e.preventDefault();
    const ts = fs.ts.value === 'custom' ? fs.tsms.value.trim() : fs.ts.value;
    let text = `send-event key=${fs.key.value.trim()} ts=${ts}`;
    if (fs.partition.value.trim()) text += ` partition=${fs.partition.value.trim()}`;
    if (fs.fields.value.trim()) text += ' ' + fs.fields.value.trim();
    try { await act(text); } catch { }
  });
  $('#f-free').addEventListener('submit', async e => { e.preventDefault(); try { await act(e.target.text.value); } catch { } });
  for (const b of $$('#panel-actions [data-act]')) b.addEventListener('click', async () => {
    const a = b.dataset.act;
    let text = a;
    if (a === 'pause-partition' || a === 'resume-partition') text = `${a} ${$('#a-part').value.trim()}`;
    if (a === 'rescale') text = `rescale ${$('#a-rescale').value.trim()}`;
    if (a === 'kill-taskmanager') text = `kill-taskmanager ${$('#a-tm').value}`;
    if (a === 'set-idleness') text = `set job.watermark.idleness=${$('#sw-idle').value.trim()}`;
    try { await act(text); } catch { }
  });
  $('#sw-unaligned').addEventListener('change', e => act(`set execution.checkpointing.unaligned.enabled=${e.target.checked}`).catch(() => { }));
  $('#sw-iso').addEventListener('change', e => act(`set sim.output.isolation-level=${e.target.value}`).catch(() => { }));
  document.addEventListener('keydown', e => {
    if (e.target.closest('input, select, textarea, dialog')) return;
    if (e.code === 'Space') { e.preventDefault(); session.speed(S && S.speed === 'pause' ? '1' : 'pause').catch(() => { }); }
    if (e.key === '.') session.speed('step').catch(() => { });
  });
  window.addEventListener('resize', () => { if (S) render(); });
}

function showTab(name) {
  activeTab = name;
  for (const b of $$('[data-tab]')) b.classList.toggle('active', b.dataset.tab === name);
  for (const p of $$('.panel')) p.classList.toggle('active', p.id === 'panel-' + name);
  logDirty = true;
  if (S) renderPanel();
}

wire();
wirePhone();
showTab('watermarks');
loadScenarios();
session.connect(applyFrame, up => $('#conn').classList.toggle('down', !up));
requestAnimationFrame(animate);

// ---------------------------------------------------------------- states as Flink shows them (issue 25, point 2)
// A killed TaskManager is lost; until the JobManager's heartbeat to it times
// out the loss is not detected, and its subtasks show what the JobManager
// believes (RUNNING), drawn with a dashed red border.
const LOST_COLOR = '#cf1322';

function tmLossMark(t) { return t.alive ? '' : ' ✕ lost'; }

// tmLossNote is the line under a lost TaskManager's slots that says
// whether the cluster noticed.
function tmLossNote(t, b) {
  if (t.alive) return '';
  const note = t.loss_detected ? 'loss detected' : 'not yet detected';
  return `<text class="small" x="${b.x + 8}" y="${b.y + b.h - 6}" style="fill:${LOST_COLOR}" data-testid="tm-loss">${note}</text>`;
}

function tmStateText(t) {
  if (t.alive) return 'running';
  return t.loss_detected ? 'killed · loss detected (heartbeat timed out)' : 'killed · loss not yet detected (until heartbeat.timeout)';
}

function subtaskLostMark(s) { return s.lost ? ' ✕' : ''; }

function subtaskStatusText(s) {
  return s.lost ? `${s.status} as the JobManager believes: ${s.task_manager} is lost, not yet detected` : s.status;
}
