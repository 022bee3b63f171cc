// Which parts of the bundle the paste page's engine reads, for tests/test_twins.py: runs engine.js over a bundle
// whose objects record every key read (and every key the engine itself writes, such as a cache of compiled
// expressions) while it compiles the bundle, triages the given texts with and without a machine's facts file, and
// reads that facts file.
// stdin: {"bundle": {...}, "texts": ["log text", ...], "facts": "<facts file text>"}
//   -> stdout: {"read": [[key, ...], ...], "absent": [[key, ...], ...]}: paths of keys read (array items as "[]"),
//      and of keys read that the bundle does not have and the engine does not write itself.
const path = require("path");
// ERRBOOK_ENGINE_JS: another copy of the engine (tests/twins/mutants.py runs the tests against mutated ones)
const engine = require(process.env.ERRBOOK_ENGINE_JS
  || path.join(__dirname, "..", "..", "scripts", "errbook", "web", "assets", "engine.js"));
const read = new Set(), absent = new Set(), written = new Set();
const plain = (v) => v !== null && typeof v === "object" && (Array.isArray(v) || Object.getPrototypeOf(v) === Object.prototype);

function traced(obj, at) {
  return new Proxy(obj, {
    get(t, k, recv) {
      const v = Reflect.get(t, k, recv);
      if (typeof k !== "string") return v;
      if (Array.isArray(t)) return /^[0-9]+$/.test(k) && plain(v) ? traced(v, at.concat(["[]"])) : v;
      const own = Object.prototype.hasOwnProperty.call(t, k);
      if (!own && k in Object.prototype) return v;                    // a method of every object, not a key
      const p = JSON.stringify(at.concat([k]));
      (own ? read : absent).add(p);
      return plain(v) ? traced(v, at.concat([k])) : v;
    },
    has(t, k) {
      if (typeof k === "string" && !Array.isArray(t)) read.add(JSON.stringify(at.concat([k])));
      return Reflect.has(t, k);
    },
    set(t, k, v) { written.add(JSON.stringify(at.concat([String(k)]))); return Reflect.set(t, k, v); },
  });
}

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d) => { input += d; });
process.stdin.on("end", () => {
  const req = JSON.parse(input);
  const bundle = traced(req.bundle, []);
  const eng = engine.compile(bundle);
  const machine = engine.readFacts(req.facts, bundle).values;
  for (const text of req.texts) { engine.triageText(eng, text, "", null); engine.triageText(eng, text, "", machine); }
  const out = (s) => Array.from(s).sort().map((p) => JSON.parse(p));
  // a key read before the engine wrote it (its cache of compiled expressions) is the engine's, not the bundle's
  process.stdout.write(JSON.stringify({ read: out(read), absent: out(new Set([...absent].filter((p) => !written.has(p)))) }));
});
