// Runs the paste page's engine (scripts/errbook/assets/triage.js) under Node.js for tests/test_engines.py.
// stdin: {"bundle": {...}, "cases": [{"name": ..., "text": ...}]}  stdout: {"name": [results], ...}
const path = require("path");
const engine = require(path.join(__dirname, "..", "..", "scripts", "errbook", "assets", "triage.js"));
let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d) => { input += d; });
process.stdin.on("end", () => {
  const req = JSON.parse(input);
  const eng = engine.compile(req.bundle);
  const out = {};
  const t0 = Date.now();
  for (const c of req.cases) out[c.name] = engine.matchText(eng, c.text, "");
  out.__ms = Date.now() - t0;
  process.stdout.write(JSON.stringify(out));
});
