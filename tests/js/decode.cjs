// The paste page's reading of a log file's bytes (engine.js: logEncoding, decodeLog) under Node.js, for
// tests/hostile/test_encodings.py. stdin: {"files": ["<base64 bytes>", ...]} -> stdout: [{"encoding", "text"}, ...]
const path = require("path");
const engine = require(path.join(__dirname, "..", "..", "scripts", "errbook", "web", "assets", "engine.js"));
let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d) => { input += d; });
process.stdin.on("end", () => {
  const req = JSON.parse(input);
  const out = req.files.map((b64) => engine.decodeLog(new Uint8Array(Buffer.from(b64, "base64"))));
  process.stdout.write(JSON.stringify(out));
});
