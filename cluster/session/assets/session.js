// flinksim — the page's one link to a session.
//
// Everything the page asks of the simulation goes through the object below:
// frames come in (the state, the log lines and the traffic since the last
// frame), actions, speeds, jumps, settings and scenarios go out, and a few
// reads (settings, keyed state, explain, scenarios) are answered. There are
// two of them with the same methods, and the page's meta tag
// flinksim-session chooses: "http", HTTP + server-sent events against
// `flinksim ui`; "wasm", the simulator itself in a Web Worker
// (assets/worker.js running flinksim.wasm, as `flinksim site` writes it),
// which makes no request but for the site's static files. The rest of the
// page does not know which one it has.
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
//
// The links marked data-log download the log so far (GET /sim/log, or the
// worker's re-run of the recipe saved from memory).
'use strict';

function httpSession() {
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
  };
}

// wasmSession runs the session in a Web Worker: each method is a message
// {id, op, arg} (the operations of session.Core.Call), answered by a
// message with the same id; frames come as they are published. The page's
// address (?set=KEY%3DVALUE&seed=N&scenario=NAME) opens the session; what
// it refuses is shown above the toolbar.
function wasmSession() {
  const worker = new Worker('assets/worker.js');
  const pending = new Map();
  let nextId = 1, handlers = null;

  function call(op, arg = '') {
    return new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      worker.postMessage({ id, op, arg: String(arg) });
    });
  }
  function showLinkErrors(errs) {
    const el = document.getElementById('link-errors');
    if (!el || !errs || !errs.length) return;
    el.textContent = 'The address asks for what this page cannot do; the session runs without it:\n' + errs.join('\n');
    el.hidden = false;
  }
  worker.onmessage = e => {
    const m = e.data;
    if (m.type === 'frame') {
      if (handlers) { handlers.onLink(true); handlers.onFrame(JSON.parse(m.data)); }
      return;
    }
    if (m.type === 'fatal') {
      showLinkErrors(['the simulator did not start: ' + m.error]);
      if (handlers) handlers.onLink(false);
      return;
    }
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.type === 'log') p.resolve({ name: m.name, bytes: m.bytes });
    else if (m.error !== undefined) p.reject(new Error(m.error));
    else p.resolve(JSON.parse(m.body));
  };
  worker.onerror = e => { showLinkErrors(['the worker failed: ' + (e.message || e)]); if (handlers) handlers.onLink(false); };

  async function download(e) {
    e.preventDefault();
    try {
      const { name, bytes } = await call('log');
      const url = URL.createObjectURL(new Blob([bytes], { type: 'application/x-ndjson' }));
      const a = document.createElement('a');
      a.href = url; a.download = name;
      document.body.appendChild(a); a.click(); a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60000);
    } catch (err) {
      if (typeof toast === 'function') toast(err.message, true);
    }
  }
  for (const a of document.querySelectorAll('a[data-log]')) {
    a.setAttribute('href', '#log');
    a.addEventListener('click', download);
  }
  return {
    connect(onFrame, onLink) {
      handlers = { onFrame, onLink };
      call('link', location.search).then(r => showLinkErrors(r.errors), err => showLinkErrors([err.message]));
    },
    pause() { worker.postMessage({ id: 0, op: 'pause', arg: '' }); },
    resume() { worker.postMessage({ id: 0, op: 'resume', arg: '' }); },
    act: text => call('act', text),
    speed: s => call('speed', s),
    seek: text => call('seek', text),
    applySettings: text => call('settings', text),
    startScenario: name => call('scenario', name),
    state: () => call('state'),
    settings: () => call('get-settings'),
    explain: key => call('explain', key),
    scenarios: () => call('scenarios'),
  };
}

const session = (() => {
  const meta = document.querySelector('meta[name="flinksim-session"]');
  return meta && meta.content === 'wasm' ? wasmSession() : httpSession();
})();
