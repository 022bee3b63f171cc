/* The paste page's matcher, off the main thread, started once when the page loads and used for every Match: the
 * bundle and engine are loaded and compiled once. The page hands it the log itself (a File, read here in slices,
 * or the pasted text), so megabytes never pass through the text box or the page's thread.
 *
 * Order, for a big log (issue 27): first an early look at what most often names the problem, the end of the log
 * and its error lines (the lines the second stage's gate calls failures: retrieval.JS_SPEC's `failure`, the same
 * words `errbook triage` uses); then every line in order, in pieces of CHUNK characters, into one scan, so a
 * finished pass gives exactly the CLI's answer (tests/test_engines.py holds the engine to it). Each pass of
 * the in-order scan stops when its time budget (the form's data-budget-ms) is spent, and the page may continue.
 * The worker yields between pieces, so a new log is heard at once (and the page can tell a stuck worker).
 * Nothing here makes a network request. */
/* global importScripts, ErrbookTriage, ErrbookFinder */
"use strict";
importScripts("signatures.js", "engine.js");
try { importScripts("finder.js"); } catch (e) { /* no guided finder: the page then asks no questions */ }
const E = ErrbookTriage;
const eng = E.compile(self.ERRBOOK_BUNDLE);
const BREAKS = new RegExp(self.ERRBOOK_BUNDLE.normalize.breaks);
const BREAKS_G = new RegExp(BREAKS.source, "g");
const FAILURE = new RegExp(self.ERRBOOK_BUNDLE.retrieval.trouble.failure, "gi");
const CHUNK = 256 << 10;           // characters per piece of the in-order scan
const READ = 4 << 20;              // bytes per slice of a File
const MAX_FILE = 64 << 20;         // a bigger file: its first MAX_FILE bytes
const MAX_EARLY = 50000;           // error lines the early look takes at most
const UNEXPLAINED = 10;
let job = null;
const now = () => Date.now();

self.onmessage = (ev) => {
  const m = ev.data || {};
  if (m.type === "match") { job = newJob(m); run(job).catch((e) => fail(job, e)); }
  else if (m.type === "continue" && job && job.id === m.id && job.paused) {
    job.paused = false;
    job.passEnd = now() + m.budget;
    order(job);
  }
};

function newJob(m) {
  return { id: m.id, file: m.file || null, text: m.file ? null : String(m.text || ""), facts: m.facts || null,
           passEnd: now() + m.budget, t0: now(), tail: m.tail, skip: m.skip || [], early: !m.noEarly,
           chunks: [], total: 0, nlines: 0, next: 0, done: 0, scan: E.newScan(eng), earlyScan: null, earlyLines: 0 };
}

function post(j, msg) { if (j === job) self.postMessage(Object.assign({ id: j.id }, msg)); }
function fail(j, e) { post(j, { type: "error", error: String((e && e.message) || e) }); }
const pause = () => new Promise((resolve) => setTimeout(resolve, 0));

/* ---- the log as line-aligned pieces: {text, line (its first line's number), size} ---- */

// The index just past the first line break at or after `at` (\r\n, \r or \n, as normalize.py's breaks), or -1
// when there is none yet (a \r at the very end may be the first half of a \r\n).
function breakAfter(s, at) {
  const n = s.indexOf("\n", at), end = n < 0 ? s.length : n;
  const r = s.substring(at, end).indexOf("\r");
  if (r >= 0 && at + r + 1 < end) return at + r + 1;         // a lone \r
  return n < 0 ? -1 : n + 1;                                  // \n, or the \r\n it ends
}

// The line breaks in s (a log of n breaks has n + 1 lines, as the page has always counted them).
function breaksIn(s) {
  let n = 0;
  if (s.indexOf("\r") < 0) for (let i = s.indexOf("\n"); i >= 0; i = s.indexOf("\n", i + 1)) n++;
  else n = s.split(BREAKS).length - 1;
  return n;
}

function addPieces(j, s, last) {
  let from = 0;
  while (from < s.length) {
    let cut = from + CHUNK >= s.length ? -1 : breakAfter(s, from + CHUNK);
    if (cut < 0) {
      if (!last) return s.slice(from);          // the rest waits for the next slice
      cut = s.length;
    }
    const text = s.slice(from, cut);
    j.chunks.push({ text: text, line: j.nlines + 1, size: text.length });
    j.nlines += breaksIn(text);
    from = cut;
  }
  return "";
}

