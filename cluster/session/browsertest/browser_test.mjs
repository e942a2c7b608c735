// The browser test of the live diagram (issues 10 and 25), run by
// browser_test.go when .ci/run has installed Chromium and playwright-core:
//
//   node browser_test.mjs URL OUTDIR
//
// The server starts with the default job and a restart strategy. In order:
//   1. the default job: 4 subtask boxes and 4 channel gauges; a local channel
//      shows the producer's backlog, not credit (gauge and inspector);
//   2. traffic: with checkpoints every 2 s, every glyph kind (record,
//      watermark, barrier, credit, rpc) shows within 10 s at 1x and at 10x,
//      and every element under #flights carries a known data-glyph; heavy
//      traffic (max speed) merges into streams and the glyphs stay bounded;
//      pause freezes the glyphs and a step moves them on;
//   3. layout: no text of the diagram (glyph labels included) covers another,
//      none leaves its box, in three jobs (the default, a wide job with an
//      operator parallelism each and chaining off, unaligned checkpoints under
//      backpressure); the ⏸ and ↯ marks are 12 px or more on their own
//      gauge; the side column keeps its height; Watermarks names every
//      subtask;
//   4. the old flow: 100x, kill tm-1 from the page, RESTARTING then RUNNING,
//      a checkpoint in the panel, parallelism 3;
//   5. scenarios: the menu lists them; "readers without splits, then
//      idleness" narrates its steps, no window fires before its live action
//      and windows fire after; "too few slots" ends FAILED in the header, the
//      JobManager box and Stats; "unaligned checkpoints under backpressure"
//      shows an unaligned barrier overtaking the buffers queued ahead of it;
//   6. the phone (390x844, touch): the diagram is there and pans and zooms by
//      touch, nothing runs off screen, every panel and action is reachable.
// Screenshots go to OUTDIR; on failure the page's console errors are printed.
import { chromium } from 'playwright-core';
import { statesAsFlinkShowsThem } from './truth.mjs';

const [url, out] = process.argv.slice(2);
const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';
const consoleErrors = [];
let step = 'start';

const browser = await chromium.launch({
  executablePath: chromiumPath, headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
    '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
});
const context = await browser.newContext({ viewport: { width: 1440, height: 960 } });
let page = await context.newPage();
const watch = p => {
  p.on('console', m => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  p.on('pageerror', e => consoleErrors.push(String(e)));
};
watch(page);

async function shot(name, p = page) {
  const path = `${out}/${name}.png`;
  await p.screenshot({ path, fullPage: true });
  console.log(`screenshot ${path}`);
}
function expect(cond, what) { if (!cond) throw new Error(`${step}: ${what}`); }
async function until(what, fn, ms = 20000, p = page) {
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    last = await fn();
    if (last) return last;
    await p.waitForTimeout(100);
  }
  throw new Error(`${step}: timed out waiting for ${what} (last: ${JSON.stringify(last)})`);
}
const num = async sel => Number((await page.textContent(sel)).replace(/[^0-9]/g, ''));
const speed = async s => { await page.click(`[data-speed="${s}"]`); await until(`speed ${s}`, () => page.evaluate(x => S.speed === x, s)); };
// new settings through the page's session object (as the settings dialog
// sends them), then wait for the new session's first frame
async function settings(lines) {
  await page.click('[data-speed="pause"]');
  await until('paused', () => page.evaluate(() => S.speed === 'pause'));
  const g = await page.evaluate(() => S.generation);
  await page.evaluate(t => session.applySettings(t), lines.join('\n'));
  await until('the new session', () => page.evaluate(x => S.generation > x && S.vertices.length > 0, g));
}

const GLYPHS = ['record', 'watermark', 'barrier', 'credit', 'rpc'];

// every kind of glyph within ms of wall time, and every element under
// #flights with a known data-glyph (checked in the page, every frame)
async function everyKind(ms) {
  await page.evaluate(kinds => {
    window.__kinds = {}; window.__badGlyph = '';
    const look = () => {
      for (const el of document.querySelectorAll('#flights *')) {
        const k = el.getAttribute('data-glyph');
        if (!kinds.includes(k)) window.__badGlyph = `<${el.tagName} data-glyph=${k}>`;
        else window.__kinds[k] = (window.__kinds[k] || 0) + 1;
      }
      if (window.__kindsOn) requestAnimationFrame(look);
    };
    window.__kindsOn = true;
    requestAnimationFrame(look);
  }, GLYPHS);
  const t0 = Date.now();
  const seen = await until(`every glyph kind (${GLYPHS.join(', ')})`, async () => {
    const r = await page.evaluate(() => ({ k: window.__kinds, bad: window.__badGlyph }));
    expect(!r.bad, `an element under #flights without a known data-glyph: ${r.bad}`);
    return GLYPHS.every(k => r.k[k] > 0) ? r.k : false;
  }, ms);
  await page.evaluate(() => { window.__kindsOn = false; });
  return { seen, ms: Date.now() - t0 };
}

