// The browser test of `flinksim site` (run by TestSiteBrowser, which builds
// the site, serves it with a static file server and checks that it got no
// request but for the site's files): the simulator in the page's Web
// Worker, with no server behind it.
//
//   1. the first frame, and how long it took from the navigation;
//   2. the job runs (with restarts, set in the address);
//   3. an action: kill tm-1 from the page, the job restarts;
//   4. a jump back: the slider to 10 s, before the kill, which waits ahead;
//   5. max speed through the kill again: how fast (virtual s per wall s);
//   6. the log downloads (saved to OUT/site.jsonl for `flinksim replay`);
//   7. settings in the address: ?set=job.window.size%3D15s&seed=7 applies,
//      ?set=parallelism.default%3D0 is shown with the setting and its range.
//
// node site_test.mjs URL OUT; prints "figure NAME VALUE" lines.
import { chromium } from 'playwright-core';

const [url, out] = process.argv.slice(2);
const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';
const errors = [];
let step = 'start';

const browser = await chromium.launch({
  executablePath: chromiumPath, headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
    '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
});
const context = await browser.newContext({ viewport: { width: 1440, height: 960 }, acceptDownloads: true });
const requests = [];
context.on('request', r => requests.push(r.url()));
const page = await context.newPage();
page.on('console', m => { if (m.type() === 'error') errors.push(m.text()); });
page.on('pageerror', e => errors.push(String(e)));

function expect(cond, what) { if (!cond) throw new Error(`${step}: ${what}`); }
async function until(what, fn, ms = 30000) {
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    last = await fn();
    if (last) return last;
    await page.waitForTimeout(100);
  }
  throw new Error(`${step}: timed out waiting for ${what} (last: ${JSON.stringify(last)})`);
}
const speed = async s => { await page.click(`[data-speed="${s}"]`); await until(`speed ${s}`, () => page.evaluate(x => S && S.speed === x, s)); };
const vt = () => page.evaluate(() => S.vt);

