// flinksim ui — traffic you can watch.
//
// Drawing is not flight time (ARCHITECTURE.md): a network buffer is on the
// wire for 200 µs of virtual time, an RPC for 1 ms, so the queue at the
// instant of a frame holds next to nothing. Every frame brings instead what
// was delivered since the frame before (the server's traffic batches:
// deliveries one by one, and per link the rest merged into a count with its
// keys), and each delivery becomes a glyph that travels its channel for a
// wall-clock time a person can follow:
//
//   record     a buffer's (or a Kafka fetch's, or a produce request's)
//              records as squares coloured by key, the first labelled
//              key@event time when the link is quiet
//   watermark  W in a circle, its value on hover
//   barrier    a black bar labelled CP n; an unaligned one is a priority
//              event and overtakes the buffers queued ahead of it (drawn
//              waiting at the producer's end of the channel)
//   credit     a green dot going back from the channel to its producer
//   rpc        violet: the JobManager's and CheckpointCoordinator's
//              triggers, acknowledgements, notifications, deployments and
//              restores, heartbeats, split assignment
//
// When a link carries more than a person can follow, its glyphs merge into a
// stream whose density shows the rate and whose colours show the keys; the
// glyphs alive at once are bounded, so nothing piles up. The glyphs move on
// the page's own animation clock, which stands still while the session is
// paused and moves on by a step's worth when it steps. Labels are placed
// where they cover no other text (the diagram's and each other's), or left
// out. Every element under #flights carries data-glyph = record | watermark
// | barrier | credit | rpc (the browser test relies on it).
'use strict';

