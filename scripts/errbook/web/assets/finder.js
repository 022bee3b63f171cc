/* The guided finder in the paste page: a port of scripts/errbook/triage/finder.py, step by step.
 * data: the bundle's `finder` part (its JS_SPEC: max_questions, short_list, unknown, unknown_label, log_chars,
 * gpu_facts, facets; and the data finder.bundle_data writes: vocabulary, entries). Pure: no DOM, no request.
 * find(data, answers, log, scores, machine) -> {question | null, shortlist, candidates, answers, inferred}, the
 * Python Result's fields; tests/test_twins_finder.py runs both on the same truth table and on the real bundle. */
(function (root) {
  "use strict";

  function cmpStr(a, b) { return a < b ? -1 : a > b ? 1 : 0; }

  const rxCache = new Map();
  function rx(p) { if (!rxCache.has(p)) rxCache.set(p, new RegExp(p, "m")); return rxCache.get(p); }   // re.MULTILINE

  /** The answers as given, or an error naming the choices (finder.check_answers). */
  function checkAnswers(data, answers) {
    const out = {};
    for (const [name, value] of Object.entries(answers || {})) {
      const f = data.vocabulary[name];
      if (!f) throw new Error(`no question '${name}' (one of: ${data.facets.join(", ")})`);
      const ids = f.values.map((v) => v.id);
      if (value !== data.unknown && (!ids.includes(value) || value === f.wildcard)) {
        throw new Error(`'${value}' is not an answer to ${name} (one of: ${ids.filter((v) => v !== f.wildcard).concat([data.unknown]).join(", ")})`);
      }
      out[name] = value;
    }
    return out;
  }

  function familyOfGfx(data, gfx) {
    for (const v of data.vocabulary.gpu.values) if (v.gfx !== null && rx(v.gfx).test(gfx)) return v.id;
    return null;
  }

  /** What the log and the machine's facts answer by themselves: facet -> [value, why] (finder.infer). */
  function infer(data, log, machine) {
    const out = {};
    for (const name of data.gpu_facts) {
      const gfx = (machine || {})[name];
      if (Array.isArray(gfx) && gfx.length) {
        const fams = new Set(gfx.map((g) => familyOfGfx(data, String(g))));
        if (fams.size === 1 && !fams.has(null)) out.gpu = [Array.from(fams)[0], `the facts file's ${name}: ${gfx.map(String).join(", ")}`];
        break;
      }
    }
    if (log) {
      const text = log.slice(0, data.log_chars);
      const hits = [];
      for (const v of data.vocabulary.happened.values) {
        let m = null;
        for (const p of v.log) { m = rx(p).exec(text); if (m) break; }
        if (m) hits.push([v.id, m[0].trim()]);
      }
      if (hits.length === 1) out.happened = [hits[0][0], `the log has the line: ${hits[0][1].slice(0, 120)}`];
    }
    return out;
  }

  function fits(data, e, name, value) {
    if (value === data.unknown) return true;
    const have = e.facets[name] || [];
    const w = data.vocabulary[name].wildcard;
    return have.includes(value) || (w !== null && have.includes(w));
  }

  function choices(data, cands, name) {
    const f = data.vocabulary[name];
    const out = [];
    for (const v of f.values) {
      if (v.id === f.wildcard) continue;
      const n = cands.filter((e) => fits(data, e, name, v.id)).length;
      if (n) out.push({ value: v.id, label: v.label, label_zh: v.label_zh, count: n });
    }
    out.push({ value: data.unknown, label: data.unknown_label[0], label_zh: data.unknown_label[1], count: cands.length });
    return out;
  }

  function expectedLeft(data, cs) {
    const counts = cs.filter((c) => c.value !== data.unknown).map((c) => c.count);
    const sum = counts.reduce((a, b) => a + b, 0);
    return sum ? counts.reduce((a, n) => a + n * n, 0) / sum : Infinity;
  }

  function nextQuestion(data, cands, settled, number) {
    let best = null;
    data.facets.forEach((name, rank) => {
      if (settled.has(name)) return;
      const cs = choices(data, cands, name);
      if (cs.every((c) => c.count === cands.length)) return;          // no answer would narrow anything
      const left = expectedLeft(data, cs);
      if (best === null || left < best.left || (left === best.left && rank < best.rank)) best = { left: left, rank: rank, cs: cs, name: name };
    });
    if (best === null) return null;
    const f = data.vocabulary[best.name];
    return { facet: best.name, text: f.question, text_zh: f.question_zh, number: number, choices: best.cs };
  }

  function specificity(e) { return (e.facets.component || []).length + (e.facets.happened || []).length; }

  function order(cands, scores) {
    const s = (e) => (scores && scores[e.id]) || 0;
    return cands.slice().sort((a, b) => (scores ? s(b) - s(a) : 0) || (specificity(a) - specificity(b)) || cmpStr(a.id, b.id));
  }

  /** finder.find: the next question, or (question null) the short list. */
  function find(data, answers, log, scores, machine) {
    const given = checkAnswers(data, answers);
    const inferred = {};
    for (const [k, v] of Object.entries(infer(data, log, machine))) if (!(k in given)) inferred[k] = v;
    const settled = {};
    for (const [k, v] of Object.entries(inferred)) settled[k] = v[0];
    Object.assign(settled, given);
    const cands = data.entries.filter((e) => Object.entries(settled).every(([k, v]) => fits(data, e, k, v)));
    const asked = Object.keys(given).length;
    let question = null;
    if (asked < data.max_questions && cands.length > data.short_list) question = nextQuestion(data, cands, new Set(Object.keys(settled)), asked + 1);
    const shortlist = order(cands, scores).slice(0, data.short_list).map((e) => ({
      id: e.id, title: e.title, title_zh: e.title_zh, class: e.class, check: e.check,
      score: scores ? Math.round((scores[e.id] || 0) * 1e4) / 1e4 : null,
    }));
    return { question: question, shortlist: shortlist, candidates: cands.length, answers: given, inferred: inferred };
  }

  /** finder.log_scores: each entry's BM25 score for the log (the first query_chars of it), with engine.js's index
   * and tokenizer. engineApi: engine.js's API; eng: its compiled bundle. */
  function logScores(engineApi, eng, data, text) { return engineApi.finderScores(eng, text, data.query_chars); }

  const api = { find: find, infer: infer, checkAnswers: checkAnswers, logScores: logScores };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else root.ErrbookFinder = api;
})(typeof self !== "undefined" ? self : globalThis);
