// flinksim — the Web Worker of a static site (`flinksim site`): it runs
// flinksim.wasm (cluster/session/wasm, the session core with the kernel and
// the components as Hollywood actors) off the page's thread and passes
// messages both ways (session.js, wasmSession). Paths are the site's:
// this file is assets/worker.js, beside it ../wasm_exec.js (from the Go
// toolchain that built the module), ../flinksim.wasm and ../examples/data/.
'use strict';
importScripts('../wasm_exec.js');

const waiting = [];
let ready = false;

// the module's messages go to the page; a log's bytes are moved, not copied
self.flinksimPost = msg => {
  if (msg.type === 'ready') {
    ready = true;
    for (const m of waiting.splice(0)) self.flinksimCall(m.id, m.op, m.arg);
    return;
  }
  if (msg.type === 'log') postMessage(msg, [msg.bytes.buffer]);
  else postMessage(msg);
};

// a file of the site (an events file a scenario reads), synchronously as
// the module asks for it; null when the site does not serve it
self.flinksimFetch = path => {
  const x = new XMLHttpRequest();
  x.open('GET', new URL('../' + path, self.location.href), false);
  x.send();
  return x.status === 200 ? x.responseText : null;
};

onmessage = e => {
  const m = e.data;
  if (ready) self.flinksimCall(m.id, m.op, m.arg);
  else waiting.push(m);
};

(async () => {
  const go = new Go();
  const url = new URL('../flinksim.wasm', self.location.href);
  let inst;
  try {
    inst = (await WebAssembly.instantiateStreaming(fetch(url), go.importObject)).instance;
  } catch (err) {
    // a server that does not send application/wasm: compile from the bytes
    const r = await fetch(url);
    if (!r.ok) throw new Error(`${url}: ${r.status} ${r.statusText}`);
    inst = (await WebAssembly.instantiate(await r.arrayBuffer(), go.importObject)).instance;
  }
  await go.run(inst);
  postMessage({ type: 'fatal', error: 'the simulator stopped' });
})().catch(err => postMessage({ type: 'fatal', error: String(err && err.message || err) }));