async function load(j) {
  if (j.text !== null) {
    j.total = j.text.length;
    addPieces(j, j.text, true);
    j.text = null;
    return;
  }
  const f = j.file, size = Math.min(f.size, MAX_FILE);
  j.total = size;
  j.cut = f.size > MAX_FILE;
  const head = new Uint8Array(await f.slice(0, Math.min(size, 4096)).arrayBuffer());
  const [enc, bom] = E.logEncoding(head);
  j.encoding = enc;
  if (enc.startsWith("utf-32")) {                // TextDecoder has none: the engine decodes it whole
    addPieces(j, E.decodeLog(new Uint8Array(await f.slice(0, size).arrayBuffer())).text, true);
    return bytes(j);
  }
  const label = enc === "utf-16-le" ? "utf-16le" : enc === "utf-16-be" ? "utf-16be" : "utf-8";
  const dec = new TextDecoder(label, { ignoreBOM: enc !== "utf-8" });
  let rest = "";
  for (let at = bom; at < size; at += READ) {
    const end = Math.min(size, at + READ);
    const s = rest + dec.decode(new Uint8Array(await f.slice(at, end).arrayBuffer()), { stream: end < size });
    rest = addPieces(j, s, end >= size);
    post(j, { type: "progress", phase: "read", done: end, total: size });
    await pause();
    if (j !== job) return;
  }
  if (rest) addPieces(j, rest, true);
  bytes(j);
}

// A file's progress is said in its bytes: each piece's share of them, by its share of the characters.
function bytes(j) {
  const chars = j.chunks.reduce((a, c) => a + c.text.length, 0) || 1;
  for (const c of j.chunks) c.size = c.text.length * j.total / chars;
}

function linesOf(c, j) {
  const lines = c.text.split(BREAKS);
  if (c !== j.chunks[j.chunks.length - 1]) lines.pop();        // the piece ends with a line break
  return lines;
}

const skipped = (j, line) => j.skip.some(([a, b]) => line >= a && line <= b);

/* ---- the early look: the end of the log first, then its error lines (in line order), into their own scan ---- */
async function early(j) {
  const scan = E.newScan(eng);
  j.earlyScan = scan;
  // the end: whole pieces from the last back, until j.tail characters
  let tailFrom = j.chunks.length, tailChars = 0;
  while (tailFrom > 0 && tailChars < j.tail) { tailFrom--; tailChars += j.chunks[tailFrom].text.length; }
  j.tailFrom = tailFrom;
  for (let k = tailFrom; k < j.chunks.length; k++) {
    const c = j.chunks[k];
    if (!j.skip.some(([a]) => a === c.line)) E.feedLines(eng, scan, linesOf(c, j), c.line, "");
  }
  let told = tellEarly(j, false), asked = now();
  // then the error lines before it, piece by piece, told as soon as they show a diagnosis (asked at most every
  // 0.5 s: ranking runs the second stage while there is none)
  for (let k = 0; k < tailFrom && j.earlyLines < MAX_EARLY; k++) {
    for (const [line, raw] of errorLines(j, j.chunks[k], MAX_EARLY - j.earlyLines)) E.feedLines(eng, scan, [raw], line, "");
    post(j, { type: "progress", phase: "early", chunk: k, done: 0, total: j.total });
    if (!told && now() - asked > 500) { told = tellEarly(j, false); asked = now(); }
    await pause();
    if (j !== job) return;
  }
  tellEarly(j, true);
}

// Post the early look's answer: always at its end, before only once it has a diagnosis. Returns whether posted.
function tellEarly(j, last) {
  const results = merged([E.finish(eng, j.earlyScan, j.facts).results]);
  if (!last && !results.some((r) => r.level === "diagnosis")) return false;
  post(j, Object.assign({ type: "early", results: results }, coverage(j)));
  return true;
}

// The lines of a piece that hold a failure word, as [line number, raw line], at most `room` of them.
function errorLines(j, c, room) {
  const s = c.text, cr = s.indexOf("\r") >= 0, out = [];
  let line = c.line, p = 0;                        // p: where the line numbered `line` starts
  FAILURE.lastIndex = 0;
  for (let m = FAILURE.exec(s); m !== null && out.length < room; m = FAILURE.exec(s)) {
    if (!cr) for (let nl = s.indexOf("\n", p); nl >= 0 && nl < m.index; nl = s.indexOf("\n", p)) { line++; p = nl + 1; }
    else {
      BREAKS_G.lastIndex = p;
      for (let b = BREAKS_G.exec(s); b && b.index < m.index; b = BREAKS_G.exec(s)) { line++; p = b.index + b[0].length; }
    }
    BREAKS_G.lastIndex = m.index;
    const b = BREAKS_G.exec(s);                    // this line's end
    if (!skipped(j, line)) out.push([line, s.slice(p, b ? b.index : s.length)]);
    j.earlyLines++;
    if (!b) break;
    line++;
    p = b.index + b[0].length;
    FAILURE.lastIndex = p;
  }
  return out;
}

function coverage(j) {
  const tail = j.chunks.slice(j.tailFrom || j.chunks.length).reduce((a, c) => a + c.size, 0);
  return { done: j.done, total: j.total, nlines: j.nlines + 1, earlyLines: j.earlyLines, tailSize: j.earlyScan ? tail : 0,
           skipped: j.skip.slice(), cut: Boolean(j.cut), encoding: j.encoding || null, ms: now() - j.t0 };
}