const Traffic = (() => {
  // wall-clock ms a glyph travels its link
  const DUR = { data: 1100, credit: 900, rpc: 1000, barrier: 1300, unaligned: 650 };
  const STEP_MS = 280;         // how far a single step moves the glyphs on
  const LINK_MAX = { data: 3, credit: 3, rpc: 3 }; // glyphs at once on a link before it streams
  const MAX_GLYPHS = 360;      // glyphs alive at once on the page
  const MAX_LABELS = 14;       // labels at once
  const STREAM_LINGER = 1200;  // ms a stream stays after its last records
  const PARKED_MAX = 5;        // buffers drawn waiting in a producer's subpartition
  const SPACING = { record: 300, credit: 300, rpc: 160, watermark: 0, barrier: 0 }; // ms between glyphs of a link
  const MAX_DELAY = 360;       // a glyph that would wait longer for its place on the link joins the stream

  let clock = 0;               // the animation clock, ms
  let lastWall = 0;
  let glyphs = [];             // {kind, part, d, link, start, dur}
  let streams = new Map();     // link -> {kind, from, to, p, fed, rate, keys: Map, wm}
  let lastSteps = -1, lastBatchWall = 0;
  let lastStart = new Map();   // link+part -> the clock at which its newest glyph starts
  let statics = [];            // rects of the diagram's own text and marks
  let dropped = 0;             // deliveries not drawn (caps), for the legend's title

  function reset() { glyphs = []; streams = new Map(); lastStart = new Map(); marks = new Map(); dropped = 0; }

  // A channel's ⏸ (blocked by alignment) and ↯ (in-flight data persisted)
  // last as long as the state does, and at least MARK_LINGER ms of the
  // clock from when a frame showed it or an unaligned barrier reached the
  // channel: an unaligned checkpoint persists its channels for a few ms of
  // virtual time, which no frame may catch.
  const MARK_LINGER = { blocked: 700, persisting: 1500 };
  let marks = new Map(); // channel -> {blocked, persisting}: the clock until which each shows
  function markSeen(ch, kind) {
    let m = marks.get(ch);
    if (!m) { m = { blocked: -1, persisting: -1 }; marks.set(ch, m); }
    m[kind] = clock + MARK_LINGER[kind];
    if (marks.size > 8192) marks = new Map();
  }
  function observeMarks(st) {
    for (const v of st.vertices || []) for (const s of v.subtasks) (s.inputs || []).forEach((ch, j) => {
      if (ch.blocked) markSeen(`${s.name}/ch-${j}`, 'blocked');
      if (ch.persisting) markSeen(`${s.name}/ch-${j}`, 'persisting');
    });
  }
  function markOf(ch) {
    const m = marks.get(ch);
    if (!m) return '';
    if (m.blocked > clock) return 'blocked';
    if (m.persisting > clock) return 'persisting';
    return '';
  }

  // The clock runs with wall time unless the session is paused.
  function tick(now) {
    const dt = Math.min(250, Math.max(0, now - (lastWall || now)));
    lastWall = now;
    if (S && S.speed !== 'pause') clock += dt;
  }

  function linkOf(d) { return `${d.from}>${d.to}${d.p != null ? '#' + d.p : ''}`; }

  // With many subtasks a column's channels are drawn as one band (the
  // compact and mini boxes): a producer's data then travels straight into
  // the band towards the next column ("⇥"), a consumer's credits straight
  // back to the column before ("⇤"), one link each instead of one a channel.
  function drawn(d) {
    if (!L || L.dens === 'normal' || (d.kind !== 'data' && d.kind !== 'credit')) return d;
    const A = L.anchors;
    if (A[d.to] && A[d.to].gauge) return { ...d, to: '⇥' };
    if (A[d.from] && A[d.from].gauge) return { ...d, from: d.from.replace(/\/ch-\d+$/, ''), to: '⇤' };
    return d;
  }

  // ingest takes one frame's traffic batches (oldest first) and the frame's
  // state; a step (paused, one more step) moves the glyphs on.
  function ingest(batches, st, reset0) {
    if (reset0) reset();
    observeMarks(st);
    const now = performance.now();
    if (st.speed === 'pause' && lastSteps >= 0 && st.steps > lastSteps) clock += STEP_MS;
    lastSteps = st.steps;
    const span = Math.max(16, Math.min(120, now - (lastBatchWall || now)));
    lastBatchWall = now;
    const alive = new Map();
    for (const g of glyphs) if (clock - g.start < g.dur) alive.set(g.link + g.kind, (alive.get(g.link + g.kind) || 0) + 1);
    let count = glyphs.length;
    for (const b of batches) {
      const width = Math.max(1, b.to_vt - b.from_vt);
      for (const d0 of b.deliveries) {
        const d = drawn(d0);
        const off = st.speed === 'pause' ? 0 : span * Math.min(1, Math.max(0, (d.at - b.from_vt) / width));
        const link = linkOf(d);
        const parts = partsOf(d);
        for (const part of parts) {
          const key = link + part;
          const n = alive.get(key) || 0;
          const cls = part === 'barrier' ? 'barrier' : d.kind;
          const limit = part === 'barrier' ? 2 : part === 'watermark' ? 1 : LINK_MAX[d.kind] || 3;
          // glyphs of a link keep their distance, so that a burst (every
          // channel flushes at once) becomes a train, not a heap
          const start = Math.max(clock + off, (lastStart.get(key) || -1e9) + SPACING[part]);
          if ((part === 'barrier' || part === 'watermark') && n >= limit) {
            // the newest barrier or watermark of a link counts: it takes
            // the place of the oldest still on the way
            const i = glyphs.findIndex(g => g.link === link && g.kind === part && clock - g.start < g.dur);
            if (i >= 0) { glyphs.splice(i, 1); alive.set(key, n - 1); count--; }
          }
          if ((alive.get(key) || 0) >= limit || count >= MAX_GLYPHS || start - clock > MAX_DELAY) {
            if (part === 'record' || part === 'credit') feed(link, d, d.n || 1, part);
            else if (part === 'watermark' && d.wm != null) feedWM(link, d);
            else dropped++;
            continue;
          }
          alive.set(key, (alive.get(key) || 0) + 1);
          lastStart.set(key, start);
          count++;
          const dur = part === 'barrier' ? (d.unaligned ? DUR.unaligned : DUR.barrier) : DUR[cls] || DUR.rpc;
          glyphs.push({ kind: part, d, link, start, dur });
        }
      }
      for (const s0 of b.streams || []) {
        const s = drawn(s0);
        const link = linkOf(s);
        if (s.kind === 'data' && s.n) feed(link, s, s.n, 'record', s.keys, s.other);
        else if (s.kind === 'credit') feed(link, s, s.envelopes, 'credit');
        if (s.wm != null) feedWM(link, s);
      }
    }
    if (glyphs.length > 2 * MAX_GLYPHS) glyphs = glyphs.slice(-MAX_GLYPHS);
    if (lastStart.size > 4096) lastStart = new Map();
  }

  // what a delivery shows: a data envelope can carry records, a watermark
  // and a barrier at once
  function partsOf(d) {
    if (d.kind === 'credit') return ['credit'];
    if (d.kind === 'rpc') return ['rpc'];
    const out = [];
    if (d.cp) out.push('barrier');
    if (d.n) out.push('record');
    if (d.wm != null) out.push('watermark');
    if (d.end && !out.length) out.push('record');
    return out;
  }

  function feed(link, d, n, part, keys, other) {
    let s = streams.get(link + part);
    if (!s) { s = { part, from: d.from, to: d.to, p: d.p, link, fed: clock, rate: 0, keys: new Map(), n: 0 }; streams.set(link + part, s); }
    // records per second of the animation clock, smoothed
    const dt = Math.max(50, clock - s.fed);
    s.rate = s.rate ? 0.7 * s.rate + 0.3 * (1000 * n / dt) : 1000 * n / 100;
    s.fed = clock;
    s.n += n;
    if (keys) for (const k of keys) s.keys.set(k.k, (s.keys.get(k.k) || 0) + k.n);
    else if (d.keys) for (const k of d.keys) s.keys.set(k, (s.keys.get(k) || 0) + Math.max(1, Math.round(n / d.keys.length)));
    if (s.keys.size > 24) { // keep the heaviest
      const top = [...s.keys.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12);
      s.keys = new Map(top);
    }
    if (other) s.keys.set('', (s.keys.get('') || 0) + other);
  }
  function feedWM(link, d) {
    const s = streams.get(link + 'record');
    if (s) s.wm = d.wm;
  }

  // ------------------------------------------------------------ geometry

  const isJM = n => n === 'jobmanager' || n === 'checkpoint-coordinator';

  // A path is a polyline ({pts, cum, len}: points, the length up to each,
  // the whole length), so that a glyph moves along it at an even pace.
  function poly(pts) {
    const cum = [0];
    for (let i = 1; i < pts.length; i++) cum.push(cum[i - 1] + Math.hypot(pts[i][0] - pts[i - 1][0], pts[i][1] - pts[i - 1][1]));
    return { pts, cum, len: Math.max(1, cum[cum.length - 1]) };
  }
  // a cubic Bézier as 20 points
  function bezier(a, c1, c2, b) {
    const pts = [];
    for (let i = 0; i <= 20; i++) {
      const u = i / 20, v = 1 - u;
      pts.push([v * v * v * a[0] + 3 * v * v * u * c1[0] + 3 * v * u * u * c2[0] + u * u * u * b[0],
        v * v * v * a[1] + 3 * v * v * u * c1[1] + 3 * v * u * u * c2[1] + u * u * u * b[1]]);
    }
    return poly(pts);
  }
  const paths = new Map(); // link -> path, for the diagram drawn now
  let pathsOf = null;

  // the path of a link along the edges the diagram draws (null: not on the
  // diagram): data along the channels (a curve from the producer's right
  // side to just outside the consumer's gauge), credits back along them,
  // RPCs in the lanes left of the columns
  function pathOf(from, to, kind, p) {
    if (!L) return null;
    if (pathsOf !== L) { paths.clear(); pathsOf = L; }
    const key = `${from}>${to}>${kind}>${p}`;
    if (paths.has(key)) return paths.get(key);
    const P = route(from, to, kind, p);
    if (paths.size > 4096) paths.clear();
    paths.set(key, P);
    return P;
  }

  function route(from, to, kind, p) {
    const A = L.anchors;
    // a data path ends just outside the box it enters, so that a glyph at its
    // end covers nothing of the box
    const boxOf = g => g.box || g;
    const right = b => [b.x + b.w + 2, b.y + b.h / 2], left = b => [boxOf(b).x - 9, b.y + b.h / 2];
    const curve = (a, b) => bezier(a, [a[0] + 45, a[1]], [b[0] - 45, b[1]], b);
    const back = (a, b) => bezier(a, [a[0] - 45, a[1]], [b[0] + 45, b[1]], b);
    if (kind === 'data' || kind === 'credit') {
      if (to === '⇥' || to === '⇤') { // into the band (drawn)
        const a = A[from], ci = a ? L.cols.findIndex(c => c.x === a.x) : -1;
        const c = L.cols[ci + (to === '⇥' ? 1 : -1)];
        if (!a || !c) return null;
        const y = a.y + a.h / 2 + (to === '⇥' ? -3 : 3);
        return to === '⇥' ? poly([[a.x + a.w + 2, y], [c.x - 9, y]]) : poly([[a.x - 9, y], [c.x + L.SW + 2, y]]);
      }
      if (from === 'kafka') { // a fetch response: partition -> reader
        const pb = L.boxes['p:' + p], r = A[to];
        return pb && r ? curve(right(pb), [r.x - 9, r.y + 16]) : null;
      }
      if (to === 'kafka') { // a produce request: sink -> the sink topic
        const s = A[from], o = L.boxes.out;
        return s && o ? curve(right(s), [o.x - 9, o.y + 40]) : null;
      }
      const a = A[from], b = A[to];
      if (!a || !b) return null;
      if (b.gauge) return curve(right(a), left(b));       // producer -> its channel at the consumer
      if (a.gauge) return back(left(a), right(b));        // channel -> producer (credit)
      return curve(right(a), left(b));
    }
    // RPCs: from the JobManager's box (or the ResourceManager's) down the
    // lane left of a column, into a subtask's header from the left; to a
    // TaskManager down the first column's lane to the TaskManagers' row
    const jm = L.boxes.jm, rm = L.boxes.rm;
    const firstCol = L.cols.length ? L.cols[0].x : jm.x;
    const down = (fromRM, lane, y1, tail) => {
      const top = fromRM ? [[rm.x + 12, rm.y + rm.h], [rm.x - 14, rm.y + rm.h + 14]]
        : [[Math.max(jm.x + 6, Math.min(jm.x + jm.w - 6, lane)), jm.y + jm.h], [lane, jm.y + jm.h + 14]];
      if (fromRM) top.push([rm.x - 14, y1]);
      else top.push([lane, y1]);
      return poly(top.concat(tail));
    };
    const towards = (name, fromRM) => {
      const b = A[name] && !A[name].gauge ? A[name] : null;
      if (b) { const lane = b.x - 14, y = b.y + 9; return down(fromRM, lane, y, [[b.x - 6, y]]); }
      if (name.startsWith('tm-')) {
        const t = L.boxes['tm:' + name];
        if (!t) return null;
        const y = t.y - 14, cx = t.x + t.w / 2;
        return down(fromRM, firstCol - 14, y, [[cx, y], [cx, t.y]]);
      }
      if (name === 'kafka') { const o = L.boxes.out; return poly([[jm.x + jm.w - 6, jm.y + jm.h], [o.x - 14, jm.y + jm.h + 14], [o.x - 14, o.y + 12], [o.x - 6, o.y + 12]]); }
      return null;
    };
    const rev = P => P && poly(P.pts.slice().reverse());
    if (isJM(from)) return isJM(to) ? null : towards(to, false);
    if (isJM(to)) return rev(towards(from, false));
    if (from === 'resourcemanager') return towards(to, true);
    if (to === 'resourcemanager') return rev(towards(from, true));
    if (to === 'kafka' && A[from]) { // the sink's transactions
      const s = A[from], o = L.boxes.out;
      return curve(right(s), [o.x - 9, o.y + 24]);
    }
    const a = A[from], b = A[to];
    return a && b ? poly([[a.x + a.w / 2, a.y], [b.x + b.w / 2, b.y]]) : null;
  }

  // the point u (0..1) of the way along P
  function at(P, u) {
    const d = Math.max(0, Math.min(1, u)) * P.len, c = P.cum;
    let i = 1;
    while (i < c.length - 1 && c[i] < d) i++;
    const seg = c[i] - c[i - 1] || 1, f = (d - c[i - 1]) / seg;
    const a = P.pts[i - 1], b = P.pts[i];
    return [a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f];
  }
  function lengthOf(P) { return P.len; }
  function dOf(P) { return 'M' + P.pts.map(q => `${q[0].toFixed(1)},${q[1].toFixed(1)}`).join(' L'); }

  // ------------------------------------------------------------ labels

  // The rects of the diagram's own text and marks, read once per redraw of
  // the diagram (user units of the SVG).
  function measureStatics() {
    statics = [];
    for (const el of document.querySelectorAll('#diagram text, #diagram [data-mark], #diagram [data-ink]')) {
      if (el.closest('#flights')) continue;
      let b;
      try { b = el.getBBox(); } catch { continue; }
      if (b.width > 0) statics.push({ x: b.x - 1, y: b.y - 1, w: b.width + 2, h: b.height + 2 });
    }
  }
  const hit = (a, b) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
  // a free place for a label of width w near (x, y): above, below, right,
  // left; null when every one covers text
  function place(x, y, w, placed) {
    const cands = [[x - w / 2, y - 9], [x - w / 2, y + 17], [x + 8, y + 4], [x - 8 - w, y + 4]];
    for (const [lx, ly] of cands) {
      const r = { x: lx - 1, y: ly - 10.5, w: w + 2, h: 14.5 };
      if (L && (r.x < 0 || r.x + r.w > L.w || r.y < 0 || r.y + r.h > L.h)) continue;
      if (statics.some(s => hit(r, s)) || placed.some(s => hit(r, s))) continue;
      placed.push(r);
      return [lx, ly];
    }
    return null;
  }

  // ------------------------------------------------------------ drawing

  const VIOLET = '#722ed1';
  function attrs(kind, g, u) {
    return `data-glyph="${kind}" data-link="${esc(g.link)}" data-u="${u.toFixed(3)}"`;
  }

  function recordSquares(x, y, keys, kind) {
    const k = Math.min(4, keys.length || 1), w = 3 * k + 2, h = 8;
    let o = `<rect data-glyph="${kind}" x="${(x - w / 2).toFixed(1)}" y="${(y - h / 2).toFixed(1)}" width="${w}" height="${h}" rx="1.5" fill="#fff" stroke="#595959" stroke-width=".7"/>`;
    for (let i = 0; i < k; i++) o += `<rect data-glyph="${kind}" x="${(x - w / 2 + 1 + 3 * i).toFixed(1)}" y="${(y - h / 2 + 1).toFixed(1)}" width="3" height="${h - 2}" fill="${keyColor(keys[i] || '')}"/>`;
    return o;
  }
  function wmMark(x, y, kind) { // W as strokes, not text
    return `<circle data-glyph="${kind}" cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" r="6" fill="#fff" stroke="#d48806" stroke-width="1.2"/>` +
      `<path data-glyph="${kind}" d="M${(x - 3.6).toFixed(1)},${(y - 2.6).toFixed(1)} l1.3,5.2 l2.3,-4 l2.3,4 l1.3,-5.2" fill="none" stroke="#d48806" stroke-width="1.2" stroke-linejoin="round"/>`;
  }

  // the buffers waiting in each producer's subpartition for a channel: what
  // an unaligned barrier overtakes
  function parked(placedRects) {
    const o = [];
    if (!L || L.dens !== 'normal') return '';
    const subs = new Map();
    for (const v of S.vertices || []) for (const s of v.subtasks) subs.set(s.name, s);
    for (const v of S.vertices || []) for (const s of v.subtasks) (s.inputs || []).forEach((ch, j) => {
      const prod = subs.get(ch.producer);
      const sub = ch.subpartition != null ? ch.subpartition : s.index;
      const q = prod && prod.output_queues ? prod.output_queues[sub] || 0 : 0;
      if (!q) return;
      const P = pathOf(ch.producer, `${s.name}/ch-${j}`, 'data');
      if (!P) return;
      const len = lengthOf(P);
      const g = { link: `${ch.producer}>${s.name}/ch-${j}` };
      for (let i = 0; i < Math.min(PARKED_MAX, q); i++) {
        const u = (8 + i * 11) / len;
        if (u > 0.6) break;
        const [x, y] = at(P, u);
        o.push(`<g ${attrs('record', g, u)} data-parked="1"><title data-glyph="record">${q} buffer${q > 1 ? 's' : ''} waiting in ${esc(ch.producer)}'s subpartition ${sub}</title>` +
          `<rect data-glyph="record" x="${(x - 4).toFixed(1)}" y="${(y - 4.5).toFixed(1)}" width="8" height="9" rx="1.5" fill="#d6e4ff" stroke="#85a5ff" stroke-width=".7"/></g>`);
      }
    });
    return o.join('');
  }

  function streamPaths(placed) {
    const o = [];
    for (const [key, s] of streams) {
      const age = clock - s.fed;
      if (age > STREAM_LINGER) { streams.delete(key); continue; }
      const kind = s.part === 'credit' ? 'credit' : 'record';
      const P = pathOf(kind === 'credit' ? s.from : s.from, s.to, kind === 'credit' ? 'credit' : 'data', s.p);
      if (!P) continue;
      const op = Math.max(0.15, 1 - age / STREAM_LINGER);
      const rate = Math.max(1, s.rate);
      const w = Math.min(5, 1.5 + Math.log10(rate));
      const gap = Math.max(2, 12 - 2.2 * Math.log10(rate + 1) * 2);
      const speed = 0.06; // px per ms of the clock
      const d = dOf(P);
      const title = `<title data-glyph="${kind}">${kind === 'credit' ? 'credit' : 'records'} ${esc(s.from)} → ${esc(s.to)}: about ${Math.round(rate)} ${kind === 'credit' ? 'credit messages' : 'records'} a second${s.wm != null ? ' · watermark ' + esc(fmtWM(s.wm)) : ''}</title>`;
      if (kind === 'credit') {
        o.push(`<g data-glyph="credit" data-link="${esc(s.link)}" data-stream="1" opacity="${op.toFixed(2)}">${title}<path data-glyph="credit" d="${d}" fill="none" stroke="#52c41a" stroke-width="${(w * 0.7).toFixed(1)}" stroke-linecap="round" stroke-dasharray="0.1 ${gap.toFixed(1)}" stroke-dashoffset="${(clock * speed).toFixed(1)}"/></g>`);
        continue;
      }
      const keys = [...s.keys.entries()].sort((a, b) => b[1] - a[1]).slice(0, 3);
      if (!keys.length) keys.push(['', 1]);
      const per = 4 + gap;
      const parts = keys.map(([k], i) => `<path data-glyph="record" d="${d}" fill="none" stroke="${k ? keyColor(k) : '#8c8c8c'}" stroke-width="${w.toFixed(1)}" stroke-dasharray="4 ${(per * keys.length - 4).toFixed(1)}" stroke-dashoffset="${(-clock * speed + i * per).toFixed(1)}"/>`);
      o.push(`<g data-glyph="record" data-link="${esc(s.link)}" data-stream="1" opacity="${op.toFixed(2)}">${title}${parts.join('')}</g>`);
      if (s.wm != null) {
        const u = ((clock % DUR.data) / DUR.data);
        const [x, y] = at(P, u);
        o.push(`<g data-glyph="watermark" data-link="${esc(s.link)}" data-stream="1"><title data-glyph="watermark">watermark ${esc(fmtWM(s.wm))}</title>${wmMark(x, y - 9, 'watermark')}</g>`);
      }
    }
    return o.join('');
  }

  function render() {
    const g = document.getElementById('flights');
    if (!g || !S || !L) return;
    const placed = [];
    const o = [parked(placed), streamPaths(placed)];
    const labelsOut = []; // drawn last, over every glyph
    const busy = new Map();
    for (const x of glyphs) busy.set(x.link, (busy.get(x.link) || 0) + 1);
    let labels = 0;
    const keep = [];
    // barriers last, so that they are drawn over the records they pass
    const order = glyphs.filter(x => x.kind !== 'barrier').concat(glyphs.filter(x => x.kind === 'barrier'));
    for (const x of order) {
      const u = (clock - x.start) / x.dur;
      if (u > 1) {
        if (x.kind === 'barrier' && x.d.unaligned) markSeen(x.d.to, 'persisting');
        continue;
      }
      keep.push(x);
      if (u < 0) continue;
      const d = x.d;
      const P = pathOf(d.from, d.to, d.kind, d.p);
      if (!P) continue;
      let [px, py] = at(P, u);
      const quiet = (busy.get(x.link) || 0) <= 2 && !streams.has(x.link + 'record');
      const title = `<title data-glyph="${x.kind}">${esc(d.msg)} ${esc(d.from)} → ${esc(d.to)} · sent ${fmtVTus(d.sent)} · delivered ${fmtVTus(d.at)}${d.n ? ' · ' + d.n + ' records' : ''}${d.wm != null ? ' · watermark ' + esc(fmtWM(d.wm)) : ''}</title>`;
      let body = '', label = '';
      switch (x.kind) {
        case 'record':
          body = recordSquares(px, py, d.keys || [], 'record');
          if (quiet && d.labels && d.labels.length) label = `${d.labels[0].k}@${fmtTS(d.labels[0].ts)}${d.n > 1 ? ' +' + (d.n - 1) : ''}`;
          break;
        case 'watermark': {
          const back = Math.max(0, u - 14 / lengthOf(P));
          [px, py] = at(P, d.n ? back : u);
          body = wmMark(px, py, 'watermark');
          break;
        }
        case 'barrier':
          body = `<rect data-glyph="barrier" x="${(px - 1.6).toFixed(1)}" y="${(py - 9).toFixed(1)}" width="3.2" height="18" fill="#000"/>`;
          label = `CP ${d.cp}${d.unaligned ? ' unaligned' : ''}`;
          break;
        case 'credit':
          body = `<circle data-glyph="credit" cx="${px.toFixed(1)}" cy="${py.toFixed(1)}" r="3" fill="#52c41a"/>`;
          if (quiet && d.credit) label = `+${d.credit}`;
          break;
        case 'rpc': {
          const small = d.msg.startsWith('Heartbeat');
          const r = small ? 2.5 : 4.2;
          body = `<rect data-glyph="rpc" x="${(px - r).toFixed(1)}" y="${(py - r).toFixed(1)}" width="${2 * r}" height="${2 * r}" transform="rotate(45 ${px.toFixed(1)} ${py.toFixed(1)})" fill="${small ? '#b37feb' : VIOLET}"/>`;
          if (!small && d.label && quiet) label = d.label;
          break;
        }
      }
      if (label && labels < MAX_LABELS) {
        const w = textWidth(label, 'small') + 1;
        const pos = place(px, py, w, placed);
        if (pos) {
          labels++;
          const fill = x.kind === 'barrier' ? '#000' : x.kind === 'rpc' ? VIOLET : x.kind === 'credit' ? '#389e0d' : '#262626';
          labelsOut.push(`<text data-glyph="${x.kind}" data-label-of="${esc(x.link)}" class="small" x="${pos[0].toFixed(1)}" y="${pos[1].toFixed(1)}" style="fill:${fill}">${esc(label)}</text>`);
        }
      }
      const extra = x.kind === 'barrier' ? ` data-cp="${d.cp}"${d.unaligned ? ' data-unaligned="1"' : ''}` : '';
      o.push(`<g ${attrs(x.kind, x, u)}${extra}>${title}${body}</g>`);
    }
    glyphs = keep;
    g.innerHTML = o.join('') + labelsOut.join('');
  }

  return { tick, ingest, render, reset, measureStatics, pathOf, markOf, get clock() { return clock; }, get dropped() { return dropped; } };
})();
