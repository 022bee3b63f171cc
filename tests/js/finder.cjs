// Runs the paste page's guided finder (scripts/errbook/web/assets/finder.js) under Node.js for
// tests/test_twins_finder.py.
// stdin: {"data": <the bundle's finder part>, "cases": [{"answers", "log"?, "scores"?, "machine"?}, ...]}
//        or {"bundle": <a whole bundle>, "cases": [...]}: a case without "scores" but with a "log" is scored by
//        engine.js's finderScores over the bundle's index, as the page's worker does
//   -> stdout: [{"question", "shortlist", "candidates", "answers", "inferred"} | {"error": message}, ...]
//      (with "trace": true, {"results": [...], "read": [the finder part's keys finder.js read]})
const path = require("path");
const assets = path.join(__dirname, "..", "..", "scripts", "errbook", "web", "assets");
const finder = require(process.env.ERRBOOK_FINDER_JS || path.join(assets, "finder.js"));
let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d) => { input += d; });
process.stdin.on("end", () => {
  const req = JSON.parse(input);
  let eng = null;
  const read = new Set();              // with "trace": the finder part's top-level keys that finder.js reads
  const raw = req.data || req.bundle.finder;
  const data = req.trace ? new Proxy(raw, { get(t, k) { if (typeof k === "string") read.add(k); return t[k]; } }) : raw;
  if (req.bundle) eng = require(path.join(assets, "engine.js")).compile(req.bundle);
  const engine = eng ? require(path.join(assets, "engine.js")) : null;
  const out = req.cases.map((c) => {
    let scores = c.scores === undefined ? null : c.scores;
    if (scores === null && eng && c.log) scores = finder.logScores(engine, eng, data, c.log);
    try {
      return finder.find(data, c.answers || {}, c.log || "", scores, c.machine || null);
    } catch (e) {
      return { error: String(e.message || e) };
    }
  });
  if (req.trace) finder.logScores({ finderScores: () => ({}) }, null, data, "a log");   // what the page's worker reads
  process.stdout.write(JSON.stringify(req.trace ? { results: out, read: Array.from(read).sort() } : out));
});
