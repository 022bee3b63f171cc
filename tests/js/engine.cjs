// Runs the paste page's engine (scripts/errbook/web/assets/engine.js) under Node.js for tests/test_engines.py.
// stdin: {"bundle": {...}, "cases": [{"name": ..., "text": ...}], "facts"?: "<facts file text>"}
//                      -> stdout: {"name": [results], ..., "__ms": n, "__first": {"name": first failure line or null}}
//    or: {"bundle": {...}, "lines": ["raw line", ...]}             -> stdout: [["sub-line", ...], ...]
//    or: {"bundle": {...}, "texts": ["text", ...]}                 -> stdout: [["token", ...], ...]
//    or: {"bundle": {...}, "read_facts": [...]} / {"bundle": {...}, "ranges": [...]}   (see below)
const path = require("path");
const engine = require(path.join(__dirname, "..", "..", "scripts", "errbook", "web", "assets", "engine.js"));
let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d) => { input += d; });
process.stdin.on("end", () => {
  const req = JSON.parse(input);
  const eng = engine.compile(req.bundle);
  if (req.lines) {
    process.stdout.write(JSON.stringify(req.lines.map((l) => engine.clean(l, eng.spec))));
    return;
  }
  if (req.texts) {
    process.stdout.write(JSON.stringify(req.texts.map((t) => engine.tokens(eng, t))));
    return;
  }
  const out = {};
  const t0 = Date.now();
  if (req.read_facts) {   // {"bundle", "read_facts": [{"text": ...} | {"b64": <the file's bytes>}, ...]} -> [{values, error}, ...]
    const read = (f) => engine.readFacts(f.b64 !== undefined ? new Uint8Array(Buffer.from(f.b64, "base64")) : f.text, req.bundle);
    process.stdout.write(JSON.stringify(req.read_facts.map(read)));
    return;
  }
  if (req.ranges) {       // {"bundle", "ranges": [[version, range], ...]} -> [true | false | null, ...]
    process.stdout.write(JSON.stringify(req.ranges.map((vr) => engine.inRange(vr[0], vr[1]))));
    return;
  }
  const machine = req.facts ? engine.readFacts(req.facts, req.bundle).values : null;
  const first = {};
  for (const c of req.cases) {
    const r = engine.triageText(eng, c.text, "", machine);
    out[c.name] = r.results;
    first[c.name] = r.firstFailureLine;
  }
  out.__ms = Date.now() - t0;
  out.__first = first;
  process.stdout.write(JSON.stringify(out));
});
