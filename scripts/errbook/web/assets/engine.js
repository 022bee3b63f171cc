/* The browser engine of `errbook triage`: the same cleaning (triage/normalize.py), first stage (triage/matcher.py),
 * environment evidence (triage/environment.py, kb/versions.py), second stage (triage/retrieval.py), ranking
 * (triage/ranking.py) and machine checks (machine/checks.py) as the CLI, over the bundle the site build writes
 * (web/bundle.py: each ported module's JS_SPEC and the entries' data). No DOM: it runs in the page, in a Web Worker
 * and under Node.js.
 * The log never leaves the page: nothing here makes a network request. tests/test_engines.py runs this file
 * under Node.js and compares every answer with the Python engine's. */
(function (root) {
  "use strict";
  const MAX_EVIDENCE = 5;
  const SUB_SPACE = 65536;

  // ---- reading a log file's bytes (triage/textenc.py: the same rule) --------------------------------------------
  const SNIFF_BYTES = 4096;
  const BOMS = [[[0xff, 0xfe, 0, 0], "utf-32-le"], [[0, 0, 0xfe, 0xff], "utf-32-be"], [[0xef, 0xbb, 0xbf], "utf-8-sig"],
    [[0xff, 0xfe], "utf-16-le"], [[0xfe, 0xff], "utf-16-be"]];

  /** [encoding, BOM length] of a log from its first bytes (a Uint8Array): a BOM, else UTF-32/UTF-16 when ASCII
   * text's NULs show (the high bytes of at least half the units NUL, the low byte of at most a tenth), else UTF-8.
   * Windows PowerShell 5.1's `>` writes UTF-16 LE with a BOM. */
  function logEncoding(bytes) {
    for (const [bom, name] of BOMS) {
      if (bytes.length >= bom.length && bom.every((b, i) => bytes[i] === b)) return [name, bom.length];
    }
    const head = bytes.subarray(0, SNIFF_BYTES);
    for (const [width, le, be] of [[4, "utf-32-le", "utf-32-be"], [2, "utf-16-le", "utf-16-be"]]) {
      const units = Math.floor(head.length / width);
      if (units < 2) continue;
      const nuls = new Array(width).fill(0);
      for (let u = 0; u < units; u++) for (let i = 0; i < width; i++) if (head[u * width + i] === 0) nuls[i]++;
      const mostly = (from, to) => { for (let i = from; i < to; i++) if (nuls[i] * 2 < units) return false; return true; };
      const rarely = (i) => nuls[i] * 10 <= units;
      if (mostly(1, width) && rarely(0)) return [le, 0];
      if (mostly(0, width - 1) && rarely(width - 1)) return [be, 0];
    }
    return ["utf-8", 0];
  }

  /** The text of a log file's bytes (Uint8Array) and its encoding: {text, encoding}. Invalid units become U+FFFD,
   * as Python's "replace" gives (TextDecoder has no UTF-32: decoded here). */
  function decodeLog(bytes) {
    const [name, bom] = logEncoding(bytes);
    const body = bytes.subarray(bom);
    if (name === "utf-32-le" || name === "utf-32-be") {
      const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
      const n = Math.floor(body.length / 4), parts = [];
      let chunk = [];
      for (let u = 0; u < n; u++) {
        const cp = view.getUint32(u * 4, name === "utf-32-le");
        chunk.push(cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ? 0xfffd : cp);
        if (chunk.length === 8192) { parts.push(String.fromCodePoint(...chunk)); chunk = []; }
      }
      if (body.length % 4) chunk.push(0xfffd);                 // a cut last unit
      parts.push(String.fromCodePoint(...chunk));
      return { text: parts.join(""), encoding: name };
    }
    const label = name === "utf-16-le" ? "utf-16le" : name === "utf-16-be" ? "utf-16be" : "utf-8";
    return { text: new TextDecoder(label, { ignoreBOM: name !== "utf-8" }).decode(body), encoding: name };
  }

  // ---- cleaning (triage/normalize.py) ---------------------------------------------------------------------------
  function compileSpec(n) {
    return {
      rawCap: n.raw_cap_bytes, lineCap: n.line_cap, overlap: n.window_overlap,
      ansi: new RegExp(n.ansi, "g"), jsonLine: new RegExp(n.json_line), jsonShape: new RegExp(n.json_shape),
      winSingle: new RegExp(n.winpath_single), jsonEsc: new RegExp(n.json_esc, "g"), jsonMap: n.json_map,
      breaks: new RegExp(n.breaks), spaces: new RegExp(n.spaces, "g"), squote: new RegExp(n.squote, "g"),
      dquote: new RegExp(n.dquote, "g"), kelvin: new RegExp(n.kelvin, "g"), longS: new RegExp(n.long_s, "g"),
      winpath: new RegExp(n.winpath), prefix: new RegExp(n.prefix),
      mask: n.mask.map((x) => [new RegExp(x[0], "g"), x[1]]),
    };
  }

  const enc = typeof TextEncoder !== "undefined" ? new TextEncoder() : null;
  const dec = typeof TextDecoder !== "undefined" ? new TextDecoder("utf-8") : null;
  const ASTRAL = /[\uD800-\uDBFF][\uDC00-\uDFFF]/g;
  const NON_ASCII = /[^\x00-\x7f]/;

  function capRaw(line, cap) {
    if (line.length * 3 <= cap || !enc) return line;
    const b = enc.encode(line);
    return b.length > cap ? dec.decode(b.subarray(0, cap)) : line;
  }

  function stripPrefixes(s, spec) {
    const m = spec.prefix.exec(s);
    return m ? s.slice(m[0].length) : s;
  }

  function windows(s, spec) {
    if (s.length <= spec.lineCap) return [s];
    const out = [];
    const step = spec.lineCap - spec.overlap;
    for (let i = 0; i < s.length - spec.overlap; i += step) out.push(s.slice(i, i + spec.lineCap));
    return out;
  }

  function clean(raw, spec) {
    let line = raw;
    if (line.indexOf("\x1b") >= 0) line = line.replace(spec.ansi, "");
    if (NON_ASCII.test(line)) {
      line = line.replace(ASTRAL, "\uFFFD").replace(spec.spaces, " ").replace(spec.squote, "'").replace(spec.dquote, '"')
        .replace(spec.kelvin, "K").replace(spec.longS, "s");
    }
    let parts;
    if (spec.jsonLine.test(line) && spec.jsonShape.test(line) && !spec.winSingle.test(line)) {
      parts = line.replace(spec.jsonEsc, (m) => spec.jsonMap[m]).split(spec.breaks)
        .map((p) => (p.indexOf("\x1b") >= 0 ? p.replace(spec.ansi, "") : p));
    } else parts = [line];
    const out = [];
    for (let s of parts) {
      if (s.indexOf("\\") >= 0 && spec.winpath.test(s)) s = s.split("\\").join("/");
      s = stripPrefixes(s, spec);
      if (s) for (const w of windows(s, spec)) out.push(w);
    }
    return out;
  }

  function mask(s, spec, numbers) {
    spec.mask.forEach((m, k) => { if (numbers || k !== 2) s = s.replace(m[0], m[1]); });
    return s.trim();
  }

  // ---- versions (kb/versions.py) --------------------------------------------------------------------------------
  // kb/versions.py's MAX_DIGITS and RANGE_PATTERN: a longer number is no version, and a range that does not
  // match cannot be read (unknown here; `errbook validate` names it).
  const MAX_DIGITS = 15;
  const RANGE = /^(any|(==|!=|>=|<=|~=|=|>|<) *[0-9]{1,15}(?:\.[0-9]{1,15})*( *, *(==|!=|>=|<=|~=|=|>|<) *[0-9]{1,15}(?:\.[0-9]{1,15})*)*)$/;
  const CLAUSE = /^(==|!=|>=|<=|~=|=|>|<) *([0-9]{1,15}(?:\.[0-9]{1,15})*)$/;
  function parseVersion(v) {
    const m = /^[0-9]+(?:\.[0-9]+)*/.exec(String(v).trim().replace(/^v+/, ""));
    if (!m) return null;
    const parts = m[0].split(".");
    return parts.every((x) => x.length <= MAX_DIGITS) ? parts.map(Number) : null;
  }
  function cmp(a, b) {
    const n = Math.max(a.length, b.length);
    for (let i = 0; i < n; i++) { const x = a[i] || 0, y = b[i] || 0; if (x !== y) return x < y ? -1 : 1; }
    return 0;
  }
  function prefixEq(v, b) { for (let i = 0; i < b.length; i++) if (v[i] !== b[i]) return false; return v.length >= b.length; }
  function inRange(v, rng) {
    if (typeof rng !== "string" || rng.length > 200 || !RANGE.test(rng)) return null;
    const ver = parseVersion(v);
    if (ver === null) return null;
    if (rng === "any") return true;
    for (const clause of rng.split(",")) {
      const m = CLAUSE.exec(clause.replace(/^ +| +$/g, ""));
      const op = m[1], bound = m[2].split(".").map(Number);
      const c = cmp(ver, bound);
      let ok;
      if (op === "==" || op === "=") ok = prefixEq(ver, bound);
      else if (op === "!=") ok = !prefixEq(ver, bound);
      else if (op === ">=") ok = c >= 0;
      else if (op === ">") ok = c > 0;
      else if (op === "<=") ok = c <= 0 || prefixEq(ver, bound);
      else if (op === "<") ok = c < 0;
      else { const k = Math.max(1, bound.length - 1); ok = c >= 0 && prefixEq(ver.slice(0, k), bound.slice(0, k)); }
      if (!ok) return false;
    }
    return true;
  }

  // ---- compile the bundle ---------------------------------------------------------------------------------------
  function escapeRe(s) { return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); }

  function compile(bundle) {
    const spec = compileSpec(bundle.normalize);
    const pats = bundle.patterns.map((p) => ({ re: new RegExp(p[0], p[1] ? "i" : ""), ic: p[1], anchors: p[2] }));
    const always = [];
    const anchorSet = new Map();
    pats.forEach((p, i) => {
      if (!p.anchors.length) { always.push(i); return; }
      for (const a of p.anchors) {
        const k = (p.ic ? "i:" : "s:") + a;
        if (!anchorSet.has(k)) anchorSet.set(k, { a: a, ic: p.ic, idx: [] });
        anchorSet.get(k).idx.push(i);
      }
    });
    const anchors = Array.from(anchorSet.values());
    // One case-insensitive alternation of every anchor rejects most lines at once.
    const any = anchors.length ? new RegExp(anchors.map((x) => escapeRe(x.a)).join("|"), "i") : null;
    const vetoes = new Map(Object.entries(bundle.vetoes || {}).map((kv) => [kv[0], new Set(kv[1])]));
    const r = bundle.retrieval || null;
    let index = null;
    if (r) {
      const post = new Map(Object.entries(r.index.post));
      index = { ids: r.index.ids, idf: r.index.idf, norm: r.index.norm, post: post, k1: r.index.k1 };
    }
    const lf = bundle.logfacts || {};
    return {
      spec: spec, pats: pats, always: always, anchors: anchors, any: any,
      roles: bundle.roles, sigs: bundle.signatures,
      sigRe: bundle.signatures.map((s) => new RegExp(s.steps[0], s.ignore_case ? "i" : "")), cosmetic: new Set(bundle.cosmetic || []), vetoes: vetoes,
      noteCaps: bundle.note_caps || {}, index: index, cal: r ? r.calibration : null, retrieval: r,
      profiles: bundle.profiles || {}, checks: bundle.checks || {}, checkBonus: bundle.check_bonus || 0,
      messages: compileMessages(bundle.messages || []), maxLines: (bundle.message_rules || {}).max_lines || 1,
      multicause: multicauseSpec(bundle), observing: observing(bundle.signatures),
      generic: generic(bundle.signatures, multicauseSpec(bundle).genericPriority), pageonly: pageonlySpec(bundle),
      messageId: (bundle.message_rules || {}).message_id,
      facts: {
        gfx: lf.gfx ? new RegExp(lf.gfx, "g") : null, rocm: lf.rocm ? new RegExp(lf.rocm, "i") : null,
        torch: lf.torch ? new RegExp(lf.torch, "i") : null, env: lf.env ? new RegExp(lf.env, "g") : null,
        plus: lf.plus, minus: lf.minus, low: lf.low, high: lf.high,
      },
    };
  }

  function matchIds(eng, sub) {
    const cand = new Set(eng.always);
    if (eng.any && eng.any.test(sub)) {
      let low = null;
      for (const a of eng.anchors) {
        let hit;
        if (a.ic) { if (low === null) low = sub.toLowerCase(); hit = low.indexOf(a.a) >= 0; }
        else hit = sub.indexOf(a.a) >= 0;
        if (hit) for (const i of a.idx) cand.add(i);
      }
    }
    const out = [];
    for (const i of cand) if (eng.pats[i].re.test(sub)) out.push(i);
    return out.sort((x, y) => x - y);
  }

  // ---- the scan (triage/matcher.py) -----------------------------------------------------------------------------
  function newScan(eng) {
    const partial = new Map();
    eng.sigs.forEach((s, i) => { if (s.steps.length > 1) partial.set(i, new Array(s.steps.length).fill(null)); });
    return { eng: eng, single: new Map(), partial: partial, seqHits: new Map(), notes: {} };
  }

  function hitOf(line, text, source) { return { line: line, text: text, source: source || "" }; }

  function seqStep(scan, pos, i, k, hit) {
    const s = scan.eng.sigs[i];
    const partial = scan.partial.get(i);
    if (k === 0) { partial[0] = [pos, [hit]]; return; }
    const prev = partial[k - 1];
    if (prev === null || prev[0] >= pos || hit.line - prev[1][0].line >= s.within) return;
    const chain = [pos, prev[1].concat([hit])];
    if (k === s.steps.length - 1) {
      if (!scan.seqHits.has(i)) scan.seqHits.set(i, [0, []]);
      const st = scan.seqHits.get(i);
      st[0] += 1;
      if (st[1].length < MAX_EVIDENCE) st[1].push(chain[1]);
      scan.partial.set(i, new Array(s.steps.length).fill(null));
    } else partial[k] = chain;
  }

  function recordSingle(scan, i, chain, outranked) {
    if (!scan.single.has(i)) scan.single.set(i, [0, 0, [], []]);
    const st = scan.single.get(i);
    st[outranked ? 1 : 0] += 1;
    const lst = st[outranked ? 3 : 2];
    if (lst.length < MAX_EVIDENCE) lst.push(chain);
  }

  function feed(scan, lineno, subs, ids, source) {
    const eng = scan.eng;
    if (!ids.some((x) => x.length)) return;
    const singles = new Map();
    for (let j = 0; j < subs.length; j++) {
      const pids = ids[j];
      if (!pids.length) continue;
      const veto = eng.vetoes.size ? (eng.vetoes.get(mask(subs[j], eng.spec, false)) || null) : null;
      for (const pid of pids) {
        const role = eng.roles[pid];
        if (role[0] === "sig") {
          const i = role[1], k = role[2];
          if (veto && veto.has(i)) continue;
          if (eng.sigs[i].steps.length === 1) { if (!singles.has(i)) singles.set(i, j); }
          else seqStep(scan, lineno * SUB_SPACE + j, i, k, hitOf(lineno, subs[j], source));
        } else {
          const name = role[1];
          if (!scan.notes[name]) scan.notes[name] = [];
          if (scan.notes[name].length < eng.noteCaps[name]) scan.notes[name].push(subs[j]);
        }
      }
    }
    let outranked = null;
    const ents = new Set();
    for (const i of singles.keys()) ents.add(eng.sigs[i].entry);
    if (ents.size > 1) outranked = outrankedOf(eng, subs, singles);
    for (const [i, j] of singles) recordSingle(scan, i, [hitOf(lineno, subs[j], source)], outranked !== null && outranked.has(i));
  }

  // Single-line signatures whose match lies strictly inside another entry's match on the same sub-line.
  function outrankedOf(eng, subs, singles) {
    const bySub = new Map();
    for (const [i, j] of singles) { if (!bySub.has(j)) bySub.set(j, []); bySub.get(j).push(i); }
    const out = new Set();
    for (const [j, lst] of bySub) {
      if (new Set(lst.map((i) => eng.sigs[i].entry)).size < 2) continue;
      const spans = new Map();
      for (const i of lst) { const m = eng.sigRe[i].exec(subs[j]); spans.set(i, [m.index, m.index + m[0].length]); }
      for (const a of lst) for (const b of lst) {
        const [sa, ea] = spans.get(a), [sb, eb] = spans.get(b);
        if (eng.sigs[a].entry !== eng.sigs[b].entry && sa <= sb && eb <= ea && ea - sa > eb - sb) out.add(b);
      }
    }
    return out;
  }

  // Physical lines numbered from `first`: a big log is fed in consecutive pieces into one scan, which then gives
  // exactly the answer of one pass over the whole text (sequences, evidence and notes carry over).
  function feedLines(eng, scan, lines, first, source) {
    for (let n = 0; n < lines.length; n++) {
      const subs = clean(capRaw(lines[n], eng.spec.rawCap), eng.spec);
      if (subs.length) feed(scan, first + n, subs, subs.map((s) => matchIds(eng, s)), source);
    }
  }

  function feedText(eng, scan, text, source) { feedLines(eng, scan, text.split(eng.spec.breaks), 1, source); }

  function cmpStr(a, b) { return a < b ? -1 : a > b ? 1 : 0; }

  function results(scan) {
    const eng = scan.eng;
    const byEntry = new Map();
    const slot = (id) => {
      if (!byEntry.has(id)) byEntry.set(id, { id: id, stand: { best: 0, sigs: new Set(), hits: 0, ev: [], diag: false },
                                              out: { best: 0, sigs: new Set(), hits: 0, ev: [], diag: false } });
      return byEntry.get(id);
    };
    const add = (part, s, count, chains) => {
      part.diag = part.diag || !s.observation;
      part.best = Math.max(part.best, s.weight);
      part.sigs.add(s.id);
      part.hits += count;
      for (const c of chains) part.ev.push([s.id, c]);
    };
    for (const [i, st] of scan.single) {
      const s = eng.sigs[i];
      const e = slot(s.entry);
      if (st[0]) add(e.stand, s, st[0], st[2]);
      if (st[1]) add(e.out, s, st[1], st[3]);
    }
    for (const [i, st] of scan.seqHits) add(slot(eng.sigs[i].entry).stand, eng.sigs[i], st[0], st[1]);
    const out = [];
    for (const [id, e] of byEntry) {
      const part = e.stand.hits ? e.stand : e.out;
      // answer levels (triage/matcher.py): a diagnosis names a problem; an observation only shows a condition
      const level = part.diag && !eng.cosmetic.has(id) ? "diagnosis" : "observation";
      let standing = 0, why = "";
      if (!e.stand.hits) { standing = 2; why = "outranked: a more specific signature of another entry matched the same line"; }
      else if (eng.cosmetic.has(id)) { standing = 1; why = "cosmetic: a harmless message, ranked below real causes"; }
      else if (level === "observation") {
        standing = 1; why = "observation: a condition this entry describes is present; no line shows a problem";
      }
      const score = part.best + 10 * (part.sigs.size - 1) + Math.min(part.hits - 1, 9);
      const evs = e.stand.ev.concat(part === e.out ? e.out.ev : []);
      evs.sort((a, b) => cmpStr(a[1][0].source, b[1][0].source) || (a[1][0].line - b[1][0].line) || cmpStr(a[0], b[0]));
      const evidence = [], seen = new Set();
      for (const [sigId, chain] of evs) {
        const key = JSON.stringify(chain.map((h) => [h.source, h.line, h.text]));
        if (seen.has(key)) continue;
        seen.add(key);
        evidence.push({ signature: sigId, lines: chain.map((h) => (h.source ? { line: h.line, text: h.text, source: h.source }
                                                                         : { line: h.line, text: h.text })) });
      }
      const sigs = Array.from(new Set([...e.stand.sigs, ...e.out.sigs])).sort(cmpStr);
      const r = { id: id, score: score, standing: standing, confidence: "match", level: level, signatures: sigs,
                  hits: e.stand.hits + e.out.hits, evidence: evidence };
      if (why) r.note = why;
      out.push(r);
    }
    out.sort((a, b) => (a.standing - b.standing) || (b.score - a.score) || cmpStr(a.id, b.id));
    return out;
  }

  // ---- environment evidence (triage/environment.py) -------------------------------------------------------------
  function uniqSorted(xs) { return Array.from(new Set(xs)).sort(cmpStr); }

  function factsFromNotes(eng, notes) {
    const f = eng.facts, facts = {};
    if (f.gfx) {
      const g = [];
      for (const line of notes.gfx || []) for (const m of line.matchAll(f.gfx)) g.push(m[0]);
      if (g.length) facts.gfx = uniqSorted(g);
    }
    for (const key of ["rocm", "torch"]) {
      if (!f[key]) continue;
      for (const line of notes[key] || []) { const m = f[key].exec(line); if (m) { facts[key] = m[1]; break; } }
    }
    if (f.env) {
      const e = [];
      for (const line of notes.env || []) for (const m of line.matchAll(f.env)) e.push(m[1]);
      if (e.length) facts.env = uniqSorted(e);
    }
    return facts;
  }

  function archOk(g, archs) {
    return archs.some((a) => g === a || (a.endsWith("-generic") && g.startsWith(a.slice(0, -"-generic".length))));
  }

  function adjust(eng, prof, facts) {
    let plus = 0, minus = 0;
    const why = [];
    const machine = facts.from_machine || [];  // facts a machine-facts file filled in, said as such
    const names = machine.indexOf("gfx") >= 0 ? "this machine has" : "the log names";
    if (prof.archs && facts.gfx) {
      const hit = facts.gfx.filter((g) => archOk(g, prof.archs));
      if (hit.length) { plus++; why.push(`${names} ${hit[0]}, which this entry's trigger lists`); }
      else { minus++; why.push(`${names} ${facts.gfx.slice(0, 3).join(", ")}; this entry is about ${prof.archs.slice(0, 4).join(", ")}`); }
    }
    for (const [key, label] of [["rocm", "ROCm"], ["torch", "PyTorch"]]) {
      if (prof[key] && facts[key]) {
        const inside = prof[key].map((r) => inRange(facts[key], r));
        if (inside.some((x) => x === true)) { plus++; why.push(`${label} ${facts[key]} is in the range this entry applies to`); }
        else if (inside.every((x) => x === false)) {
          minus++; why.push(`${label} ${facts[key]} is outside the range this entry applies to (${prof[key].join("; ")})`);
        }
      }
    }
    if (prof.env && facts.env) {
      const both = prof.env.filter((v) => facts.env.indexOf(v) >= 0);
      if (both.length) {
        plus++;
        const sets = machine.indexOf("env") >= 0 ? `this machine has ${both[0]} set` : `the log sets ${both[0]}`;
        why.push(`${sets}, which this entry's trigger names`);
      }
    }
    const f = eng.facts;
    return [Math.max(f.low, Math.min(f.high, f.plus * plus - f.minus * minus)), why];
  }

  // ---- a machine's facts (machine/checks.py): `errbook doctor --collect` output, read in the page ---------------
  function same(a, b) {
    if (typeof a === "boolean" || typeof b === "boolean") return a === b;
    if (typeof a === "number" && typeof b === "number") return a === b;
    return typeof a === typeof b && a === b;
  }
  const rxCache = new Map();
  function rx(p) { if (!rxCache.has(p)) rxCache.set(p, new RegExp(p)); return rxCache.get(p); }
  function positive(op, arg, v) {
    if (v === null) return false;
    if (Array.isArray(v)) {
      if (op === "in") return v.some((x) => arg.some((a) => same(x, a)));
      if (op === "matches") return v.some((x) => typeof x === "string" && rx(arg).test(x));
      if (op === "contains") return v.some((x) => same(x, arg));
      if (op === "count_gte") return v.length >= arg;
      if (op === "count_lte") return v.length <= arg;
      if (op === "version") return v.some((x) => typeof x === "string" && inRange(x, arg) === true);
      return false;
    }
    if (op === "equals") return same(v, arg);
    if (op === "in") return arg.some((a) => same(v, a));
    if (op === "matches") return typeof v === "string" && rx(arg).test(v);
    if (op === "contains") return typeof v === "string" && typeof arg === "string" && v.indexOf(arg) >= 0;
    if (op === "version") return typeof v === "string" ? inRange(v, arg) : false;
    if (op === "gte" || op === "lte") {
      if (typeof v !== "number") return false;
      return op === "gte" ? v >= arg : v <= arg;
    }
    return false;
  }
  const OPERATORS = ["present", "equals", "not_equals", "in", "not_in", "matches", "not_matches", "version",
                     "contains", "not_contains", "count_gte", "count_lte", "gte", "lte"];
  const NEGATIVE = { not_equals: "equals", not_in: "in", not_matches: "matches", not_contains: "contains" };
  function holds(cond, values) {
    const ops = Object.keys(cond).filter((k) => OPERATORS.indexOf(k) >= 0);
    if (ops.length !== 1 || !(cond.fact in values)) return null;
    const op = ops[0], v = values[cond.fact], arg = cond[op];
    if (op === "present") return (v !== null) === Boolean(arg);
    if (op in NEGATIVE) { const r = positive(NEGATIVE[op], arg, v); return r === null ? null : !r; }
    return positive(op, arg, v);
  }
  function checkHolds(check, values) {
    const states = (check.when || []).map((c) => holds(c, values));
    if (states.some((x) => x === false)) return false;
    if (states.some((x) => x === null)) return null;
    return true;
  }

  // One fact's value against its declared type and the limits (machine/facts/fileformat.py check_value); null when
  // it is fine.
  function factProblem(spec, typ, v) {
    if (v === null) return null;
    const chars = (x) => Array.from(x).length;   // code points, as Python's len()
    if (typ === "bool") return typeof v === "boolean" ? null : "must be true, false or null";
    if (typ === "int") return Number.isInteger(v) && Math.abs(v) < spec.max_int ? null : "must be an integer or null";
    if (typ === "str" || typ === "version") {
      if (typeof v !== "string") return "must be a string or null";
      if (chars(v) > spec.max_str) return `is longer than ${spec.max_str} characters`;
      const m = typ === "version" ? /^[0-9]+(?:\.[0-9]+)*/.exec(v.trim().replace(/^v+/, "")) : null;
      if (m && m[0].split(".").some((x) => x.length > spec.max_digits))
        return `is not a version: a number in it has more than ${spec.max_digits} digits`;
      return null;
    }
    if (typ === "list") {
      if (!Array.isArray(v)) return "must be a list of strings or null";
      if (v.length > spec.max_list) return `has more than ${spec.max_list} items`;
      if (!v.every((x) => typeof x === "string" && chars(x) <= spec.max_str)) return "must hold only strings";
      return null;
    }
    return "has an unknown type";
  }

  /** A facts document (errbook doctor --collect) -> {values, error}, accepting exactly what the CLI's facts.parse
   *  accepts: the format, the limits and the fact types come from the bundle (bundle.facts_format). Unknown facts
   *  are left out. Never throws. */
  function readFacts(text, bundle) {
    const spec = bundle && bundle.facts_format;
    const bad = (msg) => ({ values: null, error: msg });
    if (!spec) return bad("this page cannot read facts files (its bundle has no facts format)");
    if (typeof text !== "string") {   // the file's bytes (an ArrayBuffer or Uint8Array): UTF-8, as the CLI reads it
      const bytes = text instanceof Uint8Array ? text : new Uint8Array(text);
      if (bytes.length > spec.max_file_bytes) return bad(`larger than ${spec.max_file_bytes >> 20} MiB; not a facts file`);
      try { text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes); }
      catch (e) { return bad("not UTF-8"); }
    }
    if (new TextEncoder().encode(text).length > spec.max_file_bytes)
      return bad(`larger than ${spec.max_file_bytes >> 20} MiB; not a facts file`);
    let doc;
    try { doc = JSON.parse(text); } catch (e) { return bad("not valid JSON: " + e.message); }
    if (!doc || typeof doc !== "object" || Array.isArray(doc) || doc.format !== spec.format)
      return bad(`not an errbook facts file (expected an object with "format": "${spec.format}"; make one with errbook doctor --collect)`);
    if (doc.version !== spec.version) return bad(`facts format version ${JSON.stringify(doc.version)} is not supported`);
    if (!doc.facts || typeof doc.facts !== "object" || Array.isArray(doc.facts))
      return bad('"facts" must be an object of fact name -> {"value", "source"}');
    const values = {};
    for (const [k, v] of Object.entries(doc.facts)) {
      if (!Object.prototype.hasOwnProperty.call(spec.types, k)) continue;
      if (!v || typeof v !== "object" || Array.isArray(v) || !("value" in v)) return bad(`fact ${k}: expected an object with "value"`);
      const why = factProblem(spec, spec.types[k], v.value);
      if (why) return bad(`fact ${k} (${spec.types[k]}) ${why}`);
      values[k] = v.value;
    }
    const sec = doc.seconds;
    if (sec !== undefined && sec !== null && !(typeof sec === "number" && sec >= 0 && sec <= spec.max_seconds))
      return bad(`"seconds" must be a number from 0 to ${spec.max_seconds}`);
    return { values: values, error: null };
  }

  function parseVersionTriple(v) { const p = parseVersion(v); return p ? p.slice(0, 3).join(".") : null; }

  /** Doctor facts in the shape of the log's own facts, and the bonus of entries whose checks hold there. */
  function machineOf(eng, values) {
    const facts = {};
    // Python's `a or b`: an empty list or string falls through to the next fact
    const truthy = (x) => (Array.isArray(x) ? x.length > 0 : Boolean(x));
    const first = (...xs) => { for (const x of xs) if (truthy(x)) return x; return xs[xs.length - 1]; };
    const gfx = first(values["gpu.runtime_gfx"], values["gpu.gfx"], values["torch.gfx"]);
    if (Array.isArray(gfx) && gfx.length) facts.gfx = uniqSorted(gfx);
    const rocm = first(values["rocm.default_version"], values["torch.hip"]);
    if (typeof rocm === "string" && parseVersion(rocm)) facts.rocm = parseVersionTriple(rocm);
    const tv = values["torch.version"];
    if (typeof tv === "string" && parseVersion(tv)) facts.torch = parseVersionTriple(tv);
    const env = Object.keys(values).filter((n) => n.startsWith("env.") && values[n] !== null).map((n) => n.slice(4));
    if (env.length) facts.env = uniqSorted(env);
    const bonus = {};
    for (const [id, checks] of Object.entries(eng.checks)) {
      const says = checks.filter((c) => checkHolds(c, values) === true).map((c) => "this machine: " + c.says);
      if (says.length) bonus[id] = [eng.checkBonus, says];
    }
    return { facts: facts, bonus: bonus };
  }

  // ---- second stage (triage/retrieval.py) -----------------------------------------------------------------------
  const UPPER = /[A-Z]/g;
  function lower(s) { return s.replace(UPPER, (c) => String.fromCharCode(c.charCodeAt(0) + 32)); }

  function tokens(eng, text) {
    const r = eng.retrieval;
    const re = r.tokenizer;
    text = text.replace(new RegExp(re.dirs, "g"), " ").replace(new RegExp(re.hex, "g"), " ");
    const stop = r.stop;
    const out = [];
    const ok = (w) => w.length >= 2 && !/^[0-9]+$/.test(w) && !stop.has(w);
    for (const m of text.matchAll(new RegExp(re.word, "g"))) {
      const w = m[0], lw = lower(w);
      if (ok(lw)) out.push(lw);
      const parts = Array.from(w.split("_").join(" ").matchAll(new RegExp(re.parts, "g")), (x) => x[0]);
      if (parts.length > 1) for (const p of parts) { const lp = lower(p); if (ok(lp)) out.push(lp); }
    }
    for (const m of text.matchAll(new RegExp(re.cjk, "g"))) {
      const run = m[0];
      if (run.length === 1) out.push(run);
      for (let i = 0; i < run.length - 1; i++) out.push(run.slice(i, i + 2));
    }
    return out;
  }

  function scores(eng, toks) {
    const idx = eng.index;
    const acc = new Array(idx.ids.length).fill(0);
    const distinct = new Array(idx.ids.length).fill(0);
    const k1 = idx.k1;
    let qnorm = 0;
    for (const t of uniqSorted(toks)) {
      const p = idx.post.get(t);
      if (!p) continue;
      const w = idx.idf[t];
      qnorm += w;
      const clean = !p.some((x) => idx.ids[x[0]].startsWith("benign:"));
      for (const [k, tf] of p) { acc[k] += w * (tf * (k1 + 1)) / (tf + idx.norm[k]); if (clean) distinct[k]++; }
    }
    const ranked = [];
    acc.forEach((s, k) => { if (s > 0) ranked.push([s, idx.ids[k]]); });
    ranked.sort((a, b) => (b[0] - a[0]) || cmpStr(a[1], b[1]));
    const dist = {};
    distinct.forEach((d, k) => { if (d) dist[idx.ids[k]] = d; });
    return [ranked, qnorm, dist];
  }

  /** Each entry's BM25 score for a whole log (finder.log_scores): the guided finder's order. Benign documents
   * are left out. */
  function finderScores(eng, text, queryChars) {
    const out = {};
    for (const [s, id] of scores(eng, tokens(eng, text.slice(0, queryChars)))[0]) if (!id.startsWith("benign:")) out[id] = s;
    return out;
  }

  function troubleRx(eng) {
    const t = eng.retrieval.trouble;
    if (!t.rx) {
      const set = "[" + t.punct.replace(/[\\\]^-]/g, "\\$&") + "]+";      // Python's str.strip(PROSE_PUNCT)
      t.rx = { failure: new RegExp(t.failure, "i"), person: new RegExp(t.person, "i"), info: new RegExp(t.logger_info),
               normal: new RegExp(t.normal), negated: new RegExp(t.negated, "gi"), identifier: new RegExp(t.identifier, "g"),
               addressed: new RegExp(t.addressed, "i"),
               any: new RegExp(t.logger_any), word: new RegExp(t.plain_word), edge: new RegExp("^" + set + "|" + set + "$", "g") };
    }
    return t;
  }

  // retrieval._failure: a zero count of failures is not a failure, nor a snake_case name, and known normal output
  // reports nothing
  function isFailure(t, ln) {
    return t.rx.failure.test(ln.replace(t.rx.negated, " ").replace(t.rx.identifier, " ")) && !t.rx.normal.test(ln);
  }

  // retrieval._person: a person wrote it, not a tool addressing its reader (a y/n prompt, "if you have ...")
  function isPerson(t, ln) { return t.rx.person.test(ln) && !t.rx.addressed.test(ln); }

  // retrieval.reports_trouble: a query line reports a failure, or a person wrote it
  function reportsTrouble(eng, lines) {
    const t = troubleRx(eng);
    const prose = (ln) => {
      if (t.rx.any.test(ln) || t.rx.addressed.test(ln)) return false;
      const words = ln.split(/[ \t]+/).filter((w) => w);
      if (words.length < t.min_words) return false;
      return words.filter((w) => t.rx.word.test(w.replace(t.rx.edge, ""))).length / words.length >= t.share;
    };
    return lines.some((ln) => (!t.rx.info.test(ln) && (isFailure(t, ln) || isPerson(t, ln))) || prose(ln));
  }

  // ranking.beyond_observations: the query lines no observation of this log accounts for (a line an observation
  // signature, or a cosmetic entry's, matched shows a condition, not trouble)
  function beyondObservations(eng, res, lines) {
    const ids = new Set(res.filter((r) => r.level === "observation").map((r) => r.id));
    if (!ids.size) return lines;
    const rx = eng.sigs.map((s, i) => [s, eng.sigRe[i]])
      .filter(([s]) => ids.has(s.entry) && s.steps.length === 1 && (s.observation || eng.cosmetic.has(s.entry)))
      .map(([, re]) => re);
    return lines.filter((ln) => !rx.some((re) => re.test(ln)));
  }

  // retrieval.first_failure_line: the first query line that reports a failure (not a logger's INFO line), capped
  // in code points as Python slices
  function firstFailureLine(eng, lines) {
    const t = troubleRx(eng);
    const line = lines.find((ln) => !t.rx.info.test(ln) && isFailure(t, ln));
    return line === undefined ? null : Array.from(line).slice(0, eng.retrieval.first_line_cap).join("");
  }

  // cli/formats/loglines.py unexplained(): the log's failure lines (each physical line's first cleaned sub-line that
  // reports a failure, by first_failure_line's test) that no diagnosis (nor a multi-cause message's likely cause) has
  // as evidence, in order, at most `limit`
  function unexplainedLines(eng, text, results, limit, base) {
    base = base || 0;                              // lines before this text (a piece of a big log)
    const t = troubleRx(eng);
    const explained = new Set();
    for (const r of results) {
      if (r.level !== "diagnosis" && !r.message_page) continue;
      for (const ev of r.evidence || []) for (const l of ev.lines || []) explained.add(`${l.source || ""}\u0000${l.line}`);
    }
    const out = [];
    const lines = String(text).split(eng.spec.breaks);
    for (let i = 0; i < lines.length && out.length < limit; i++) {
      if (!t.rx.failure.test(lines[i]) || explained.has(`\u0000${base + i + 1}`)) continue;
      const sub = clean(capRaw(lines[i], eng.spec.rawCap), eng.spec).find((x) => !t.rx.info.test(x) && isFailure(t, x));
      if (sub !== undefined) out.push({ line: base + i + 1, text: sub });
    }
    return out;
  }

  function decide(ranked, qnorm, distinct, cal, top, related) {
    const entries = ranked.filter((x) => !x[1].startsWith("benign:"));
    if (!entries.length || qnorm <= 0) return [];
    const b = ranked.find((x) => x[1].startsWith("benign:"));
    const benign = b ? b[0] : 0;
    const best = entries[0][0];
    if (best / qnorm < cal.min_score || best <= benign * (1 + cal.benign_margin)
        || (distinct[entries[0][1]] || 0) < cal.min_distinct) return [];
    // the runner-up: the best entry not declared related to the best one (retrieval.decide)
    const near = new Set((related || {})[entries[0][1]] || []);
    const r2 = entries.slice(1).find((x) => !near.has(x[1]));
    const runner = r2 ? r2[0] : 0;
    if ((best - runner) / best < cal.min_margin) return [];
    return entries.slice(0, top).filter((x) => x[0] > benign).map((x) => ({ id: x[1], score: x[0], confidence: "likely" }));
  }

  // ---- ranking (triage/ranking.py) ------------------------------------------------------------------------------
  function rank(eng, scan, machine) {
    const facts = factsFromNotes(eng, scan.notes);
    const bonus = machine ? machine.bonus : {};
    // the log's own facts win; remember which came from the machine
    if (machine) for (const [k, v] of Object.entries(machine.facts)) {
      if (!(k in facts)) { facts[k] = v; (facts.from_machine = facts.from_machine || []).push(k); }
    }
    const res = results(scan);
    if (res.length) {
      for (const r of res) {
        let [delta, why] = adjust(eng, eng.profiles[r.id] || {}, facts);
        if (bonus[r.id]) { delta += bonus[r.id][0]; why = why.concat(bonus[r.id][1]); }
        if (delta || why.length) { r.score += delta; r.environment = why; }
      }
      // a diagnosis whose only line is a message several causes print is likely (demote): diagnoses first
      demote(eng, res, scan.notes);
    }
    // a page's message that no result carries, and no diagnosis: the page's causes are likely (pageOnly)
    pageOnly(eng, res, scan.notes);
    if (res.some((r) => r.standing === 0)) return res;            // a diagnosis (or a message's likely cause): the answer
    // no diagnosis (observations are worth knowing, not an answer): the second stage may still answer
    const lines = scan.notes[eng.retrieval.sample_name] || [];
    if (!eng.index || !reportsTrouble(eng, beyondObservations(eng, res, lines))) return res;
    const [ranked, qnorm, distinct] = scores(eng, tokens(eng, lines.join("\n")));
    const adjusted = [];
    for (const [s0, i] of ranked) {
      let s = s0;
      if (!i.startsWith("benign:")) {
        const [delta] = adjust(eng, eng.profiles[i] || {}, facts);
        s = s * (1 + (delta + (bonus[i] ? bonus[i][0] : 0)) / 100);
      }
      adjusted.push([s, i]);
    }
    adjusted.sort((a, b) => (b[0] - a[0]) || cmpStr(a[1], b[1]));
    const out = decide(adjusted, qnorm, distinct, eng.cal, 3, eng.retrieval.related);
    for (const r of out) {
      r.standing = 0;
      r.level = "likely";
      const why = adjust(eng, eng.profiles[r.id] || {}, facts)[1].concat(bonus[r.id] ? bonus[r.id][1] : []);
      if (why.length) r.environment = why;
    }
    // then the observations; an entry both likely and observed is listed once, as the observation (ranking.decide)
    const observed = new Set(res.map((r) => r.id));
    return out.filter((r) => !observed.has(r.id)).concat(res);
  }

  // ---- one message, several causes (triage/messages.py, triage/msgscan.py) ----------------------------------------
  function compileMessages(pages) {
    const rxOf = (x) => new RegExp(x.pattern, x.ignore_case ? "i" : "");
    return pages.map((p) => ({
      page: p, sigs: p.signatures.map(rxOf), causes: new Set(p.causes.map((c) => c.entry)),
      logs: [].concat(...p.causes.map((c) => c.evidence.filter((ev) => "pattern" in ev).map((ev) => [ev.id, rxOf(ev)]))),
    }));
  }

  function evidenceLines(r) { return [].concat(...(r.evidence || []).map((ev) => ev.lines)); }

  /** triage/messages.deciding_page: [compiled page, the message's line] or null. */
  function decidingPage(eng, results) {
    // a diagnosis, or an answer demoted to likely because its only line is the message (messages.answers_by_message)
    if (!results.length || !(results[0].level === "diagnosis" || "message_page" in results[0])) return null;
    const top = results[0];
    if (top.message_only) {     // a page's cause added for its message alone (pageOnly): the line is found later
      const m = eng.messages.find((x) => x.page.id === top.message_page);
      return m ? [m, null] : null;
    }
    for (const m of eng.messages) {
      const isMessage = (ln) => m.sigs.some((re) => re.test(ln.text));
      if (!m.causes.has(top.id) && !evidenceLines(top).some(isMessage)) continue;
      for (const r of results) {
        const ln = evidenceLines(r).find(isMessage);
        if (ln) return [m, ln];
      }
    }
    return null;
  }

  // ---- the level of an answer that only a multi-cause message names (triage/multicause.py) ---------------------
  function multicauseSpec(bundle) {
    const spec = bundle.multicause || {};
    return { prefix: spec.note_prefix, why: spec.why, genericWhy: spec.generic_why,
      genericPriority: spec.generic_priority };
  }

  /** entry id -> the ids of its generic signatures (ranking.Knowledge.generic: priority <= generic_priority) */
  function generic(sigs, prio) {
    const out = new Map();
    for (const s of sigs) if (s.priority <= prio) (out.get(s.entry) || out.set(s.entry, new Set()).get(s.entry)).add(s.id);
    return out;
  }

  /** multicause.generic_only: every signature that made r a diagnosis is generic */
  function genericOnly(eng, r, obs) {
    const sigs = (r.evidence || []).map((ev) => ev.signature).filter((id) => !obs.has(id));
    const gen = eng.generic.get(r.id) || new Set();
    return sigs.length > 0 && sigs.every((id) => gen.has(id));
  }

  /** entry id -> the ids of its observation signatures (ranking.Knowledge.observing) */
  function observing(sigs) {
    const out = new Map();
    for (const s of sigs) if (s.observation) (out.get(s.entry) || out.set(s.entry, new Set()).get(s.entry)).add(s.id);
    return out;
  }

  function noteName(eng, pageId, evId) { return `${eng.multicause.prefix}${pageId}/${evId}`; }
  function pageCauses(page) { return page.causes.length + (page.other_causes || []).length; }
  function logEvidence(page, entry) {
    return [].concat(...page.causes.filter((c) => entry === null || c.entry === entry)
      .map((c) => c.evidence.filter((ev) => "pattern" in ev)));
  }
  /** multicause.carried: the scan's matcher looks for every log evidence of the page */
  function carried(eng, m) { return logEvidence(m.page, null).every((ev) => noteName(eng, m.page.id, ev.id) in eng.noteCaps); }

  /** multicause.demote: a diagnosis whose every diagnosing line is the message of a page with several causes, and
   * none of whose evidence on that page is in the log, becomes likely; diagnoses first. */
  function demote(eng, res, notes) {
    const pages = eng.messages.filter((m) => carried(eng, m));
    for (const r of res) {
      if (r.level !== "diagnosis") continue;
      const obs = eng.observing.get(r.id) || new Set();
      let lines = [].concat(...(r.evidence || []).filter((ev) => !obs.has(ev.signature)).map((ev) => ev.lines));
      if (!lines.length) lines = evidenceLines(r);
      if (!lines.length) continue;
      const m = pages.find((p) => pageCauses(p.page) > 1 && lines.every((ln) => p.sigs.some((re) => re.test(ln.text))));
      if (m) {        // the page's evidence decides: the entry's own keeps the diagnosis
        if (logEvidence(m.page, r.id).some((ev) => (notes[noteName(eng, m.page.id, ev.id)] || []).length)) continue;
        const n = pageCauses(m.page);
        r.level = "likely";
        r.note = eng.multicause.why.replace("{n}", () => String(n)).replace("{title}", () => m.page.title);
        r.message_page = m.page.id;
      } else if (genericOnly(eng, r, obs)) {
        r.level = "likely";
        r.note = eng.multicause.genericWhy;
        r.generic = true;
      }
    }
    res.sort((a, b) => (a.standing - b.standing) || ((a.level !== "diagnosis") - (b.level !== "diagnosis"))
      || (b.score - a.score) || cmpStr(a.id, b.id));
    return res;
  }

  // ---- a page's message that no entry's signature names (triage/pageonly.py) ------------------------------------
  function pageonlySpec(bundle) {
    const spec = bundle.pageonly || {};
    return { prefix: spec.note_prefix, maxAdded: spec.max_added, why: spec.why, noneShown: spec.none_shown };
  }

  function pageNote(eng, pageId, i) { return `${eng.pageonly.prefix}${pageId}/${i}`; }

  /** pageonly.add: no diagnosis, and a page's message in the log that no result carries: its causes are likely
   * (at most max_added in all), ranked by their log evidence, after the likely answers and before the observations. */
  function pageOnly(eng, res, notes) {
    const spec = eng.pageonly;
    if (res.some((r) => r.level === "diagnosis")) return res;
    const pages = eng.messages.filter((m) => carried(eng, m) && m.page.signatures.every((_, i) => pageNote(eng, m.page.id, i) in eng.noteCaps));
    const added = [];
    const byId = new Map(res.map((r) => [r.id, r]));
    for (const m of pages) {
      const first = m.page.signatures.map((_, i) => notes[pageNote(eng, m.page.id, i)] || []).find((l) => l.length);
      if (!first) continue;
      const isMessage = (ln) => m.sigs.some((re) => re.test(ln.text));
      if (res.some((r) => r.message_page === m.page.id || evidenceLines(r).some(isMessage))) continue;
      // rankCauses's order over the log alone (no facts at this point), as pageonly._ranked
      const found = {};
      for (const c of m.page.causes) for (const ev of c.evidence) if ("pattern" in ev) found[ev.id] = notes[noteName(eng, m.page.id, ev.id)] || [];
      const ranked = rankCauses(m.page, found, null, null).causes.map((c) => ({ entry: c.entry,
        says: c.evidence.filter((i) => i.kind === "log" && i.state === "found").map((i) => i.says) }));
      for (const c of ranked) {
        if (added.length >= spec.maxAdded) break;
        let r = byId.get(c.entry);
        if (r && (r.level === "likely" || added.includes(r))) continue;
        // an observation of a cause (its condition is in the log) becomes this likely answer, its lines kept
        r = r || { id: c.entry, confidence: "likely" };
        const vals = { message: first[0], n: String(pageCauses(m.page)), shows: c.says.join("; ") || spec.noneShown, page: m.page.id };
        Object.assign(r, { score: c.says.length, standing: 0, level: "likely",
          note: spec.why.replace(/\{(message|n|shows|page)\}/g, (_, k) => vals[k]), message_page: m.page.id, message_only: true });
        added.push(r);
      }
    }
    const kept = res.filter((r) => !added.includes(r));
    res.length = 0;
    res.push(...kept);
    let at = res.findIndex((r) => r.standing !== 0);
    if (at < 0) at = res.length;
    res.splice(at, 0, ...added);
    return res;
  }

  /** triage/msgscan.find_evidence_text: evidence id -> its first lines in the text ({line, text[, source]});
   * message: the page's message's first line too, as message_rules.message_id. */
  function findEvidence(eng, m, text, source, message) {
    const found = {};
    const logs = message ? m.logs.concat(m.sigs.map((re) => [eng.messageId, re])) : m.logs;
    if (!logs.length) return found;
    const lines = text.split(eng.spec.breaks);
    for (let n = 0; n < lines.length; n++) {
      const subs = clean(capRaw(lines[n], eng.spec.rawCap), eng.spec);
      for (const [id, re] of logs) {
        if (found[id] && found[id].length >= eng.maxLines) continue;
        const sub = subs.find((x) => re.test(x));
        if (sub !== undefined) {
          const hit = { line: n + 1, text: sub };
          if (source) hit.source = source;
          (found[id] = found[id] || []).push(hit);
        }
      }
    }
    return found;
  }

  function factState(when, values) {
    if (!values) return ["unknown", []];
    const shown = when.map((c) => ({ fact: c.fact, holds: holds(c, values) }));
    if (shown.some((x) => x.holds === false)) return ["absent", shown];
    if (shown.some((x) => x.holds === null)) return ["unknown", shown];
    return ["found", shown];
  }

  /** triage/messages.rank: the page's causes ranked by the evidence found. */
  function rankCauses(page, found, values, line) {
    const causes = page.causes.map((cause, order) => {
      const items = cause.evidence.map((ev) => {
        const item = { id: ev.id, says: ev.says, says_zh: ev.says_zh };
        if ("pattern" in ev) {
          const lines = found[ev.id] || [];
          Object.assign(item, { kind: "log", state: lines.length ? "found" : "missing", lines: lines });
        } else {
          const [state, facts] = factState(ev.when, values);
          Object.assign(item, { kind: "facts", state: state, facts: facts });
        }
        return item;
      });
      const score = items.filter((i) => i.state === "found").length;
      const machine = items.filter((i) => i.state === "found" && i.kind === "facts").length;
      return { entry: cause.entry, score: score, machine: machine, order: order, evidence: items };
    });
    causes.sort((a, b) => (b.score - a.score) || (b.machine - a.machine) || (a.order - b.order));
    for (const c of causes) { delete c.machine; delete c.order; }
    return { id: page.id, title: page.title, title_zh: page.title_zh, line: line, causes: causes,
      other_causes: (page.other_causes || []).slice() };
  }

  /** The message block of a triaged text (cli/msgblock.py's), or null. */
  function messageBlock(eng, text, source, results, machineValues) {
    const hit = decidingPage(eng, results);
    if (!hit) return null;
    const found = findEvidence(eng, hit[0], text, source, hit[1] === null);
    let line = hit[1];
    if (line === null) {        // a cause added for the message alone (pageOnly): the message's first line
      const lines = found[eng.messageId];
      delete found[eng.messageId];
      if (!lines || !lines.length) return null;
      line = lines[0];
    }
    return rankCauses(hit[0].page, found, machineValues || null, line);
  }

  /** Both stages over a text (triage.run): the results, when nothing matched the first line that reports a
   * failure (null if none) -- what the page offers to search for --, and the message block (null if none).
   * machineValues: a facts file's values, or null. */
  function triageText(eng, text, source, machineValues) {
    const scan = newScan(eng);
    feedText(eng, scan, text, source);
    const out = finish(eng, scan, machineValues);
    out.message = messageBlock(eng, text, source, out.results, machineValues);   // reads the text again, as msgscan
    return out;
  }

  /** The answer of a scan fed so far (triageText's last step; the scan is left as it was, so feeding may go on).
   * The message block needs the text again: triageText adds it, and the worker once the whole log is checked. */
  function finish(eng, scan, machineValues) {
    const results = rank(eng, scan, machineValues ? machineOf(eng, machineValues) : null);
    const answered = results.some((r) => r.level === "diagnosis" || r.level === "likely");
    const first = answered ? null : firstFailureLine(eng, scan.notes[eng.retrieval.sample_name] || []);
    return { results: results, firstFailureLine: first };
  }

  function matchText(eng, text, source, machineValues) { return triageText(eng, text, source, machineValues).results; }

  function prepareRetrieval(bundle) {
    if (bundle.retrieval && !(bundle.retrieval.stop instanceof Set)) bundle.retrieval.stop = new Set(bundle.retrieval.stop);
    return bundle;
  }

  const api = {
    compile: (bundle) => compile(prepareRetrieval(bundle)), clean: (raw, spec) => clean(capRaw(raw, spec.rawCap), spec),
    matchText: matchText, triageText: triageText, tokens: tokens, newScan: newScan, feedLines: feedLines, finish: finish, inRange: inRange, readFacts: readFacts,
    logEncoding: logEncoding, decodeLog: decodeLog,
    // for the shared truth tables and the fuzz of tests/test_twins.py and tests/test_twins_fuzz.py
    holds: holds, reportsTrouble: reportsTrouble, firstFailureLine: firstFailureLine, machineOf: machineOf,
    unexplainedLines: unexplainedLines, messageBlock: messageBlock, finderScores: finderScores,
  };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else root.ErrbookTriage = api;
})(typeof self !== "undefined" ? self : globalThis);
