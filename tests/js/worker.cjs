// Runs the paste page's worker (scripts/errbook/web/assets/triage-worker.js) under Node.js for
// tests/test_paste_worker.py: a stand-in `self` and importScripts load the engine and the given bundle, and each log
// is matched as the page asks for it (pass after pass, "continue" until done).
// stdin: {"bundle": {...}, "budget": ms, "tail": chars, "logs": [{"text": ...} | {"b64": file bytes}, ...]}
//   -> stdout: [{"done": last message, "early": [early messages], "passes": n, "whole": engine.triageText's answer
//                on the same text}, ...]
const path = require("path");
const { Blob } = require("buffer");
const ASSETS = path.join(__dirname, "..", "..", "scripts", "errbook", "web", "assets");
const engine = require(path.join(ASSETS, "engine.js"));
let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d) => { input += d; });
process.stdin.on("end", async () => {
  const req = JSON.parse(input);
  let listener = null;
  global.self = global;
  global.ERRBOOK_BUNDLE = req.bundle;
  global.importScripts = () => { global.ErrbookTriage = engine; };
  global.postMessage = (m) => { if (listener) listener(m); };
  require(path.join(ASSETS, "triage-worker.js"));
  const eng = engine.compile(req.bundle);
  const out = [];
  let id = 0;
  for (const log of req.logs) {
    const file = log.b64 !== undefined ? new Blob([Buffer.from(log.b64, "base64")]) : null;
    const text = file ? engine.decodeLog(new Uint8Array(Buffer.from(log.b64, "base64"))).text : log.text;
    const my = ++id;
    const got = await new Promise((resolve) => {
      const early = [];
      let passes = 0;
      listener = (m) => {
        if (m.id !== my) return;
        if (m.type === "early") early.push(m);
        if (m.type === "pass") { passes++; setTimeout(() => self.onmessage({ data: { type: "continue", id: my, budget: req.budget } }), 0); }
        if (m.type === "done" || m.type === "error") resolve({ done: m, early: early, passes: passes + 1 });
      };
      self.onmessage({ data: { type: "match", id: my, file: file, text: file ? null : text, budget: req.budget, tail: req.tail } });
    });
    got.whole = engine.triageText(eng, text, "", null);
    got.lines = text.split(/\r\n|\r|\n/).length;
    out.push(got);
  }
  process.stdout.write(JSON.stringify(out));
});