// the layout rules, checked in the page: no text of the diagram or mark
// covers another, no text or mark leaves its box, marks are 12 px or more
// and sit on their own gauge
function layoutProblems() {
  const eps = 0.5;
  const els = [...document.querySelectorAll('#diagram text, #diagram [data-mark]')].filter(e => {
    const r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  });
  const rects = els.map(e => e.getBoundingClientRect());
  const name = e => (e.hasAttribute('data-mark') ? `[${e.dataset.mark} mark]` : JSON.stringify(e.textContent.slice(0, 40))) + (e.closest('#flights') ? ' (a glyph label)' : '');
  const out = [];
  for (let i = 0; i < els.length; i++) for (let j = i + 1; j < els.length; j++) {
    const a = rects[i], b = rects[j];
    const w = Math.min(a.right, b.right) - Math.max(a.left, b.left), h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
    if (w > eps && h > eps) out.push(`${name(els[i])} covers ${name(els[j])} (${w.toFixed(1)}×${h.toFixed(1)} px)`);
  }
  for (const g of document.querySelectorAll('#diagram g[data-kind]')) {
    const box = g.querySelector(':scope > rect.box');
    if (!box) continue;
    const br = box.getBoundingClientRect();
    for (const t of g.querySelectorAll('text, [data-mark]')) {
      const r = t.getBoundingClientRect();
      if (r.width === 0) continue;
      const by = Math.max(br.left - r.left, r.right - br.right, br.top - r.top, r.bottom - br.bottom);
      if (by > eps) out.push(`${name(t)} runs out of ${g.dataset.kind} ${g.dataset.id} by ${by.toFixed(1)} px`);
    }
  }
  const scale = document.querySelector('#diagram').getBoundingClientRect().width / document.querySelector('#diagram').viewBox.baseVal.width;
  for (const m of document.querySelectorAll('#diagram [data-testid=channel-gauge] [data-mark]')) {
    const r = m.getBoundingClientRect(), gauge = m.closest('[data-testid=channel-gauge]').querySelector('rect').getBoundingClientRect();
    if (r.width / scale < 11.9 || r.height / scale < 11.9) out.push(`a ${m.dataset.mark} mark of ${(r.width / scale).toFixed(1)}×${(r.height / scale).toFixed(1)} px`);
    const cy = (r.top + r.bottom) / 2, gy = (gauge.top + gauge.bottom) / 2;
    if (Math.abs(cy - gy) > 3 * scale || r.left < gauge.right - eps || r.left - gauge.right > 6 * scale) out.push(`a ${m.dataset.mark} mark not beside its gauge`);
  }
  return { problems: out, texts: els.length };
}
async function checkLayout(what, samples = 6, gapMs = 400) {
  let texts = 0;
  for (let i = 0; i < samples; i++) {
    const r = await page.evaluate(layoutProblems);
    texts = Math.max(texts, r.texts);
    expect(r.problems.length === 0, `${what}: ${r.problems.slice(0, 6).join('; ')}`);
    await page.waitForTimeout(gapMs);
  }
  console.log(`layout ${what}: ${samples} samples, up to ${texts} texts and marks, no overlap, nothing out of its box`);
}

