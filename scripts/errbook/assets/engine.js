/* The browser engine of `errbook triage` (no DOM: it runs in the page, in a Web Worker and under Node.js): the same cleaning, matching and scoring as errbook/matcher.py and
 * errbook/normalize.py, over the signature bundle the site build writes (window.ERRBOOK_BUNDLE).
 * The log never leaves the page: nothing here makes a network request, and results are built with
 * textContent (log text is never parsed as HTML). tests/test_engines.py runs this file under Node.js and
 * compares its answers with the Python engine's. */
(function (root) {
  "use strict";
  const MAX_EVIDENCE = 5;

  function compile(bundle) {
    const n = bundle.normalize;
    const spec = {
      rawCap: n.raw_cap_bytes, lineCap: n.line_cap,
      ansi: new RegExp(n.ansi, "g"), spaces: new RegExp(n.spaces, "g"), prefix: new RegExp(n.prefix),
    };
    const sigs = bundle.signatures.map((s) => ({
      entry: s.entry, id: s.id, within: s.within, weight: s.weight, ic: s.ignore_case, anchors: s.anchors,
      steps: s.steps.map((p) => new RegExp(p, s.ignore_case ? "i" : "")),
    }));
    const byAnchor = new Map();
    sigs.forEach((s, i) => s.anchors.forEach((a) => {
      const k = (s.ic ? "i:" : "s:") + a;
      if (!byAnchor.has(k)) byAnchor.set(k, { a: a, ic: s.ic, idx: new Set() });
      byAnchor.get(k).idx.add(i);
    }));
    return { spec: spec, sigs: sigs, anchors: Array.from(byAnchor.values()) };
  }

  const enc = typeof TextEncoder !== "undefined" ? new TextEncoder() : null;
  const dec = typeof TextDecoder !== "undefined" ? new TextDecoder("utf-8") : null;

  function capRaw(line, cap) {
    if (line.length * 3 <= cap || !enc) return line;
    const b = enc.encode(line);
    return b.length > cap ? dec.decode(b.subarray(0, cap)) : line;
  }

  function cleanLine(raw, spec) {
    let line = capRaw(raw, spec.rawCap).replace(/\r+$/, "");
    const cr = line.lastIndexOf("\r");
    if (cr >= 0) line = line.slice(cr + 1);
    if (line.indexOf("\x1b") >= 0) line = line.replace(spec.ansi, "");
    line = line.replace(spec.spaces, " ");
    for (;;) {
      const m = spec.prefix.exec(line);
      if (!m || m[0].length === 0) break;
      line = line.slice(m[0].length);
    }
    if (line.length > spec.lineCap) {
      const cps = Array.from(line);
      if (cps.length > spec.lineCap) line = cps.slice(0, spec.lineCap).join("");
    }
    return line;
  }

  function candidates(eng, line) {
    let low = null;
    const out = new Set();
    for (const a of eng.anchors) {
      let hit;
      if (a.ic) { if (low === null) low = line.toLowerCase(); hit = low.indexOf(a.a) >= 0; }
      else hit = line.indexOf(a.a) >= 0;
      if (hit) a.idx.forEach((i) => out.add(i));
    }
    return Array.from(out).sort((x, y) => x - y);
  }

  function newScan(eng) {
    return { eng: eng, hits: new Map(), counts: new Map(),
             seq: eng.sigs.map((s) => (s.steps.length > 1 ? new Array(s.steps.length).fill(null) : null)) };
  }

  function record(scan, i, chain) {
    scan.counts.set(i, (scan.counts.get(i) || 0) + 1);
    if (!scan.hits.has(i)) scan.hits.set(i, []);
    const lst = scan.hits.get(i);
    if (lst.length < MAX_EVIDENCE) lst.push(chain);
  }

  function feed(scan, lineno, line, source) {
    const sigs = scan.eng.sigs;
    for (const i of candidates(scan.eng, line)) {
      const s = sigs[i];
      const hit = { line: lineno, text: line, source: source || "" };
      if (s.steps.length === 1) { if (s.steps[0].test(line)) record(scan, i, [hit]); continue; }
      let partial = scan.seq[i];
      for (let k = s.steps.length - 1; k >= 0; k--) {
        if (!s.steps[k].test(line)) continue;
        if (k === 0) { partial[0] = [lineno, [hit]]; continue; }
        const prev = partial[k - 1];
        if (prev === null || prev[1][prev[1].length - 1].line >= lineno || lineno - prev[0] >= s.within) continue;
        const chain = [prev[0], prev[1].concat([hit])];
        if (k === s.steps.length - 1) { record(scan, i, chain[1]); partial = scan.seq[i] = new Array(s.steps.length).fill(null); }
        else partial[k] = chain;
      }
    }
  }

  function results(scan) {
    const byEntry = new Map();
    const sigs = scan.eng.sigs;
    for (const [i, chains] of scan.hits) {
      const s = sigs[i];
      if (!byEntry.has(s.entry)) byEntry.set(s.entry, { id: s.entry, best: 0, sigs: [], hits: 0, evidence: [] });
      const e = byEntry.get(s.entry);
      e.best = Math.max(e.best, s.weight);
      e.sigs.push(s.id);
      e.hits += scan.counts.get(i);
      for (const chain of chains) {
        e.evidence.push({ signature: s.id, lines: chain.map((h) => (h.source ? { line: h.line, text: h.text, source: h.source } : { line: h.line, text: h.text })) });
      }
    }
    const out = [];
    for (const e of byEntry.values()) {
      const score = e.best + 10 * (e.sigs.length - 1) + Math.min(e.hits - 1, 9);
      e.evidence.sort((a, b) => {
        const sa = a.lines[0].source || "", sb = b.lines[0].source || "";
        return sa < sb ? -1 : sa > sb ? 1 : a.lines[0].line - b.lines[0].line;
      });
      out.push({ id: e.id, score: score, signatures: e.sigs.slice().sort(), hits: e.hits, evidence: e.evidence });
    }
    out.sort((a, b) => (b.score - a.score) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return out;
  }

  function matchText(eng, text, source) {
    const scan = newScan(eng);
    const lines = text.split("\n");
    for (let n = 0; n < lines.length; n++) feed(scan, n + 1, cleanLine(lines[n], eng.spec), source);
    return results(scan);
  }

  const api = { compile: compile, cleanLine: cleanLine, matchText: matchText };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else root.ErrbookTriage = api;
})(typeof self !== "undefined" ? self : globalThis);
