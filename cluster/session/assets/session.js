// flinksim ui — the page's one link to a session.
//
// Everything the page asks of the simulation goes through the object below:
// frames come in (the state, the log lines and the traffic since the last
// frame), actions, speeds, jumps, settings and scenarios go out, and a few
// reads (settings, keyed state, explain, scenarios) are answered. This one is
// HTTP + server-sent events against `flinksim ui`; the WebAssembly build
// (the simulator in a Web Worker, issue 31) provides another object with the
// same methods, and the rest of the page does not change.
//
//   session.connect(onFrame, onLink)  start receiving frames; onFrame(msg) with
//                                     {gen, reset, skipped, events, traffic,
//                                     traffic_skipped, state}; onLink(up)
//   session.pause() / session.resume() stop and restart receiving (hidden tab)
//   session.act(text)                 an action in the --action syntax
//   session.speed(s)                  pause, step, 0.001 .. 1000, max
//   session.seek(text)                a virtual time with a unit
//   session.applySettings(text)       key=value lines: a new session
//   session.startScenario(name)       a guided scenario's session
//   session.state()                   the whole view with keyed state
//   session.settings()                every setting with its metadata
//   session.explain(key)              where the job keeps a key
//   session.scenarios()               the guided scenarios
//   session.logURL                    where the log so far downloads from
'use strict';

const session = (() => {
  let es = null, cursor = '', handlers = null;

  async function post(url, body) {
    const r = await fetch(url, { method: 'POST', body, headers: { 'Content-Type': 'text/plain' } });
    const text = await r.text();
    if (!r.ok) throw new Error(text.trim() || `${r.status} ${r.statusText}`);
    try { return JSON.parse(text); } catch { return text; }
  }
  async function get(url) {
    const r = await fetch(url);
    const text = await r.text();
    if (!r.ok) throw new Error(text.trim() || `${r.status} ${r.statusText}`);
    return JSON.parse(text);
  }
  function open() {
    if (es) es.close();
    es = new EventSource('/sim/stream' + (cursor ? `?since=${encodeURIComponent(cursor)}` : ''));
    es.addEventListener('frame', e => {
      cursor = e.lastEventId || cursor;
      handlers.onLink(true);
      handlers.onFrame(JSON.parse(e.data));
    });
    es.onerror = () => handlers.onLink(false);
  }
  return {
    connect(onFrame, onLink) { handlers = { onFrame, onLink }; open(); },
    pause() { if (es) { es.close(); es = null; } },
    resume() { if (!es && handlers) open(); },
    act: text => post('/sim/action', text),
    speed: s => post('/sim/speed', s),
    seek: text => post('/sim/seek', text),
    applySettings: text => post('/sim/settings', text),
    startScenario: name => post('/sim/scenario', name),
    state: () => get('/sim/state'),
    settings: () => get('/sim/settings'),
    explain: key => get('/sim/explain?key=' + encodeURIComponent(key)),
    scenarios: () => get('/sim/scenarios'),
    logURL: '/sim/log',
  };
})();
