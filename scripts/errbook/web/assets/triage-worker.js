/* The paste page's matcher, off the main thread: a page that matches a slow pattern against a long line stays
 * responsive, and the page can stop this worker when its time budget is spent. Loads the same engine and
 * signature bundle as the page (both set their globals on `self`); nothing here makes a network request. */
/* global importScripts, ErrbookTriage, ErrbookFinder */
"use strict";
importScripts("signatures.js", "engine.js");
try { importScripts("finder.js"); } catch (e) { /* no guided finder: the page then asks no questions */ }
let eng = null;

self.onmessage = function (ev) {
  const m = ev.data || {};
  try {
    if (!eng) eng = ErrbookTriage.compile(self.ERRBOOK_BUNDLE);
    const t0 = Date.now();
    const r = ErrbookTriage.triageText(eng, String(m.text || ""), m.source || "", m.facts || null);
    const text = String(m.text || "");
    // the error lines no diagnosis explains (the CLI's --format markdown lists the same ones)
    const unexplained = ErrbookTriage.unexplainedLines(eng, text, r.results, 10);
    // no diagnosis: the guided finder orders its list by the log's similarity to each entry (finder.log_scores)
    const fnd = self.ERRBOOK_BUNDLE.finder;
    const scores = fnd && typeof ErrbookFinder !== "undefined" && !r.results.some((x) => x.level === "diagnosis")
      ? ErrbookFinder.logScores(ErrbookTriage, eng, fnd, text) : null;
    self.postMessage({ id: m.id, ok: true, results: r.results, message: r.message, first: r.firstFailureLine,
                       unexplained: unexplained, scores: scores, ms: Date.now() - t0 });
  } catch (e) {
    self.postMessage({ id: m.id, ok: false, error: String((e && e.message) || e) });
  }
};
self.postMessage({ ready: true });