async function run(j) {
  await load(j);
  if (j !== job) return;
  if (j.early && j.chunks.length > 1) await early(j);
  if (j !== job) return;
  order(j);
}

/* ---- the in-order scan: piece by piece, yielding, until the pass's budget is spent or the log ends ---- */
function order(j) {
  if (j !== job) return;
  const slice = now() + 50;
  while (j.next < j.chunks.length) {
    const c = j.chunks[j.next];
    post(j, { type: "progress", phase: "order", chunk: j.next, lines: [c.line, c.line + Math.max(0, breaksIn(c.text) - 1)],
              done: j.done, total: j.total });
    if (!j.skip.some(([a]) => a === c.line)) E.feedLines(eng, j.scan, linesOf(c, j), c.line, "");
    j.done += c.size;
    j.next++;
    if (j.next < j.chunks.length && now() >= j.passEnd) return stop(j);
    if (now() >= slice) { setTimeout(() => order(j), 0); return; }      // let a new log or a stop in
  }
  const r = E.finish(eng, j.scan, j.facts);
  // lines skipped because matching them hung (the page restarts without them) leave the answer incomplete
  post(j, Object.assign({ type: "done", complete: !j.skip.length, results: r.results, first: r.firstFailureLine,
                          unexplained: unexplained(j, r.results, j.chunks.length) }, wholeLog(j, r.results), coverage(j)));
}

// What only the whole, checked log answers: the message block of a multi-cause message (its evidence is read from
// every line, as cli/msgblock.py reads the log again) and, with no diagnosis, the guided finder's order
// (finder.js logScores). The pieces are joined only when one of them applies.
function wholeLog(j, results) {
  const fnd = self.ERRBOOK_BUNDLE.finder;
  const finder = fnd && typeof ErrbookFinder !== "undefined" && !results.some((x) => x.level === "diagnosis");
  if (!results.length && !finder) return { message: null, scores: null };
  const text = j.chunks.map((c) => c.text).join("");
  return { message: E.messageBlock(eng, text, "", results, j.facts),
           scores: finder ? ErrbookFinder.logScores(E, eng, fnd, text) : null };
}

// The pass's budget is spent: what the end, the error lines and the lines checked so far show, said as partial.
function stop(j) {
  j.paused = true;
  const mine = E.finish(eng, j.scan, j.facts);
  const lists = [mine.results].concat(j.earlyScan ? [E.finish(eng, j.earlyScan, j.facts).results] : []);
  const results = merged(lists);
  post(j, Object.assign({ type: "pass", complete: false, results: results, first: mine.firstFailureLine,
                          unexplained: unexplained(j, results, j.next) }, coverage(j)));
}

// The error lines no diagnosis explains, in the first `upto` pieces (the CLI's --format markdown lists the same).
function unexplained(j, results, upto) {
  const out = [];
  for (let k = 0; k < upto && out.length < UNEXPLAINED; k++) {
    const c = j.chunks[k];
    out.push(...E.unexplainedLines(eng, c.text, results, UNEXPLAINED - out.length, c.line - 1));
  }
  return out;
}

/* Partial answers as one: an entry once, with every signature and evidence line any of them saw; a diagnosis
   anywhere wins. The second stage's guesses need the whole log's error lines, so a partial answer has signature
   matches only. */
function merged(lists) {
  const acc = new Map();
  for (const list of lists) for (const r of list) {
    if (r.confidence !== "match") continue;
    const a = acc.get(r.id);
    if (!a) { acc.set(r.id, Object.assign({}, r, { signatures: new Set(r.signatures), evidence: r.evidence.slice() })); continue; }
    if (r.level === "diagnosis" && a.level !== "diagnosis") {     // (a message's likely cause whose evidence one part saw)
      Object.assign(a, { level: r.level, standing: r.standing, note: r.note });
      delete a.message_page;
    }
    a.score = Math.max(a.score, r.score);
    r.signatures.forEach((x) => a.signatures.add(x));
    const seen = new Set(a.evidence.map((ev) => JSON.stringify(ev.lines)));
    r.evidence.forEach((ev) => { if (!seen.has(JSON.stringify(ev.lines))) a.evidence.push(ev); });
    if (r.environment) a.environment = Array.from(new Set((a.environment || []).concat(r.environment)));
  }
  return Array.from(acc.values()).map((a) => Object.assign(a, { signatures: Array.from(a.signatures).sort() }))
    .sort((x, y) => (x.standing - y.standing) || ((x.level !== "diagnosis") - (y.level !== "diagnosis"))
      || (y.score - x.score) || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
}

self.postMessage({ ready: true });
