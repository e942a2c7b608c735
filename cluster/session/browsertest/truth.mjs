// States as Flink shows them (issue 25, point 2), for browser_test.mjs:
// a new session of the default job without a restart strategy; tm-1 is
// killed from the page at 10 s and the session jumps to 12 s, before the
// JobManager's heartbeat times out: tm-1 reads lost and not yet detected,
// its subtasks RUNNING as the JobManager believes them (marked lost), the
// job RUNNING. Then a jump to 20 s, after the timeout: the job reads FAILED
// in the header, the JobManager box and Stats, every subtask CANCELED, tm-1
// lost. Screenshots truth-1-killed-not-detected and truth-2-failed.
export async function statesAsFlinkShowsThem(page, { shot, expect, until, setStep }) {
  const post = (path, body) => page.evaluate(async ([p, b]) => {
    const r = await fetch(p, { method: 'POST', body: b });
    return { status: r.status, text: await r.text() };
  }, [path, body]);
  const text = async sel => (await page.textContent(sel)) || '';

  setStep('states: a new session without restarts, at 10 s');
  await post('/sim/speed', 'pause');
  const st = await post('/sim/settings', 'restart-strategy.type=none\nparallelism.default=2\ntaskmanager.numberOfTaskSlots=1\nsim.taskmanagers=2');
  expect(st.status === 200, `settings: ${st.status} ${st.text}`);
  const seek = await post('/sim/seek', '10s');
  expect(seek.status === 200, `seek: ${seek.status} ${seek.text}`);
  await until('the session at 10 s', () => page.evaluate(() => S.vt === 10e6 && S.taskmanagers.every(t => t.alive)));

  setStep('states: kill tm-1 from the page, jump to 12 s');
  await page.click('[data-testid=tm][data-tm="tm-1"]');
  await page.click('[data-testid=kill-tm]');
  // paused: the action waits in the queue at 10 s (drawn in flight)
  await until('the kill in flight', () => page.evaluate(() => (S.inflight || []).some(f => f.to === 'tm-1' && f.from === 'user')));
  await post('/sim/seek', '12s');
  await until('12 s with tm-1 lost, not yet detected', () => page.evaluate(() =>
    S.vt === 12e6 && S.taskmanagers.some(t => t.name === 'tm-1' && !t.alive && !t.loss_detected)));
  const onTm1 = await page.evaluate(() => S.vertices.flatMap(v => v.subtasks).filter(s => s.task_manager === 'tm-1')
    .map(s => ({ name: s.name, status: s.status, lost: !!s.lost, planned: !!s.planned })));
  expect(onTm1.length === 2 && onTm1.every(s => s.status === 'RUNNING' && s.lost && !s.planned),
    `tm-1's subtasks before the heartbeat timeout: ${JSON.stringify(onTm1)}`);
  const tmBox = await text('[data-testid=tm][data-tm="tm-1"]');
  expect(/✕ lost/.test(tmBox) && /not yet detected/.test(tmBox), `tm-1's box reads "${tmBox}"`);
  for (const s of onTm1) {
    const box = await text(`[data-testid=subtask][data-id="${s.name}"]`);
    expect(/tm-1 ✕/.test(box) && !/not deployed|CREATED|CANCELED/.test(box), `${s.name}'s box reads "${box}"`);
  }
  expect((await text('[data-testid=job-status]')) === 'RUNNING', 'the header does not read RUNNING before the timeout');
  const insp = await text('#insp-body');
  expect(/loss not yet detected/.test(insp), `the inspector of tm-1 reads "${insp}"`);
  await shot('truth-1-killed-not-detected');

  setStep('states: jump past the heartbeat timeout: FAILED');
  await post('/sim/seek', '20s');
  await until('the job FAILED in the header', async () => (await text('[data-testid=job-status]')) === 'FAILED');
  const jm = await text('[data-testid=jobmanager]');
  expect(/FAILED/.test(jm), `the JobManager box reads "${jm}"`);
  const stats = await text('#stats-list');
  expect(/Job status\s*FAILED/.test(stats), `Stats reads "${stats.slice(0, 80)}"`);
  const boxes = await page.locator('[data-testid=subtask]').allTextContents();
  expect(boxes.length === 4 && boxes.every(b => /CANCELED/.test(b)), `subtask boxes after the failure: ${JSON.stringify(boxes)}`);
  const tm1 = await text('[data-testid=tm][data-tm="tm-1"]');
  expect(/✕ lost/.test(tm1) && /loss detected/.test(tm1), `tm-1's box after the timeout reads "${tm1}"`);
  const overview = await page.evaluate(async () => (await (await fetch('/jobs/overview')).json()).jobs.at(-1));
  expect(overview.state === 'FAILED' && overview.tasks.canceled === 4 && overview.tasks.running === 0,
    `/jobs/overview after the failure: ${JSON.stringify(overview)}`);
  await shot('truth-2-failed');
}
