// Runs the paste page's engine (scripts/errbook/web/assets/engine.js) under Node.js for tests/test_engines.py.
// stdin: {"bundle": {...}, "cases": [{"name": ..., "text": ..., "facts"?: ...}], "facts"?: "<facts file text>",
//         "top"?: n, "machines"?: ["<facts file text>", ...]}
//                      -> stdout: {"name": [results], ..., "__ms": n, "__first": {"name": first failure line or null}}
//    or: {"bundle": {...}, "lines": ["raw line", ...]}             -> stdout: [["sub-line", ...], ...]
//    or: {"bundle": {...}, "texts": ["text", ...]}                 -> stdout: [["token", ...], ...]
//    or: {"bundle": {...}, "split_lines" | "conditions" | "trouble": [...]}  (the truth tables of tests/twins/)
//    or: {"bundle": {...}, "messages": [{"text", "values"?}, ...]}   -> [message block | null, ...]
//    or: {"bundle": {...}, "read_facts": [...]} / {"bundle": {...}, "ranges": [...]}   (see below)
const path = require("path");
// ERRBOOK_ENGINE_JS: another copy of the engine (tests/twins/mutants.py runs the tests against mutated ones)
const engine = require(process.env.ERRBOOK_ENGINE_JS
  || path.join(__dirname, "..", "..", "scripts", "errbook", "web", "assets", "engine.js"));
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
  if (req.split_lines) {  // {"bundle", "split_lines": ["text", ...]} -> [["sub-line", ...], ...]: every physical line cleaned
    const clean = (text) => text.split(eng.spec.breaks).flatMap((l) => engine.clean(l, eng.spec));
    process.stdout.write(JSON.stringify(req.split_lines.map(clean)));
    return;
  }
  if (req.conditions) {   // {"bundle", "conditions": [[condition, values], ...]} -> [true | false | null, ...]
    process.stdout.write(JSON.stringify(req.conditions.map((cv) => engine.holds(cv[0], cv[1]))));
    return;
  }
  if (req.trouble) {      // {"bundle", "trouble": [[query line, ...], ...]} -> [[reports trouble, first failure line], ...]
    process.stdout.write(JSON.stringify(req.trouble.map((ls) => [engine.reportsTrouble(eng, ls), engine.firstFailureLine(eng, ls)])));
    return;
  }
  if (req.unexplained) {  // {"bundle", "unexplained": [{"text", "results"}, ...]} -> [[{line, text}, ...], ...]
    process.stdout.write(JSON.stringify(req.unexplained.map((c) => engine.unexplainedLines(eng, c.text, c.results, 10))));
    return;
  }
  if (req.messages) {     // {"bundle", "messages": [{"text", "values"?}, ...]} -> [message block | null, ...]
    process.stdout.write(JSON.stringify(req.messages.map((c) => engine.triageText(eng, c.text, "", c.values || null).message)));
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
  for (const c of req.cases) {   // a case may bring its own facts file (tests/test_twins_fuzz.py)
    const r = engine.triageText(eng, c.text, "", c.facts ? engine.readFacts(c.facts, req.bundle).values : machine);
    out[c.name] = req.top ? r.results.slice(0, req.top) : r.results;
    first[c.name] = r.firstFailureLine;
  }
  if (req.machines) {     // facts files -> [{values, facts, bonus}]: read, as log facts, and each entry's check bonus
    out.__machines = req.machines.map((text) => {
      const values = engine.readFacts(text, req.bundle).values;
      return Object.assign({ values: values }, engine.machineOf(eng, values));
    });
  }
  out.__ms = Date.now() - t0;
  out.__first = first;
  process.stdout.write(JSON.stringify(out));
});
