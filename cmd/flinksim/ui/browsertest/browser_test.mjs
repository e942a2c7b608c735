// The browser test of the live diagram (issue 10), run by browser_test.go
// when .ci/run has installed Chromium and playwright-core:
//
//   node browser_test.mjs URL OUTDIR
//
// Loads the page for the default job (with a restart strategy, so that a
// lost TaskManager restarts the job), counts the subtask boxes (4) and the
// input channel gauges (4), presses 100x, kills tm-1 from the page and sees
// the job go RESTARTING then RUNNING with records read still growing,
// triggers a checkpoint and sees it in the Checkpoints panel, applies
// parallelism 3 with enough slots and sees 3 source boxes. Screenshots go to
// OUTDIR; on failure the page's console errors are printed.
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
const page = await context.newPage();
page.on('console', m => { if (m.type() === 'error') consoleErrors.push(m.text()); });
page.on('pageerror', e => consoleErrors.push(String(e)));

async function shot(name) {
  const path = `${out}/${name}.png`;
  await page.screenshot({ path, fullPage: true });
  console.log(`screenshot ${path}`);
}
function expect(cond, what) { if (!cond) throw new Error(`${step}: ${what}`); }
async function until(what, fn, ms = 20000) {
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    last = await fn();
    if (last) return last;
    await page.waitForTimeout(100);
  }
  throw new Error(`${step}: timed out waiting for ${what} (last: ${JSON.stringify(last)})`);
}
const num = async sel => Number((await page.textContent(sel)).replace(/[^0-9]/g, ''));

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
  await shot('04-checkpoint');

  step = 'apply parallelism 3';
  await page.click('[data-speed="pause"]');
  await page.click('#open-settings');
  await page.fill('[data-key="parallelism.default"]', '3');
  await page.fill('[data-key="taskmanager.numberOfTaskSlots"]', '2');
  await shot('05-settings');
  await page.click('#settings-apply');
  await page.click('[data-speed="10"]');
  await until('3 source boxes', async () => (await page.locator('[data-testid=subtask][data-vertex="source"]').count()) === 3 ? 3 : false);
  await until('3 window boxes with 3 channels each', async () => (await page.locator('[data-testid=channel-gauge]').count()) === 9 ? 9 : false);
  await page.click('[data-speed="pause"]');
  await page.click('[data-tab="watermarks"]');
  await shot('06-parallelism-3');
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