try {
  step = 'load the page';
  await page.goto(url);
  await until('the first frame', () => page.evaluate(() => typeof S !== 'undefined' && S != null && document.querySelectorAll('[data-testid=subtask]').length > 0));
  const boxes = await page.locator('[data-testid=subtask]').count();
  const gauges = await page.locator('[data-testid=channel-gauge]').count();
  expect(boxes === 4, `${boxes} subtask boxes, want 4`);
  expect(gauges === 4, `${gauges} input channel gauges, want 4`);
  await shot('01-default-job');

  step = 'press 100x';
  await page.click('[data-speed="100"]');
  await until('virtual time past 20 s', () => page.evaluate(() => S.vt > 20e6 && S.speed === '100'));
  await until('records read', async () => (await num('[data-testid=records-read]')) > 10000);

  step = 'kill tm-1 from the page';
  await page.click('[data-testid=tm][data-tm="tm-1"]');
  await page.click('[data-testid=kill-tm]');
  await until('tm-1 killed', () => page.evaluate(() => S.taskmanagers.some(t => t.name === 'tm-1' && !t.alive)));
  // the pointer is still on the inspector, which holds its numbers still
  // while hovered, but not a Kill button for a TaskManager already dead
  await until('the inspector shows tm-1 killed, without its Kill button', async () => {
    const text = await page.textContent('#insp-body');
    return /state\s*killed/.test(text) && (await page.locator('[data-testid=kill-tm]').count()) === 0 ? text : false;
  });
  await shot('02-tm-1-killed');
  step = 'the job goes RESTARTING then RUNNING';
  await until('RESTARTING → RUNNING', async () => {
    const hist = await page.textContent('[data-testid=status-history]');
    const status = await page.textContent('[data-testid=job-status]');
    return /RESTARTING → RUNNING/.test(hist) && status === 'RUNNING' ? hist : false;
  }, 30000);
  const before = await num('[data-testid=records-read]');
  await until('records read growing after the restart', async () => (await num('[data-testid=records-read]')) > before + 1000);
  await shot('03-restarted');

  step = 'trigger a checkpoint';
  await page.click('[data-tab="actions"]');
  await page.click('[data-testid=trigger-checkpoint]');
  await page.click('[data-tab="checkpoints"]');
  await until('a completed checkpoint in the Checkpoints panel', async () => {
    const rows = await page.locator('[data-testid=checkpoint-row]').allTextContents();
    return rows.some(r => /COMPLETED/.test(r)) ? rows : false;
  });

  step = 'checkpoints every 2 s';
  await settings(['execution.checkpointing.interval=2 s']);

  step = 'every kind of glyph at 1x';
  await settings(['execution.checkpointing.interval=2 s']); // a session from 0 s, paused
  await until('no glyph left of the session before', () => page.evaluate(() => document.querySelectorAll('#flights [data-u]').length === 0), 5000);
  await speed('1');
  let r = await everyKind(10000);
  console.log(`1x: every glyph kind within ${r.ms} ms: ${JSON.stringify(r.seen)}`);
  await until('a checkpoint\'s barriers on the channels', () => page.evaluate(() => S.vt > 4e6 && document.querySelectorAll('#flights g[data-glyph=barrier]').length > 0), 15000);
  await shot('04-traffic-1x');

  step = 'a local channel shows the producer subpartition\'s backlog, not credit';
  const local = page.locator('[data-testid=channel-gauge][data-local="1"]').first();
  expect(await local.count() === 1, 'no local channel in the default job (window-0 reads source-0 on tm-1)');
  const title = await local.locator('title').textContent();
  expect(/LocalInputChannel/.test(title) && /no credit/.test(title) && /subpartition/.test(title) && !/credit \d/.test(title), `local gauge title: ${title}`);
  await local.dispatchEvent('pointerdown');
  const insp = await until('the channel inspector', async () => { const t = await page.textContent('#insp-body'); return /LocalInputChannel/.test(t) ? t : false; });
  expect(/no credit/.test(insp) && /waiting at the producer/.test(insp) && !/out of credit/.test(insp), `inspector: ${insp}`);

  step = 'every kind of glyph at 10x';
  await settings(['execution.checkpointing.interval=2 s']);
  await until('no glyph left of the 1x session', () => page.evaluate(() => document.querySelectorAll('#flights [data-u]').length === 0), 5000);
  await speed('10');
  r = await everyKind(10000);
  console.log(`10x: every glyph kind within ${r.ms} ms: ${JSON.stringify(r.seen)}`);
  await until('half a minute of virtual time', () => page.evaluate(() => S.vt > 30e6), 15000);
  await shot('05-traffic-10x');

  step = 'the layout of the default job';
  await checkLayout('default job at 10x');

  step = 'the side column keeps its height';
  const heights = new Set();
  for (let i = 0; i < 12; i++) {
    heights.add(await page.evaluate(() => `${Math.round($('#stats').getBoundingClientRect().height)} ${Math.round($('#inspector').getBoundingClientRect().top)}`));
    await page.waitForTimeout(250);
  }
  expect(heights.size === 1, `the Stats card's height and the inspector's place changed: ${[...heights].join(' | ')}`);

  step = 'heavy traffic merges into streams, bounded';
  await speed('max');
  let most = 0, streams = 0;
  for (let i = 0; i < 15; i++) {
    const c = await page.evaluate(() => ({ n: document.querySelectorAll('#flights *').length, s: document.querySelectorAll('#flights [data-stream]').length }));
    most = Math.max(most, c.n); streams = Math.max(streams, c.s);
    await page.waitForTimeout(200);
  }
  expect(streams > 0, 'no stream at max speed');
  expect(most < 6000, `${most} elements under #flights at max speed`);
  console.log(`max speed: up to ${most} elements under #flights, ${streams} streams`);

  step = 'pause freezes the glyphs, step moves them on';
  await speed('1');
  await until('glyphs in flight', () => page.evaluate(() => document.querySelectorAll('#flights g[data-u]:not([data-parked])').length > 3));
  await page.click('[data-speed="pause"]');
  await until('paused', () => page.evaluate(() => S.speed === 'pause'));
  await page.waitForTimeout(300);
  const glyphState = () => page.evaluate(() => [...document.querySelectorAll('#flights g[data-u]')].map(g => g.dataset.link + '@' + g.dataset.u).sort().join(' '));
  const frozen = await glyphState();
  await page.waitForTimeout(900);
  expect(frozen && frozen === await glyphState(), 'the glyphs moved while paused');
  await page.click('[data-speed="step"]');
  await until('a step moves the glyphs on', async () => (await glyphState()) !== frozen);

  step = 'apply parallelism 3';
  await page.click('[data-speed="pause"]');
  await page.click('#open-settings');
  await page.fill('[data-key="parallelism.default"]', '3');
  await page.fill('[data-key="taskmanager.numberOfTaskSlots"]', '2');
  await shot('06-settings');
  await page.click('#settings-apply');
  await page.click('[data-speed="10"]');
  await until('3 source boxes', async () => (await page.locator('[data-testid=subtask][data-vertex="source"]').count()) === 3 ? 3 : false);
  await until('3 window boxes with 3 channels each', async () => (await page.locator('[data-testid=channel-gauge]').count()) === 9 ? 9 : false);
  await page.click('[data-speed="pause"]');
  await page.click('[data-tab="watermarks"]');
  await shot('07-parallelism-3');

  step = 'the layout of a wide job (an operator parallelism each, chaining off, a filter)';
  await settings(['pipeline.operator-chaining.enabled=false', 'job.filter=key != user-3', 'job.source.parallelism=2',
    'job.window.parallelism=3', 'job.sink.parallelism=1', 'taskmanager.numberOfTaskSlots=3', 'execution.checkpointing.interval=2 s']);
  await speed('1');
  await page.waitForTimeout(3000);
  await checkLayout('wide job at 1x');
  await shot('08-wide-job');

  step = 'the layout of unaligned checkpoints under backpressure';
  await settings(['sim.cost.window=3 ms', 'execution.checkpointing.interval=2 s', 'execution.checkpointing.unaligned.enabled=true']);
  await speed('10');
  await until('backpressure and an unaligned checkpoint', () => page.evaluate(() => S.vt > 30e6 && S.stats.backpressure_now > 500 && S.stats.checkpoints_completed > 3), 30000);
  await speed('1');
  await until('a persisting mark', () => page.evaluate(() => document.querySelectorAll('#diagram [data-mark=persisting]').length > 0), 15000);
  await checkLayout('unaligned under backpressure at 1x', 8, 300);
  await shot('09-unaligned-under-backpressure');

  step = 'Watermarks names every subtask';
  await page.click('[data-tab="watermarks"]');
  const names = await page.evaluate(() => S.vertices.flatMap(v => v.subtasks.map(s => s.name)));
  const wmText = await page.textContent('#panel-watermarks');
  for (const n of names) expect(wmText.includes(n), `Watermarks does not name ${n}`);

  step = 'the Scenarios menu';
  await page.click('[data-testid=open-scenarios]');
  await until('the scenarios listed', async () => (await page.locator('[data-testid=scenario-item]').count()) >= 10 ? true : false);
  const titles = await page.locator('[data-testid=scenario-item] b').allTextContents();
  for (const want of ['Readers without splits, then idleness', 'Too few slots', 'Late data', 'Backpressure', 'Watermark alignment',
    'Exactly-once through a kill', 'At-least-once through a kill', 'Rescale through a savepoint', 'Unaligned checkpoints under backpressure', 'Processing time on a bounded input']) {
    expect(titles.some(t => t.startsWith(want)), `no scenario "${want}" in ${titles.join(' | ')}`);
  }

  step = 'scenario: readers without splits, then idleness';
  await page.click('[data-scenario="readers-without-splits"]');
  await until('the scenario\'s session', () => page.evaluate(() => S.scenario === 'readers-without-splits' && S.speed === '10' && S.vertices.length === 2));
  await until('the narration', async () => (await page.locator('[data-testid=narration-step]').count()) >= 4);
  await until('source-2 reads no split, 30 s in', () => page.evaluate(() => S.vt > 30e6));
  expect(await page.evaluate(() => S.stats.windows_fired) === 0, 'a window fired before idleness');
  await until('the narration\'s step under way at 30 s: the Watermarks tab', async () => /Watermarks tab/.test(await page.textContent('#narration li.now')));
  expect(await page.evaluate(() => S.timeline.future) === 1, 'the live action is not ahead on the timeline');
  await until('job-2, then windows fire after idleness', () => page.evaluate(() => S.stats.windows_fired > 0 && S.vt > 51e6), 30000);
  await until('the narration\'s step under way after 51 s: source-2 went IDLE', async () => /went IDLE/.test(await page.textContent('#narration li.now')));
  expect(await page.evaluate(() => statusHistory.some(h => h.job === 'job-2' && h.status === 'RUNNING')), 'no job-2');
  await shot('10-scenario-narration');

  step = 'scenario: too few slots';
  await page.click('[data-testid=open-scenarios]');
  await page.click('[data-scenario="too-few-slots"]');
  await until('FAILED everywhere', async () => {
    const header = await page.textContent('[data-testid=job-status]');
    const box = await page.textContent('[data-testid=jm-status]');
    const stats = await page.textContent('#stats-list');
    return header === 'FAILED' && box === 'FAILED' && /FAILED/.test(stats) ? [header, box] : false;
  }, 40000);
  await shot('11-failed');

  step = 'scenario: an unaligned barrier overtakes the buffers queued ahead of it';
  await page.click('[data-testid=open-scenarios]');
  await page.click('[data-scenario="unaligned-backpressure"]');
  await until('job-2 with unaligned checkpoints', () => page.evaluate(() => S.vt > 36e6 && S.settings.unaligned), 60000);
  await page.evaluate(() => {
    // every animation frame: an unaligned barrier on a link with buffers
    // waiting on it, behind the nearest of them and later ahead of it
    window.__overtake = {};
    const look = () => {
      for (const b of document.querySelectorAll('#flights g[data-glyph=barrier][data-unaligned]')) {
        const parked = [...document.querySelectorAll('#flights g[data-parked]')].filter(p => p.dataset.link === b.dataset.link).map(p => +p.dataset.u);
        if (!parked.length) continue;
        const o = window.__overtake[b.dataset.link + b.dataset.cp] || (window.__overtake[b.dataset.link + b.dataset.cp] = {});
        if (+b.dataset.u < Math.min(...parked)) o.behind = true;
        if (o.behind && +b.dataset.u > Math.max(...parked)) o.ahead = true;
      }
      requestAnimationFrame(look);
    };
    requestAnimationFrame(look);
  });
  await until('an unaligned barrier behind a queued buffer, then ahead of all of them', () => page.evaluate(() => Object.values(window.__overtake).some(o => o.behind && o.ahead)), 30000);
  await shot('12-unaligned-overtakes');

  step = 'the phone';
  const phoneCtx = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
  const phone = await phoneCtx.newPage();
  watch(phone);
  await phone.goto(url);
  await until('the first frame on the phone', () => phone.evaluate(() => S != null && document.querySelectorAll('[data-testid=subtask]').length > 0), 20000, phone);
  await shot('13-phone', phone);
  const svg = await phone.evaluate(() => document.querySelector('#diagram').getBoundingClientRect().toJSON());
  expect(svg.width > 300 && svg.height > 300 && svg.left >= 0 && svg.right <= 390, `the diagram on the phone: ${JSON.stringify(svg)}`);
  const off = await phone.evaluate(() => ({
    width: document.documentElement.scrollWidth,
    out: [...document.querySelectorAll('body *')].filter(e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0 && !e.closest('#diagram, dialog') && (r.left < -0.5 || r.right > 390.5); }).map(e => e.tagName + '#' + e.id + '.' + e.className).slice(0, 8),
  }));
  expect(off.width <= 390 && off.out.length === 0, `runs off the phone's screen: width ${off.width}, ${off.out.join(', ')}`);
  const cdp = await phoneCtx.newCDPSession(phone);
  const vb = () => phone.evaluate(() => document.querySelector('#diagram').getAttribute('viewBox').split(' ').map(Number));
  const touch = async (type, points) => cdp.send('Input.dispatchTouchEvent', { type, touchPoints: points.map(([x, y], id) => ({ x, y, id })) });
  const cx = svg.left + svg.width / 2, cy = svg.top + svg.height / 2;
  const v0 = await vb();
  await touch('touchStart', [[cx, cy]]);
  for (let i = 1; i <= 5; i++) await touch('touchMove', [[cx - 20 * i, cy - 10 * i]]);
  await touch('touchEnd', []);
  const v1 = await vb();
  expect(v1[0] > v0[0] + 20 && v1[1] > v0[1] + 10, `a one-finger drag did not pan: ${v0} -> ${v1}`);
  await touch('touchStart', [[cx - 30, cy], [cx + 30, cy]]);
  for (let i = 1; i <= 5; i++) await touch('touchMove', [[cx - 30 - 15 * i, cy], [cx + 30 + 15 * i, cy]]);
  await touch('touchEnd', []);
  const v2 = await vb();
  expect(v2[2] < v1[2] * 0.7, `a pinch did not zoom in: ${v1} -> ${v2}`);
  // a tap on a subtask inspects it
  const st = await phone.evaluate(() => {
    // the middle of the part of a subtask's box that shows in the frame
    const f = document.querySelector('#diagram').getBoundingClientRect();
    for (const b of document.querySelectorAll('[data-testid=subtask] rect.box')) {
      const r = b.getBoundingClientRect();
      const l = Math.max(r.left, f.left), t = Math.max(r.top, f.top), rr = Math.min(r.right, f.right), bb = Math.min(r.bottom, f.bottom);
      if (rr - l > 20 && bb - t > 20) return [(l + rr) / 2, (t + bb) / 2];
    }
    return null;
  });
  expect(st, 'no subtask box in the phone\'s frame after the pan and the zoom');
  await touch('touchStart', [st]);
  await touch('touchEnd', []);
  await until('the tapped subtask in the inspector', async () => /^Subtask /.test(await phone.textContent('#insp-title')), 5000, phone);
  // every panel and every action is reachable
  for (const tab of await phone.locator('[data-tab]').all()) {
    await tab.scrollIntoViewIfNeeded();
    const b = await tab.boundingBox();
    expect(b && b.x >= 0 && b.x + b.width <= 390, `tab ${await tab.textContent()} off screen: ${JSON.stringify(b)}`);
    await tab.click();
    const name = await tab.getAttribute('data-tab');
    const pb = await phone.locator(`#panel-${name}`).boundingBox();
    expect(pb && pb.width > 0 && pb.x >= 0 && pb.x + pb.width <= 390.5, `panel ${name} on the phone: ${JSON.stringify(pb)}`);
  }
  await phone.click('[data-tab="actions"]');
  for (const b of await phone.locator('#panel-actions button, #toolbar button, #toolbar a').all()) {
    await b.scrollIntoViewIfNeeded();
    const bb = await b.boundingBox();
    expect(bb && bb.x >= 0 && bb.x + bb.width <= 390.5 && bb.height > 0, `an action off screen: ${await b.textContent()} ${JSON.stringify(bb)}`);
  }
  await phone.click('[data-testid=open-scenarios]');
  const dlg = await phone.locator('#scenario-menu').boundingBox();
  expect(dlg && dlg.x >= 0 && dlg.x + dlg.width <= 390.5, `the scenario menu on the phone: ${JSON.stringify(dlg)}`);
  await phone.click('#scenario-close');
  await phone.click('#diagram-fit');
  expect(JSON.stringify(await vb()) === JSON.stringify(v0), `Fit did not bring back the first view: ${await vb()} (first ${v0})`);
  await phoneCtx.close();

  await statesAsFlinkShowsThem(page, { shot, expect, until, setStep: s => { step = s; } });
  expect(consoleErrors.length === 0, `console errors: ${consoleErrors.join(' | ')}`);
  console.log('browser test passed');
} catch (e) {
  console.log(`FAIL at "${step}": ${e.message}`);
  console.log(`page console errors (${consoleErrors.length}):`);
  for (const m of consoleErrors) console.log(`  ${m}`);
  try { await shot('failure'); } catch { }
  await browser.close();
  process.exit(1);
}
await browser.close();
