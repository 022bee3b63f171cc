// Cleans lines with the paste page's engine, for tests/test_engines.py.
const path = require("path");
const engine = require(path.join(__dirname, "..", "..", "scripts", "errbook", "assets", "triage.js"));
let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d) => { input += d; });
process.stdin.on("end", () => {
  const req = JSON.parse(input);
  const eng = engine.compile(req.bundle);
  process.stdout.write(JSON.stringify(req.lines.map((l) => engine.cleanLine(l, eng.spec))));
});