try {
  step = 'load the page';
  const t0 = Date.now();
  await page.goto(url + '?set=restart-strategy.type%3Dfixed-delay');
  await until('the first frame', () => page.evaluate(() => typeof S !== 'undefined' && S != null && document.querySelectorAll('[data-testid=subtask]').length > 0), 60000);
  console.log(`figure first-frame-ms ${Date.now() - t0}`);
  expect(await page.evaluate(() => document.querySelector('meta[name=flinksim-session]').content) === 'wasm', 'the page is not the wasm session');
  await page.screenshot({ path: `${out}/site-01-first-frame.png` });

  step = 'the job runs at 10x';
  await speed('10');
  await until('RUNNING past 12 s of virtual time', () => page.evaluate(() => S.vt > 12e6 && S.job.state === 'RUNNING'));

  step = 'kill tm-1 from the page';
  await page.click('[data-testid=tm][data-tm="tm-1"]');
  await page.click('[data-testid=kill-tm]');
  await until('tm-1 killed', () => page.evaluate(() => S.taskmanagers.some(t => t.name === 'tm-1' && !t.alive)));
  const killedAt = await vt();
  await until('RESTARTING → RUNNING', async () => {
    const hist = await page.textContent('[data-testid=status-history]');
    const status = await page.textContent('[data-testid=job-status]');
    return /RESTARTING → RUNNING/.test(hist) && status === 'RUNNING' ? hist : false;
  }, 90000);
  await page.screenshot({ path: `${out}/site-02-restarted.png` });

  step = 'jump back to 10 s';
  await speed('pause');
  const before = await page.evaluate(() => S.generation);
  await page.$eval('#slider', el => { el.value = 10000; el.dispatchEvent(new Event('input')); el.dispatchEvent(new Event('change')); });
  await until('the session at 10 s', () => page.evaluate(g => S.generation > g && S.rerun == null && S.vt >= 10e6 && S.vt < 10.5e6, before));
  expect(killedAt > 10e6, `tm-1 was killed at ${killedAt} µs, not after 10 s`);
  expect(await page.evaluate(() => S.taskmanagers.every(t => t.alive)), 'a TaskManager is dead at 10 s, before the kill');
  expect(await page.evaluate(() => S.timeline.future) === 1, 'the kill is not ahead on the timeline');
  await page.screenshot({ path: `${out}/site-03-jumped-back.png` });

  step = 'the reads of the session interface: keyed state, explain, scenarios, a step';
  const keyed = await page.evaluate(async () => {
    const st = await session.state();
    return st.vertices.flatMap(v => v.subtasks).reduce((n, s) => n + (s.keyed_state || []).length, 0);
  });
  expect(keyed > 0, 'no keyed state in session.state()');
  const ex = await page.evaluate(() => session.explain('user-42'));
  expect(ex.key === 'user-42' && ex.max_parallelism === 128 && ex.key_group >= 0 && ex.key_group < 128 && /^window-/.test(ex.owner), `explain: ${JSON.stringify(ex)}`);
  const names = await page.evaluate(async () => (await session.scenarios()).scenarios.map(s => s.name));
  expect(names.includes('backpressure') && names.length >= 10, `scenarios: ${names}`);
  const steps = await page.evaluate(() => S.steps);
  await page.click('[data-speed="step"]');
  await until('one scheduler step', () => page.evaluate(n => S.steps === n + 1, steps));
  let refused = '';
  try { await page.evaluate(() => session.seek('ten seconds')); } catch (e) { refused = e.message; }
  expect(/virtual time/.test(refused), `a bad jump was not refused with the server's message: ${refused}`);

  step = 'max speed, through the kill again';
  await speed('max');
  await page.waitForTimeout(2000);
  const v0 = await vt(), w0 = Date.now();
  await page.waitForTimeout(10000);
  const v1 = await vt(), w1 = Date.now();
  const x = (v1 - v0) / 1e6 / ((w1 - w0) / 1000);
  console.log(`figure max-speed-x ${x.toFixed(1)}`);
  expect(x > 5, `max speed ${x.toFixed(1)}x`);
  await speed('pause');
  expect(await page.evaluate(k => S.vt > k && S.job.state === 'RUNNING' && S.job.restarts === 1 && S.timeline.future === 0, killedAt),
    'past the kill at max speed the job does not run after one restart');

  step = 'download the log';
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
  await dl.saveAs(`${out}/site.jsonl`);
  console.log(`download ${dl.suggestedFilename()} -> ${out}/site.jsonl`);

  step = 'settings in the address';
  await page.goto(url + '?set=job.window.size%3D15s&seed=7');
  await until('seed 7 and 15 s windows', () => page.evaluate(() => S && S.seed === 7 && S.generation >= 2), 60000);
  const size = await page.evaluate(async () => (await session.settings()).settings.find(s => s.key === 'job.window.size').value);
  expect(/^15 ?s$/.test(size), `job.window.size is ${size}`);
  expect(await page.locator('#link-errors').isHidden(), 'errors shown for good settings');

  step = 'a bad setting in the address';
  await page.goto(url + '?set=parallelism.default%3D0&seed=3');
  const shown = await until('the refusal shown', async () => {
    const el = page.locator('#link-errors');
    return (await el.isVisible()) ? el.textContent() : false;
  });
  expect(/parallelism\.default/.test(shown) && /allowed: 1\.\.32768/.test(shown), `shown: ${shown}`);
  await until('the session runs without it, with seed 3', () => page.evaluate(() => S && S.seed === 3));
  await page.screenshot({ path: `${out}/site-04-bad-setting.png` });

  step = 'a scenario from the address, with settings on top';
  await page.goto(url + '?set=job.window.size%3D15s&seed=7&scenario=backpressure');
  await until('the backpressure scenario with seed 7', () => page.evaluate(() => S && S.scenario === 'backpressure' && S.seed === 7), 60000);
  const size2 = await page.evaluate(async () => (await session.settings()).settings.find(s => s.key === 'job.window.size').value);
  expect(/^15 ?s$/.test(size2), `the scenario's job.window.size is ${size2}`);

  step = 'a scenario that reads its events file from the site';
  await page.goto(url + '?scenario=processing-time-bounded');
  await until('the processing-time-bounded scenario reading records', () => page.evaluate(() => S && S.scenario === 'processing-time-bounded' && S.stats.records_read > 0), 60000);
  expect(requests.some(r => r.endsWith('/examples/data/playground-clicks.jsonl')), 'the events file was not read from the site');

  expect(errors.length === 0, `console errors: ${errors.join(' | ')}`);
  for (const r of requests) console.log(`request ${r}`);
  console.log('ok');
} catch (e) {
  console.log(`FAIL ${e.message}`);
  for (const r of requests) console.log(`request ${r}`);
  try { await page.screenshot({ path: `${out}/site-fail.png` }); } catch { }
  await browser.close();
  process.exit(1);
}
await browser.close();
